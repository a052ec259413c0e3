//! The seams every agent shares: one place where a model is called (events, usage, limits,
//! timeouts), run resources reaching tools, and the run's event sink given directly.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::compaction::{CompactionSummary, CompactionThreshold};
use actuator_agent::{
    AgentErrorKind, AgentState, RunContext, RunOptions, agent_fn,
    limits::{LimitKind, token_limit, turn_limit},
    react, run,
};
use actuator_events::{Event, EventLog, ModelEvent};
use actuator_model::{
    BoxFuture, ChatMessage, GenerateConfig, GenerateRequest, Model, ModelError, ModelOutput,
    ScriptedModel, StopReason,
};
use actuator_tool_core::{ToolArgs, ToolChoice, ToolContext, ToolDef, ToolFailure};
use common::{call, say, stopped, submit, with_usage};
use serde_json::json;

fn model_events(log: &EventLog) -> Vec<ModelEvent> {
    log.events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Model(m) => Some(*m),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn refusal_retries_are_generations_that_count_and_are_recorded() {
    // Two refusals retried, then an answer: three generations. The reference counts each.
    let script = || {
        ScriptedModel::new([
            stopped("no", StopReason::ContentFilter),
            stopped("still no", StopReason::ContentFilter),
            submit("ok"),
        ])
    };
    let log = EventLog::new();
    let agent = react()
        .model(Arc::new(script()))
        .retry_refusals(2)
        .build()
        .unwrap();
    let out = run(&agent, "q", RunOptions::new().events(log.clone()))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "ok");
    assert_eq!(model_events(&log).len(), 3, "every retry is a model event");

    // Under a turn limit of 2 the third generation is over it.
    let agent = react()
        .model(Arc::new(script()))
        .retry_refusals(2)
        .build()
        .unwrap();
    let out = run(&agent, "q", &[turn_limit(2)]).await.unwrap();
    let limit = out.limit.expect("the retries count as turns");
    assert_eq!(limit.kind, LimitKind::Turn);
    assert_eq!(limit.message, "Turn limit exceeded. value: 3; limit: 2");
}

#[tokio::test]
async fn a_summary_compaction_generates_through_the_run_context() {
    // The summary's generation is an event (with no tools offered) and its tokens count.
    let summarizer = ScriptedModel::named("summarizer", [with_usage(say("the summary"), 900, 100)]);
    let model = ScriptedModel::new([
        with_usage(call("", "noop", json!({})), 10, 10),
        with_usage(submit("done"), 10, 10),
    ]);
    let noop = ToolDef::builder("noop")
        .description("Does nothing.")
        .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
        .build()
        .unwrap();
    let strategy = CompactionSummary::new()
        .with_threshold(CompactionThreshold::Tokens(1))
        .model(Arc::new(summarizer));
    let agent = react()
        .model(Arc::new(model))
        .tools([noop])
        .compaction(Arc::new(strategy))
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = run(
        &agent,
        "q",
        RunOptions::new()
            .events(log.clone())
            .limits([token_limit(500)]),
    )
    .await
    .unwrap();
    let events = model_events(&log);
    assert!(
        events
            .iter()
            .any(|e| e.model == "summarizer" && e.tool_choice == ToolChoice::None),
        "the summary generation is recorded: {events:?}"
    );
    let limit = out.limit.expect("the summary's 1,000 tokens count");
    assert_eq!(limit.kind, LimitKind::Token);
}

/// A model that takes a long time.
struct Slow;
impl Model for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn generate<'a>(
        &'a self,
        _request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(say("late"))
        })
    }
}

#[tokio::test(start_paused = true)]
async fn the_generate_timeout_is_applied_where_the_model_is_called() {
    let agent = react()
        .model(Arc::new(Slow))
        .config(GenerateConfig::default().timeout(Duration::from_secs(5)))
        .build()
        .unwrap();
    let err = run(&agent, "q", &[]).await.unwrap_err();
    match &err.kind {
        AgentErrorKind::Model(ModelError::Timeout { after }) => {
            assert_eq!(*after, Duration::from_secs(5));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        err.to_string().contains("within its timeout of 5 seconds"),
        "{err}"
    );
}

#[tokio::test]
async fn a_custom_agent_gets_events_and_limits_from_generate() {
    // A hand-written agent: two generations through its context under a turn limit of 1.
    let model = Arc::new(ScriptedModel::new([say("one"), say("two")]));
    let agent = agent_fn(
        "custom",
        move |mut state: AgentState, cx: RunContext, _a| {
            let model = Arc::clone(&model);
            async move {
                for _ in 0..2 {
                    let out = cx
                        .generate(model.as_ref(), GenerateRequest::new(&state.messages))
                        .await
                        .map_err(|e| e.or_state(&state))?;
                    state.messages.push(ChatMessage::Assistant(Box::new(
                        out.message().cloned().unwrap(),
                    )));
                }
                Ok(state)
            }
        },
    );
    let log = EventLog::new();
    let out = run(
        &agent,
        "q",
        RunOptions::new()
            .events(log.clone())
            .limits([turn_limit(1)]),
    )
    .await
    .unwrap();
    assert_eq!(out.limit.unwrap().kind, LimitKind::Turn);
    // The partial state kept the first answer.
    assert_eq!(out.state.messages.last().unwrap().text(), "one");
    assert_eq!(model_events(&log).len(), 2);
}

#[derive(Debug)]
struct Workspace(String);

#[tokio::test]
async fn run_resources_reach_the_tools_of_the_run() {
    let whereami = ToolDef::builder("whereami")
        .description("Names the run's workspace.")
        .handler(|_a: ToolArgs, ctx: ToolContext| async move {
            let ws = ctx.extensions.get::<Workspace>().map(|w| w.0.clone());
            Ok::<_, ToolFailure>(ws.unwrap_or_else(|| "none".into()))
        })
        .build()
        .unwrap();
    let model = ScriptedModel::new([call("", "whereami", json!({})), submit("done")]);
    let agent = react()
        .model(Arc::new(model))
        .tools([whereami])
        .build()
        .unwrap();
    let out = run(
        &agent,
        "q",
        RunOptions::new().resource(Workspace("/work/run-7".into())),
    )
    .await
    .unwrap();
    let tool_message = out
        .state
        .messages
        .iter()
        .find_map(|m| {
            m.as_tool()
                .filter(|t| t.function.as_deref() == Some("whereami"))
        })
        .unwrap();
    assert_eq!(tool_message.content.text(), "/work/run-7");
}
