//! The tool events of calls that run agents name them: a handoff's names the agent handed off
//! to, an agent used as a tool's names the span of the run it started, and every event names
//! the span it ran in.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{AgentState, RunContext, agent_fn, react};
use actuator_events::{Event, EventLog};
use actuator_model::{ChatMessage, ModelOutput, ScriptedModel, ToolCall};
use actuator_multi::{as_tool, handoff};
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> ModelOutput {
    ModelOutput::for_tool_calls("", "", vec![ToolCall::new(format!("{name}_1"), name, args)])
}

fn replier(name: &'static str) -> actuator_agent::FnAgent {
    agent_fn(name, move |mut s: AgentState, _cx, _a| async move {
        s.messages
            .push(ChatMessage::assistant(format!("{name} says hi")));
        Ok(s)
    })
    .with_description("Replies.")
}

#[tokio::test]
async fn events_of_agent_running_calls_name_the_agent_and_every_event_its_span() {
    let top = react()
        .name("top")
        .no_prompt()
        .tools([
            as_tool(Arc::new(replier("answerer"))).build().unwrap(),
            handoff(Arc::new(replier("searcher"))).build().unwrap(),
        ])
        .model(Arc::new(ScriptedModel::new([
            call("answerer", json!({"input": "?"})),
            call("transfer_to_searcher", json!({})),
            call("submit", json!({"answer": "done"})),
        ])))
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = RunContext::with_events(log.clone())
        .run(&top, "Q?", ())
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "done");

    let spans: Vec<(String, String, String)> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::SpanBegin(s) => Some((s.kind, s.name, s.id)),
            _ => None,
        })
        .collect();
    let span_of = |kind: &str, name: &str| {
        spans
            .iter()
            .find(|(k, n, _)| k == kind && n == name)
            .map(|(_, _, id)| id.clone())
            .unwrap_or_else(|| panic!("no {kind} span {name}: {spans:?}"))
    };
    let top_span = span_of("agent", "top");
    assert_eq!(out.span_id, top_span, "a run reports its span");

    let events = log.tool_events();
    let by_function = |f: &str| {
        events
            .iter()
            .find(|e| &*e.function == f)
            .unwrap_or_else(|| panic!("no event for {f}: {events:?}"))
    };
    let answerer = by_function("answerer");
    assert_eq!(
        answerer.agent_span_id.as_deref(),
        Some(span_of("agent", "answerer").as_str())
    );
    assert_eq!(answerer.agent, None);
    let transfer = by_function("transfer_to_searcher");
    assert_eq!(transfer.agent.as_deref(), Some("searcher"));
    let submit = by_function("submit");
    assert_eq!(
        (submit.agent.as_deref(), submit.agent_span_id.as_deref()),
        (None, None)
    );
    for e in &events {
        assert_eq!(e.span_id.as_deref(), Some(top_span.as_str()), "{e:?}");
    }
}
