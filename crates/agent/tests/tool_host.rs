//! What a tool asks of an agent run through its `ToolContext`: its log entries are the run's
//! info events, and its sampling goes to the run's `SamplingModel` through the run's one
//! place a model is called (a model event, usage counted, limits applied).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, SamplingModel, react, run};
use actuator_events::{Event, EventLog};
use actuator_model::{ModelOutput, ScriptedModel};
use actuator_tool_core::{
    LogEntry, LogLevel, SamplingMessage, SamplingRequest, ToolArgs, ToolContext, ToolDef,
    ToolError, ToolFailure,
};
use common::*;

fn summarizer() -> ToolDef {
    ToolDef::builder("summarize")
        .description("Summarizes with the run's model.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            ctx.log(LogEntry::new(LogLevel::Debug, "detail nobody keeps"));
            ctx.log(LogEntry::new(LogLevel::Info, "summarizing").logger("summarizer"));
            let answer = ctx
                .sample(SamplingRequest::new(
                    [SamplingMessage::user("Summarize: a b c")],
                    50,
                ))
                .await
                .map_err(|e| ToolFailure::from(ToolError::new(e.to_string())))?;
            Ok::<_, ToolFailure>(format!("summary: {}", answer.text()))
        })
        .build()
        .unwrap()
}

fn agent() -> actuator_agent::react::ReactAgent {
    react()
        .model(Arc::new(ScriptedModel::new(vec![
            call("Summarizing.", "summarize", serde_json::json!({})),
            submit("done"),
        ])))
        .tools([summarizer()])
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_tools_logs_are_events_and_its_sampling_is_a_generation_of_the_run() {
    let sampler = ScriptedModel::named(
        "sampler",
        [ModelOutput::from_content("sampler", "abc in brief")],
    );
    let log = EventLog::new();
    let out = run(
        &agent(),
        "summarize",
        RunOptions::new()
            .limits([turn_limit(5)])
            .events(log.clone())
            .resource(SamplingModel(Arc::new(sampler))),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("done"));
    let events = log.events();
    let logs: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Info(i) if i.source.as_deref() == Some("log") => Some(i.message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(logs.len(), 1, "debug entries stay out: {logs:?}");
    assert!(
        logs[0].ends_with("summarizer info: summarizing"),
        "{logs:?}"
    );
    // The sampling was a generation of the run: its own model event, between the agent's two.
    let models: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Model(m) => Some(m.model.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(models.len(), 3, "{models:?}");
    assert_eq!(models[1], "sampler");
    let tool_text = out
        .state
        .messages
        .iter()
        .find_map(|m| match m {
            actuator_model::ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        })
        .unwrap();
    assert_eq!(tool_text, "summary: abc in brief");
}

#[tokio::test]
async fn sampling_without_a_sampling_model_is_an_error_saying_what_to_add() {
    let out = run(
        &agent(),
        "summarize",
        RunOptions::new().limits([turn_limit(5)]),
    )
    .await
    .unwrap();
    let tool_text = out
        .state
        .messages
        .iter()
        .find_map(|m| match m {
            actuator_model::ChatMessage::Tool(t) => t.error.as_ref().map(|e| e.message.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        tool_text.contains("put a SamplingModel in its resources"),
        "{tool_text}"
    );
}
