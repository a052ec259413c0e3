//! Helpers shared by the executor tests.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::future::Future;
use std::time::Duration;

use actuator_model::{
    ChatMessage, ChatMessageAssistant, MessageContent, MessageSource, ToolCall, new_id,
};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolOutput, ToolParams};
use serde_json::{Value, json};

/// A tool with one optional string parameter `s` (and any others given).
pub fn tool<F, Fut>(name: &str, parallel: bool, f: F) -> ToolDef
where
    F: Fn(ToolArgs, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolFailure>> + Send + 'static,
{
    ToolDef::builder(name)
        .description(format!("The {name} tool."))
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {
                    "s": {"type": "string", "description": "A string."},
                    "n": {"type": "integer", "description": "A number."}
                }
            }))
            .unwrap(),
        )
        .parallel(parallel)
        .handler(f)
        .build()
        .unwrap()
}

/// A tool that returns `text`.
pub fn constant(name: &str, parallel: bool, text: &'static str) -> ToolDef {
    tool(name, parallel, move |_a, _c| async move {
        Ok(ToolOutput::Text(text.into()))
    })
}

/// A tool that sleeps `n` ms (default 10) and echoes `s`.
pub fn sleeper(name: &str, parallel: bool) -> ToolDef {
    tool(name, parallel, |mut a, _c| async move {
        let n: Option<u64> = a.optional("n")?;
        let s: Option<String> = a.optional("s")?;
        tokio::time::sleep(Duration::from_millis(n.unwrap_or(10))).await;
        Ok(ToolOutput::Text(s.unwrap_or_default().into()))
    })
}

/// An assistant message calling `calls` as (function, arguments).
pub fn assistant(calls: &[(&str, Value)]) -> ChatMessage {
    let tool_calls = calls
        .iter()
        .enumerate()
        .map(|(i, (f, a))| ToolCall::new(format!("call_{i}"), *f, a.clone()))
        .collect();
    ChatMessage::Assistant(Box::new(ChatMessageAssistant {
        id: new_id(),
        content: MessageContent::Text("Let me use some tools.".into()),
        source: Some(MessageSource::Generate),
        metadata: None,
        tool_calls: Some(tool_calls),
        model: Some("test".into()),
    }))
}

/// A conversation ending with an assistant message making `calls`.
pub fn conversation(calls: &[(&str, Value)]) -> Vec<ChatMessage> {
    vec![ChatMessage::user("Please help."), assistant(calls)]
}

/// (content text, error kind, error message) of a tool message.
pub fn result(m: &ChatMessage) -> (String, Option<String>, Option<String>) {
    let t = m
        .as_tool()
        .unwrap_or_else(|| panic!("not a tool message: {m:?}"));
    (
        t.content.text(),
        t.error.as_ref().map(|e| e.kind.to_string()),
        t.error.as_ref().map(|e| e.message.clone()),
    )
}
