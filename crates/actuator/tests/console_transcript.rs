//! A real react run on a scripted model, printed by `ConsoleTranscript`: the user's question,
//! each turn, each call and its result or error, and the limit that ended the run.

#![cfg(all(feature = "macros", feature = "agent"))]
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::sync::{Arc, Mutex};

use actuator::agent::RunContext;
use actuator::model::{ModelOutput, ScriptedModel, ToolCall};
use actuator::prelude::*;
use serde_json::json;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_react_run_reads_as_a_transcript() {
    let turn = |text: &str, id: &str, args: serde_json::Value| {
        ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, "add", args)])
    };
    let model = ScriptedModel::new([
        turn("First the sum.", "call_1", json!({"x": 3, "y": 4})),
        turn("Again, wrongly.", "call_2", json!({"x": "seven", "y": 5})),
        turn("And again.", "call_3", json!({"x": 7, "y": 5})),
    ]);
    let agent = react()
        .name("calculator")
        .tools([add_tool()])
        .model(Arc::new(model))
        .build()
        .unwrap();
    let out = Captured::default();
    let transcript = Arc::new(ConsoleTranscript::to_writer(out.clone()));
    let cx = RunContext::with_events(transcript);
    // How the run reports its limit is the agent's business; the transcript shows it.
    let _ended = cx
        .run(&agent, "What is (3 + 4) + 5?", [turn_limit(2)])
        .await;
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], " user What is (3 + 4) + 5?", "{text}");
    assert_eq!(lines[1], "calculator First the sum.", "{text}");
    assert_eq!(lines[2], " call add(x=3, y=4)", "{text}");
    assert_eq!(lines[3], " tool add → 7", "{text}");
    assert_eq!(lines[4], "calculator Again, wrongly.", "{text}");
    assert_eq!(lines[5], " call add(x='seven', y=5)", "{text}");
    assert!(
        lines[6].starts_with(" tool add failed (parsing): "),
        "{text}"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("limit Turn limit exceeded"),
        "{text}"
    );
}
