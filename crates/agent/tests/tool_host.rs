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

fn deployer() -> ToolDef {
    ToolDef::builder("deploy")
        .description("Asks where to deploy.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            let schema = serde_json::json!({"type": "object", "properties": {
                "branch": {"type": "string", "default": "main"},
                "replicas": {"type": "integer", "default": 2},
            }});
            let answer = ctx
                .elicit(actuator_tool_core::ElicitationRequest::new(
                    "Deploy where?",
                    schema,
                ))
                .await
                .map_err(|e| ToolFailure::from(ToolError::new(e.to_string())))?;
            let content = answer
                .content
                .map_or(serde_json::Value::Null, serde_json::Value::Object);
            Ok::<_, ToolFailure>(format!("{} {content}", answer.action))
        })
        .build()
        .unwrap()
}

fn tool_result(out: &actuator_agent::AgentRun) -> String {
    out.state
        .messages
        .iter()
        .find_map(|m| match m {
            actuator_model::ChatMessage::Tool(t) => Some(
                t.error
                    .as_ref()
                    .map_or_else(|| t.content.text(), |e| e.message.clone()),
            ),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn a_tools_elicitation_goes_to_the_runs_handler_with_defaults_filled_in() {
    use actuator_agent::RunElicitation;
    use actuator_tool_core::{ElicitationRequest, ElicitationResult};
    let agent = || {
        react()
            .model(Arc::new(ScriptedModel::new(vec![
                call("Asking.", "deploy", serde_json::json!({})),
                submit("done"),
            ])))
            .tools([deployer()])
            .build()
            .unwrap()
    };
    let operator = RunElicitation(Arc::new(|asked: ElicitationRequest| async move {
        assert_eq!(asked.message, "Deploy where?");
        // The operator answers one field; the other takes its default.
        Ok(ElicitationResult::accept(serde_json::Map::from_iter([(
            "replicas".to_owned(),
            serde_json::json!(5),
        )])))
    }));
    let out = run(
        &agent(),
        "deploy",
        RunOptions::new().limits([turn_limit(5)]).resource(operator),
    )
    .await
    .unwrap();
    assert_eq!(
        tool_result(&out),
        r#"accept {"replicas":5,"branch":"main"}"#
    );

    // Without a handler the tool reads what to add.
    let out = run(
        &agent(),
        "deploy",
        RunOptions::new().limits([turn_limit(5)]),
    )
    .await
    .unwrap();
    assert!(
        tool_result(&out).contains("put a RunElicitation in its resources"),
        "{}",
        tool_result(&out)
    );
}
