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

use actuator::agent::{RunContext, react, react::AgentSubmit};
use actuator::model::{Model, ModelOutput, ScriptedModel, ToolCall};
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
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The providers' errors say what to do (which variable to set, ...): show them as
            // written, with their causes, not as Debug.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {}", actuator::tool_core::ErrorChain(&*e));
            }
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut model_name = None;
    let mut question = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--model" => model_name = Some(args.next().ok_or(USAGE)?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if question.is_none() => question = Some(arg),
            _ => return Err(USAGE.into()),
        }
    }
    let question = question.unwrap_or_else(|| "What is (3 + 4) × 5?".to_owned());
    let model: Arc<dyn Model> = match &model_name {
        // A missing key or an unknown provider is an error that says what to set.
        Some(name) => get_model(name)?,
        None => Arc::new(ScriptedModel::new(script())),
    };

    let transcript = Arc::new(Transcript::new());
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

    println!("{} {question}", transcript.paint("1;35", " user"));
    let cx = RunContext::with_events(transcript.clone());
    let result = cx.run(&agent, question.as_str(), ()).await?;
    println!(
        "\n{} {}",
        transcript.paint("1;32", "answer:"),
        result.state.output().completion()
    );
    Ok(())
}
