//! Quickstart: two `#[tool]` functions, a react agent on a scripted model (no API key), and a
//! transcript printed as the agent runs.
//!
//! Run with `cargo run --example quickstart`. Set `NO_COLOR=1` for plain text. With
//! `--features providers`, `-- --model PROVIDER/MODEL "question"` runs the same agent on a real
//! model (see the `agent` example).

mod support;

use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::{RunOptions, react, react::AgentSubmit};
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

const USAGE: &str = "usage: quickstart [--model PROVIDER/MODEL] [QUESTION]";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(e) => support::fail(&*e),
    }
}

async fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = support::Args::parse(USAGE)?;
    let question = match args.positional.as_slice() {
        [] => "What is (3 + 4) × 5?".to_owned(),
        [q] => q.clone(),
        _ => return Err(USAGE.into()),
    };
    // The scripted model unless `--model` names a real one (with `--features providers`).
    let model = args.model(|| Arc::new(ScriptedModel::new(script())))?;
    let transcript = Arc::new(ConsoleTranscript::new());

    let agent = react()
        .name("model")
        .prompt("You are a careful calculator. Use the tools for arithmetic.")
        .tools([add_tool(), multiply_tool()])
        .model(model)
        // The completion is the submitted answer alone.
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    transcript.user(&question);
    // Limits end a run that never submits; how it ended is `result.end`.
    let options = RunOptions::new()
        .limits(support::limits())
        .events(transcript.clone());
    let result = actuator::agent::run(&agent, question.as_str(), options).await?;

    let code = support::report(&result, &transcript);
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
    Ok(code)
}
