//! The quickstart's tools on any model: a react agent with `add` and `multiply`.
//!
//! ```sh
//! # A real model (reads OPENAI_API_KEY):
//! cargo run --example agent --features providers -- --model openai/gpt-4.1-mini "What is (3 + 4) × 5?"
//! # A local llama.cpp / llama-cpp-python server on port 8000:
//! LLAMA_CPP_PYTHON_BASE_URL=http://127.0.0.1:8000/v1 \
//!     cargo run --example agent --features providers -- --model llama-cpp-python/local "What is 3 + 4?"
//! # No --model: the scripted model, no key needed.
//! cargo run --example agent --features providers
//! ```
//!
//! Model names: `openai/…`, `anthropic/…`, `openai-api/<service>/…`, `vllm/…`, `ollama/…`,
//! `llama-cpp/…`, `llama-cpp-python/…` (see `actuator::providers::get_model`).

mod support;

use std::sync::Arc;

use std::process::ExitCode;

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

/// What the scripted model says when no `--model` is given.
fn script() -> Vec<ModelOutput> {
    let turn = |text: &str, id: &str, function: &str, args: serde_json::Value| {
        ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, function, args)])
    };
    vec![
        turn("First the sum.", "call_1", "add", json!({"x": 3, "y": 4})),
        turn(
            "Now the product.",
            "call_2",
            "multiply",
            json!({"x": 7, "y": 5}),
        ),
        turn(
            "(3 + 4) × 5 = 35.",
            "call_3",
            "submit",
            json!({"answer": "35"}),
        ),
    ]
}

const USAGE: &str = "usage: agent [--model PROVIDER/MODEL] [QUESTION]";

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
    // A missing key or an unknown provider is an error that says what to set.
    let model = args.model(|| Arc::new(ScriptedModel::new(script())))?;

    let transcript = Arc::new(ConsoleTranscript::new());
    let agent = react()
        .name("model")
        .prompt("You are a careful calculator. Use the tools for arithmetic.")
        .tools([add_tool(), multiply_tool()])
        .model(model)
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    transcript.user(&question);
    let options = RunOptions::new()
        .limits(support::limits())
        .events(transcript.clone());
    let result = actuator::agent::run(&agent, question.as_str(), options).await?;
    Ok(support::report(&result, &transcript))
}
