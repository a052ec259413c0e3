//! Helpers for the agent tests.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use actuator_model::{ChatMessage, ModelOutput, ModelUsage, StopReason, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use serde_json::{Value, json};

/// `add(x, y)`.
pub fn add_tool() -> ToolDef {
    ToolDef::builder("add")
        .description("Add two integers.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {
                    "x": {"type": "integer", "description": "First addend."},
                    "y": {"type": "integer", "description": "Second addend."}
                },
                "required": ["x", "y"]
            }))
            .unwrap(),
        )
        .handler(|mut a: ToolArgs, _c: ToolContext| async move {
            let x: i64 = a.required("x")?;
            let y: i64 = a.required("y")?;
            Ok::<_, ToolFailure>(x + y)
        })
        .build()
        .unwrap()
}

/// A turn calling `add(x, y)`.
pub fn call_add(x: i64, y: i64) -> ModelOutput {
    ModelOutput::for_tool_calls(
        "",
        "",
        vec![ToolCall::new(
            format!("add_{x}_{y}"),
            "add",
            json!({"x": x, "y": y}),
        )],
    )
}

/// A turn calling `submit(answer)`.
pub fn submit(answer: &str) -> ModelOutput {
    ModelOutput::for_tool_calls(
        "",
        "",
        vec![ToolCall::new(
            format!("submit_{answer}"),
            "submit",
            json!({"answer": answer}),
        )],
    )
}

/// A turn calling `name(args)` with some text.
pub fn call(text: &str, name: &str, args: Value) -> ModelOutput {
    ModelOutput::for_tool_calls(
        "",
        text,
        vec![ToolCall::new(format!("{name}_call"), name, args)],
    )
}

/// A text-only turn.
pub fn say(text: &str) -> ModelOutput {
    ModelOutput::from_content("", text)
}

/// A turn with a stop reason.
pub fn stopped(text: &str, reason: StopReason) -> ModelOutput {
    ModelOutput::from_content("", text).with_stop_reason(reason)
}

/// A turn that reports usage.
pub fn with_usage(out: ModelOutput, input: u64, output: u64) -> ModelOutput {
    out.with_usage(ModelUsage::new(input, output))
}

/// One line per message: `role: text`, with calls and errors.
pub fn transcript(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            ChatMessage::Assistant(a) => {
                let calls: Vec<String> = a.calls().iter().map(ToolCall::render).collect();
                match (a.content.text(), calls.is_empty(), a.tool_calls.is_some()) {
                    (t, true, false) => format!("assistant: {t}"),
                    (t, true, true) => format!("assistant: {t} []"),
                    (t, false, _) if t.is_empty() => format!("assistant: {}", calls.join(" ")),
                    (t, false, _) => format!("assistant: {t} {}", calls.join(" ")),
                }
            }
            ChatMessage::Tool(t) => match &t.error {
                Some(e) => format!(
                    "tool {}: error {}: {}",
                    t.function.as_deref().unwrap_or("?"),
                    e.kind,
                    e.message
                ),
                None => format!(
                    "tool {}: {}",
                    t.function.as_deref().unwrap_or("?"),
                    t.content.text()
                ),
            },
            other => format!("{}: {}", other.role(), other.text()),
        })
        .collect()
}

/// Every tool result follows the assistant message that called it, and every call is answered.
pub fn assert_paired(messages: &[ChatMessage]) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m {
            ChatMessage::Assistant(a) => {
                assert!(open.is_empty(), "unanswered calls {open:?} before {m:?}");
                open = a.calls().iter().map(|c| c.id.to_string()).collect();
            }
            ChatMessage::Tool(t) => {
                let id = t.tool_call_id.clone().unwrap();
                let pos = open
                    .iter()
                    .position(|o| **o == *id)
                    .unwrap_or_else(|| panic!("orphan tool result {id}"));
                open.remove(pos);
            }
            _ => assert!(open.is_empty(), "unanswered calls {open:?} before {m:?}"),
        }
    }
}
