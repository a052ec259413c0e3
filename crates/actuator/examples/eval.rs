//! An evaluation: 20 arithmetic questions, the quickstart's tools, a react agent on a model
//! that computes its answers (no API key), a progress display, and a log `inspect view` opens.
//!
//! Run with `cargo run --example eval --features eval [-- --log-dir DIR]` (default `logs`),
//! then `inspect view --log-dir DIR` (from `pip install inspect_ai`). With `--features
//! eval,providers -- --model PROVIDER/MODEL` the agent runs on a real model. It exits non-zero
//! when the evaluation did not succeed, printing the first sample's error.

mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::react;
use actuator::eval::scorers::{Location, MatchOptions, match_};
use actuator::eval::{Dataset, EvalOptions, Sample, Task, eval};
use actuator::model::{ChatMessage, FunctionModel, ModelOutput, ModelUsage, ToolCall};
use actuator::multi::as_solver;
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

/// A stand-in for a real model: it reads "What is X + Y?" or "What is X × Y?", calls the
/// matching tool, then submits the tool's answer.
fn arithmetic_model() -> FunctionModel {
    FunctionModel::new("mockllm/model", |messages, _tools| {
        let question = messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::User(u) => Some(u.content.text()),
                _ => None,
            })
            .unwrap_or_default();
        let numbers: Vec<i64> = question
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let result = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool(t) if t.error.is_none() => Some(t.content.text()),
            _ => None,
        });
        let (text, call) = match result {
            Some(answer) => (
                format!("The answer is {answer}."),
                ToolCall::new("submit_1", "submit", json!({"answer": answer})),
            ),
            None => {
                let tool = if question.contains('×') {
                    "multiply"
                } else {
                    "add"
                };
                let args = json!({"x": numbers.first().copied().unwrap_or(0), "y": numbers.get(1).copied().unwrap_or(0)});
                (
                    format!("Let me {tool}."),
                    ToolCall::new("call_1", tool, args),
                )
            }
        };
        let mut out = ModelOutput::for_tool_calls("mockllm/model", text, vec![call]);
        out.usage = Some(ModelUsage::new(120, 18));
        Ok(out)
    })
}

fn dataset() -> Dataset {
    let samples = (1..=20).map(|i: i64| {
        let (x, y) = (i * 3, i + 4);
        if i % 2 == 0 {
            Sample::new(format!("What is {x} × {y}?"), (x * y).to_string())
        } else {
            Sample::new(format!("What is {x} + {y}?"), (x + y).to_string())
        }
        .with_id(i)
    });
    Dataset::new(samples).with_name("arithmetic")
}

const USAGE: &str = "usage: eval [--model PROVIDER/MODEL] [--log-dir DIR]";

#[tokio::main]
async fn main() -> ExitCode {
    match try_main().await {
        Ok(code) => code,
        Err(e) => support::fail(&*e),
    }
}

#[allow(clippy::print_stderr)]
async fn try_main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = support::Args::parse(USAGE)?;
    let log_dir = PathBuf::from(args.log_dir.as_deref().unwrap_or("logs"));
    if let Some(other) = args.positional.first().or(args.flags.first()) {
        return Err(format!("unknown argument {other}; {USAGE}").into());
    }
    let model = args.model(|| Arc::new(arithmetic_model()))?;
    let agent = react()
        .name("calculator")
        .tools([add_tool(), multiply_tool()])
        .model(model)
        .build()?;
    let task = Task::new(
        "arithmetic",
        dataset(),
        Arc::new(as_solver(Arc::new(agent)).build()?),
    )
    .solver_name("react")
    // A real model that never submits stops here, and the sample says which limit it hit.
    .limits(support::limits())
    .scorer(match_(
        MatchOptions::default()
            .location(Location::End)
            .numeric(true),
    ));
    // The log names the model the samples called; progress shows retries as they happen.
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(8)
            .log_dir(&log_dir)
            .progress(true)
            .ctrl_c(true),
    )
    .await?;
    // How it went: the status, the scores, and when samples failed, the first error.
    if run.log.status != "success" || run.error_count > 0 {
        eprintln!("{run}");
        return Ok(ExitCode::FAILURE);
    }
    println!("{run}");
    if run.location.is_some() {
        println!("open it with: inspect view --log-dir {}", log_dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
