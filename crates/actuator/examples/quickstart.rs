//! Quickstart: two `#[tool]` functions, a react agent on a scripted model (no API key), and a
//! transcript printed as the agent runs.
//!
//! Run with `cargo run --example quickstart`. Set `NO_COLOR=1` for plain text.

mod support;

use std::sync::Arc;

use actuator::agent::{RunContext, react, react::AgentSubmit};
use actuator::model::{ModelOutput, ScriptedModel, ToolCall};
use actuator::prelude::*;
use serde_json::json;
use support::Transcript;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Multiply two integers.
///
/// # Arguments
/// * `x` - First factor.
/// * `y` - Second factor.
#[tool]
async fn multiply(x: i64, y: i64) -> Result<i64, ToolError> {
    x.checked_mul(y)
        .ok_or_else(|| ToolError::new("The product does not fit in 64 bits."))
}

/// What the scripted model says, turn by turn. A real model would decide this itself.
fn script() -> Vec<ModelOutput> {
    let turn = |text: &str, id: &str, function: &str, args: serde_json::Value| {
        ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, function, args)])
    };
    vec![
        turn("First the sum.", "call_1", "add", json!({"x": 3, "y": 4})),
        // A mistake: the model passes a word where a number is needed.
        turn(
            "Now the product.",
            "call_2",
            "multiply",
            json!({"x": "seven", "y": 5}),
        ),
        turn(
            "Let me fix that.",
            "call_3",
            "multiply",
            json!({"x": 7, "y": 5}),
        ),
        turn(
            "(3 + 4) × 5 = 35.",
            "call_4",
            "submit",
            json!({"answer": "35"}),
        ),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let transcript = Arc::new(Transcript::new());

    let agent = react()
        .name("model")
        .prompt("You are a careful calculator. Use the tools for arithmetic.")
        .tools([add_tool(), multiply_tool()])
        .model(Arc::new(ScriptedModel::new(script())))
        // The completion is the submitted answer alone.
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    let question = "What is (3 + 4) × 5?";
    println!("{} {question}", transcript.paint("1;35", " user"));
    let cx = RunContext::with_events(transcript.clone());
    let result = cx.run(&agent, question, ()).await?;

    println!(
        "\n{} {}",
        transcript.paint("1;32", "answer:"),
        result.state.output().completion()
    );
    println!(
        "({} messages in the conversation, {} tool calls)",
        result.state.messages.len(),
        result
            .state
            .messages
            .iter()
            .filter(|m| m.as_tool().is_some())
            .count()
    );
    Ok(())
}
