//! Actuator: `execute_tools` with an event log, as W2 in `crates/exec/benches/execute.rs`.

use actuator_events::EventLog;
use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::ToolDef;
use actuator_tool_macros::tool;
use serde_json::Value;

use crate::Outcome;

/// The name the benchmark table and the behaviour table give this path.
pub const FRAMEWORK: &str = "Actuator `execute_tools`";

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
pub async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// `[system, user, assistant(text, [add(arguments)])]`, as the W2 bench builds it.
pub fn conversation(arguments: Value) -> Vec<ChatMessage> {
    let mut assistant = ChatMessageAssistant::new("Let me add those.");
    assistant.tool_calls = Some(vec![ToolCall::new("call_1", "add", arguments)]);
    vec![
        ChatMessage::system("You are a helpful assistant."),
        ChatMessage::user("What is 1 + 2?"),
        ChatMessage::from(assistant),
    ]
}

/// The tools of the call: `add` alone.
pub fn tools() -> [ToolDef; 1] {
    [add_tool()]
}

/// Options with a fresh recording event sink (the W2 bench makes one per sample).
pub fn options_with_events() -> ExecuteOptions {
    ExecuteOptions::default().events(EventLog::new())
}

/// Options with a fresh event log that keeps completed calls only, as an evaluation's log
/// does (it declines the event each call emits when it starts).
pub fn options_with_results_only() -> ExecuteOptions {
    ExecuteOptions::default().events(EventLog::results_only())
}

/// Options with no event sink: nothing is recorded (a run without a log or subscriber).
pub fn options_without_events() -> ExecuteOptions {
    ExecuteOptions::default()
}

/// What `execute_tools` makes of `add` called with `arguments` (JSON text, parsed as the
/// provider layer parses it before the executor sees it).
pub async fn outcome(arguments: &str) -> Outcome {
    let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let result = execute_tools(&conversation(arguments), &tools(), &options_with_events()).await;
    let messages = match result {
        Ok(result) => result.messages,
        Err(error) => {
            return Outcome {
                is_error: true,
                text: format!("execute_tools failed: {error}"),
            };
        }
    };
    match messages.first() {
        Some(ChatMessage::Tool(message)) => Outcome {
            is_error: message.error.is_some(),
            text: match &message.error {
                Some(error) => format!("{}: {}", error.kind.as_str(), error.message),
                None => message.content.text(),
            },
        },
        _ => Outcome {
            is_error: true,
            text: "execute_tools answered with no tool message".to_owned(),
        },
    }
}
