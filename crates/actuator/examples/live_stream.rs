//! A terminal view of a run as it happens: text printed as the model streams it, the calls
//! each agent makes, and a sub-agent's work indented under the call that started it, all from
//! one `EventStream` of the run.
//!
//! ```sh
//! # The scripted models, no key needed (they stream their text a word at a time):
//! cargo run --example live_stream --features macros,multi
//! # A real model for the lead (its provider streams because the view wants the deltas):
//! cargo run --example live_stream --features macros,multi,providers -- --model openai/gpt-4.1-mini
//! ```

mod support;

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::{RunOptions, react};
use actuator::events::{Event, EventStream, RunEvent, StreamEvent};
use actuator::model::{ModelOutput, ScriptedModel, ToolCall};
use actuator::prelude::*;
use serde_json::json;

/// Look a word up in the glossary.
///
/// # Arguments
/// * `word` - The word.
#[tool]
async fn define(word: String) -> String {
    match word.as_str() {
        "delta" => "A small piece of a stream, to append to what came before.".into(),
        other => format!("No entry for {other}."),
    }
}

fn call(text: &str, id: &str, function: &str, args: serde_json::Value) -> ModelOutput {
    ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, function, args)])
}

/// The researcher looks the word up and answers.
fn researcher() -> Result<impl Agent + use<>, Box<dyn std::error::Error>> {
    let model = ScriptedModel::named(
        "researcher",
        [
            call(
                "Let me check the glossary.",
                "call_r1",
                "define",
                json!({"word": "delta"}),
            ),
            call(
                "A delta is a small piece of a stream.",
                "call_r2",
                "submit",
                json!({"answer": "A delta is a small piece of a stream, appended to what came before."}),
            ),
        ],
    );
    Ok(react()
        .name("researcher")
        .description("Finds out what a word means.")
        .no_prompt()
        .tools([define_tool()])
        .model(Arc::new(model))
        .build()?)
}

fn lead_script() -> Vec<ModelOutput> {
    vec![
        call(
            "I will ask the researcher what a delta is.",
            "call_1",
            "researcher",
            json!({"input": "What is a delta?"}),
        ),
        call(
            "The researcher says a delta is a small piece of a stream, appended to what came before.",
            "call_2",
            "submit",
            json!({"answer": "A small piece of a stream."}),
        ),
    ]
}

const USAGE: &str = "usage: live_stream [--model PROVIDER/MODEL] [QUESTION]";

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
        [] => "What is a delta, in streaming?".to_owned(),
        [q] => q.clone(),
        _ => return Err(USAGE.into()),
    };
    let model = args.model(|| Arc::new(ScriptedModel::named("lead", lead_script())))?;
    let lead = react()
        .name("lead")
        .prompt("Answer with the researcher's help.")
        .tools([as_tool(researcher()?).build()?])
        .model(model)
        .build()?;

    let (sink, stream) = EventStream::new();
    // The view reads while the run goes on; it never holds the run up (a slow terminal
    // loses deltas, which the view repairs from each finished generation).
    let view = tokio::spawn(show(stream));
    let options = RunOptions::new().limits(support::limits()).events(sink);
    let result = actuator::agent::run(&lead, question.as_str(), options).await;
    view.await?;
    let result = result?;
    println!("\nanswer: {}", result.state.output().completion());
    Ok(ExitCode::SUCCESS)
}

/// Prints the run's events as they arrive, each agent indented by how deep it runs.
async fn show(mut stream: EventStream) {
    let mut depth: HashMap<Arc<str>, usize> = HashMap::new();
    // The generation being printed, and whether its text had holes.
    let mut streaming: Option<u64> = None;
    let mut holes = false;
    let mut out = std::io::stdout();
    while let Some(RunEvent {
        event,
        correlation,
        deltas_dropped,
        ..
    }) = stream.recv().await
    {
        holes |= deltas_dropped > 0;
        let level = correlation
            .run_id
            .as_ref()
            .and_then(|r| depth.get(r))
            .copied()
            .unwrap_or(0);
        let indent = "    ".repeat(level);
        match &event {
            Event::SpanBegin(b) if b.kind == "agent" => {
                let level = b
                    .parent_id
                    .as_deref()
                    .and_then(|p| depth.get(p))
                    .map_or(0, |d| d + 1);
                depth.insert(Arc::from(b.id.as_str()), level);
                let indent = "    ".repeat(level);
                match &b.tool_call_id {
                    Some(call) => println!("{indent}── {} (for {call}) ──", b.name),
                    None => println!("{indent}── {} ──", b.name),
                }
            }
            Event::ModelStream(s) => match &s.stream {
                StreamEvent::Text { text } => {
                    if streaming != Some(s.generation) {
                        streaming = Some(s.generation);
                        print!("{indent}{}: ", correlation.agent.as_deref().unwrap_or("?"));
                    }
                    print!("{text}");
                    let _ = out.flush();
                }
                StreamEvent::Retry { attempt } => {
                    println!(" [retrying: attempt {attempt}]");
                    streaming = None;
                }
                _ => {}
            },
            Event::Model(m) => {
                let text = m
                    .output
                    .as_ref()
                    .map(|o| o.completion())
                    .unwrap_or_default();
                let streamed = streaming.is_some() && streaming == m.generation;
                if !streamed && !text.is_empty() {
                    // A provider that did not stream: the whole text at once.
                    print!(
                        "{indent}{}: {text}",
                        correlation.agent.as_deref().unwrap_or("?")
                    );
                } else if holes {
                    print!("\n{indent}(in full: {text})");
                }
                println!();
                streaming = None;
                holes = false;
            }
            Event::Tool(t) => {
                let result = t.result.text();
                println!(
                    "{indent}  ↳ {}({}) → {}",
                    t.function,
                    t.arguments,
                    result.trim()
                );
            }
            _ => {}
        }
    }
    let lost = stream.lost();
    if lost.deltas > 0 || lost.events > 0 {
        println!(
            "(the view fell behind: {} deltas, {} events not shown)",
            lost.deltas, lost.events
        );
    }
}
