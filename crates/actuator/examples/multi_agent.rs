//! Multi-agent: a supervisor that hands the conversation to a researcher (`handoff`) and calls
//! a calculator agent like a function (`as_tool`), all on scripted models.
//!
//! Run with `cargo run --example multi_agent`.

mod support;

use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::{
    RunOptions, react,
    react::{AgentPrompt, AgentSubmit},
};
use actuator::model::{ModelOutput, ScriptedModel, ToolCall};
use actuator::multi::{as_tool, handoff};
use actuator::prelude::*;
use serde_json::json;

/// Look up a fact in the (tiny, built-in) encyclopedia.
///
/// # Arguments
/// * `topic` - What to look up.
#[tool]
async fn lookup(topic: String) -> Result<String, ToolError> {
    match topic.to_lowercase().as_str() {
        "eiffel tower" => Ok("The Eiffel Tower is 330 metres tall.".into()),
        "great pyramid" => Ok("The Great Pyramid of Giza is 138.5 metres tall.".into()),
        other => Err(ToolError::new(format!("No entry for '{other}'."))),
    }
}

/// Subtract one number from another.
///
/// # Arguments
/// * `a` - The number to subtract from.
/// * `b` - The number to subtract.
#[tool]
async fn subtract(a: f64, b: f64) -> f64 {
    a - b
}

fn turn(text: &str, id: &str, function: &str, args: serde_json::Value) -> ModelOutput {
    ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, function, args)])
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(e) => support::fail(&*e),
    }
}

const USAGE: &str = "usage: multi_agent [--model PROVIDER/MODEL] [QUESTION]";

async fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = support::Args::parse(USAGE)?;
    // With `--model`, every agent here runs on that model instead of its script.
    let model = |script: Vec<ModelOutput>| args.model(|| Arc::new(ScriptedModel::new(script)));
    let transcript = Arc::new(ConsoleTranscript::new());

    // The researcher looks things up, then reports back.
    let researcher = react()
        .name("researcher")
        .description("Finds facts in the encyclopedia.")
        .tools([lookup_tool()])
        .model(model(vec![
            turn("", "r1", "lookup", json!({"topic": "Eiffel Tower"})),
            turn("", "r2", "lookup", json!({"topic": "Great Pyramid"})),
            turn(
                "Eiffel Tower: 330 m. Great Pyramid: 138.5 m.",
                "r3",
                "submit",
                json!({"answer": "330 and 138.5 metres"}),
            ),
        ])?)
        .build()?;

    // The calculator is called like a function, on one input, in isolation.
    let calculator = react()
        .name("calculator")
        .description("Does arithmetic on request.")
        .tools([subtract_tool()])
        .model(model(vec![
            turn("", "c1", "subtract", json!({"a": 330, "b": 138.5})),
            turn("", "c2", "submit", json!({"answer": "191.5"})),
        ])?)
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    let supervisor = react()
        .name("supervisor")
        .prompt(AgentPrompt::instructions(
            "You coordinate a researcher and a calculator.",
        ))
        .tools([
            handoff(Arc::new(researcher)).build()?,
            as_tool(Arc::new(calculator)).build()?,
        ])
        .model(model(vec![
            turn(
                "Let me get the heights.",
                "s1",
                "transfer_to_researcher",
                json!({}),
            ),
            turn(
                "Now the difference.",
                "s2",
                "calculator",
                json!({"input": "What is 330 - 138.5?"}),
            ),
            turn(
                "The Eiffel Tower is 191.5 m taller.",
                "s3",
                "submit",
                json!({"answer": "191.5 metres"}),
            ),
        ])?)
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    let question = match args.positional.as_slice() {
        [] => "How much taller is the Eiffel Tower than the Great Pyramid?".to_owned(),
        [q] => q.clone(),
        _ => return Err(USAGE.into()),
    };
    transcript.user(&question);
    let options = RunOptions::new()
        .limits(support::limits())
        .events(transcript.clone());
    let result = actuator::agent::run(&supervisor, question.as_str(), options).await?;

    println!(
        "\n{}",
        transcript.paint("1", "The supervisor's conversation:")
    );
    for m in &result.state.messages {
        let calls: Vec<String> = m
            .as_assistant()
            .map(|a| a.calls().iter().map(ToolCall::render).collect())
            .unwrap_or_default();
        let text = m.text();
        let shown = if text.chars().count() > 70 {
            format!("{}…", text.chars().take(70).collect::<String>())
        } else {
            text
        };
        println!(
            "  {:<9} {} {}",
            m.role(),
            shown.replace('\n', " "),
            calls.join(" ")
        );
    }
    Ok(support::report(&result, &transcript))
}
