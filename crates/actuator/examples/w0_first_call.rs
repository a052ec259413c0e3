//! W0 of the benchmarks (the Python reference's `w0_startup.py` times
//! `python -c 'import inspect_ai.agent'`): from process start to the first tool call.
//!
//! Defines `add` with `#[tool]`, starts a current-thread Tokio runtime, lands one call of it
//! through `execute_tools` (schema built, arguments validated against it, deserialized, the
//! function called, the tool message built), prints the result and exits. `cargo xtask bench`
//! spawns the release build of this example many times and reports the median wall time.
//!
//! `w0_first_call --floor` exits at once: the same binary's load and exit, the floor.
//!
//! Run with `cargo run --release --example w0_first_call`.

use actuator::exec::{ExecuteOptions, execute_tools};
use actuator::model::{ChatMessage, ChatMessageAssistant, ToolCall};
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--floor") {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new(
        "call_1",
        "add",
        json!({"x": 1, "y": 2}),
    )]);
    let messages = [ChatMessage::Assistant(Box::new(assistant))];
    let result = runtime.block_on(execute_tools(
        &messages,
        &[add_tool()],
        &ExecuteOptions::default(),
    ))?;
    println!("{}", result.messages[0].text());
    Ok(())
}
