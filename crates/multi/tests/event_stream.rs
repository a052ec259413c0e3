//! One subscriber sees a run's whole tree: the deltas and events of agents used as tools and
//! handed off to carry the run, span, parent span, agent and tool call they belong to.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{AgentState, RunOptions, agent_fn, react, run};
use actuator_events::{Correlation, Event, EventStream, RunEvent, StreamEvent};
use actuator_model::{GenerateRequest, ModelOutput, ScriptedModel, ToolCall};
use actuator_multi::{as_tool, handoff};
use serde_json::{Value, json};

fn call(name: &str, args: Value) -> ModelOutput {
    ModelOutput::for_tool_calls("", "", vec![ToolCall::new(format!("{name}_1"), name, args)])
}

/// An agent that asks its own (streaming) model once.
fn asker(name: &'static str) -> actuator_agent::FnAgent {
    let model = Arc::new(ScriptedModel::new([ModelOutput::from_content(
        "",
        format!("{name} says hi"),
    )]));
    agent_fn(name, move |mut s: AgentState, cx, _a| {
        let model = Arc::clone(&model);
        async move {
            let out = cx
                .generate(&*model, GenerateRequest::new(&s.messages))
                .await?;
            s.messages
                .push(actuator_model::ChatMessage::Assistant(Box::new(
                    out.message().unwrap().clone(),
                )));
            Ok(s)
        }
    })
    .with_description("Answers.")
}

/// The text each agent streamed, and the place its deltas had (all of one agent's alike).
fn streamed_by(events: &[RunEvent], agent: &str) -> (String, Arc<Correlation>) {
    let mut text = String::new();
    let mut place = None;
    for e in events {
        if let Event::ModelStream(s) = &e.event
            && e.correlation.agent.as_deref() == Some(agent)
        {
            if let StreamEvent::Text { text: t } = &s.stream {
                text.push_str(t);
            }
            match &place {
                None => place = Some(Arc::clone(&e.correlation)),
                Some(p) => assert_eq!(p, &e.correlation),
            }
        }
    }
    (
        text,
        place.unwrap_or_else(|| panic!("{agent} streamed nothing")),
    )
}

fn span_id(events: &[RunEvent], kind: &str, name: &str) -> String {
    events
        .iter()
        .find_map(|e| match &e.event {
            Event::SpanBegin(b) if b.kind == kind && b.name == name => Some(b.id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {kind} span {name}"))
}

#[tokio::test]
async fn nested_agents_events_carry_the_run_span_agent_and_call_that_place_them() {
    let top = react()
        .name("top")
        .no_prompt()
        .tools([
            as_tool(Arc::new(asker("answerer"))).build().unwrap(),
            handoff(Arc::new(asker("searcher"))).build().unwrap(),
        ])
        .model(Arc::new(ScriptedModel::new([
            call("answerer", json!({"input": "?"})),
            call("transfer_to_searcher", json!({})),
            call("submit", json!({"answer": "done"})),
        ])))
        .build()
        .unwrap();
    let (sink, mut stream) = EventStream::new();
    let reader = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(e) = stream.recv().await {
            events.push(e);
        }
        events
    });
    let out = run(&top, "Q?", RunOptions::new().events(sink))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "done");
    let events = reader.await.unwrap();

    let top_span = span_id(&events, "agent", "top");
    assert_eq!(top_span, out.span_id);
    let answerer_span = span_id(&events, "agent", "answerer");
    let handoff_span = span_id(&events, "handoff", "searcher");
    let searcher_span = span_id(&events, "agent", "searcher");

    // The agent used as a tool: its run, under the call that started it.
    let (text, place) = streamed_by(&events, "answerer");
    assert_eq!(text, "answerer says hi");
    assert_eq!(place.run_id.as_deref(), Some(answerer_span.as_str()));
    assert_eq!(place.span_id.as_deref(), Some(answerer_span.as_str()));
    assert_eq!(place.parent_span_id.as_deref(), Some(top_span.as_str()));
    assert_eq!(place.tool_call_id.as_deref(), Some("answerer_1"));

    // The agent handed off to: its run inside the handoff span, under the transfer call.
    let (text, place) = streamed_by(&events, "searcher");
    assert_eq!(text, "searcher says hi");
    assert_eq!(place.run_id.as_deref(), Some(searcher_span.as_str()));
    assert_eq!(place.parent_span_id.as_deref(), Some(handoff_span.as_str()));
    assert_eq!(
        place.tool_call_id.as_deref(),
        Some("transfer_to_searcher_1")
    );

    // The outer agent's own deltas (its calls' arguments) are the outer run's.
    let (_, place) = streamed_by(&events, "top");
    assert_eq!(place.run_id.as_deref(), Some(top_span.as_str()));
    assert!(place.tool_call_id.is_none());

    // Every model event follows its own deltas and sits where they did.
    for (i, e) in events.iter().enumerate() {
        if let Event::Model(m) = &e.event {
            let generation = m.generation.unwrap();
            let deltas: Vec<&RunEvent> = events[..i]
                .iter()
                .filter(|d| matches!(&d.event, Event::ModelStream(s) if s.generation == generation))
                .collect();
            assert!(!deltas.is_empty(), "no deltas before {m:?}");
            assert!(deltas.iter().all(|d| d.correlation == e.correlation));
        }
    }
    // The calls' events are the outer run's: the tool call ids lead to the nested runs.
    let calls: Vec<&RunEvent> = events
        .iter()
        .filter(|e| matches!(&e.event, Event::Tool(_)))
        .collect();
    assert_eq!(calls.len(), 3);
    assert!(
        calls
            .iter()
            .all(|e| e.correlation.run_id.as_deref() == Some(top_span.as_str()))
    );
}
