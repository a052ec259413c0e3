//! A subscriber that reads nothing until the run is over does not hold the run up: the run
//! completes, every completed event reaches the subscriber in order, and the deltas the
//! bounded buffer had no room for are dropped and counted.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actuator_agent::{RunOptions, react, run};
use actuator_events::{Event, EventLog, EventSink, EventStream, StreamSink};
use actuator_model::{ModelOutput, ScriptedModel, ToolCall};
use serde_json::json;

/// Sends each event to the subscriber and keeps a copy, counting the deltas.
struct Tee {
    stream: Arc<StreamSink>,
    log: Arc<EventLog>,
    deltas: AtomicU64,
}

impl EventSink for Tee {
    fn emit(&self, event: Event) {
        self.emit_in(None, event);
    }

    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        if matches!(&event, Event::ModelStream(s) if s.stream.is_delta()) {
            self.deltas.fetch_add(1, Ordering::Relaxed);
        } else {
            self.log.emit(event.clone());
        }
        self.stream.emit_in(span_id, event);
    }

    fn wants_model_stream(&self) -> bool {
        self.stream.wants_model_stream()
    }
}

#[tokio::test]
async fn a_stalled_subscriber_loses_deltas_counted_and_no_completed_event() {
    let words = "one two three four five six seven eight nine ten";
    let mut outputs: Vec<ModelOutput> = (0..5)
        .map(|n| {
            let mut out = ModelOutput::from_content("", words);
            out.choices[0].message.tool_calls = Some(vec![ToolCall::new(
                format!("call_{n}"),
                "think",
                json!({"thought": "hm"}),
            )]);
            out
        })
        .collect();
    outputs.push(ModelOutput::for_tool_calls(
        "",
        "",
        vec![ToolCall::new("done", "submit", json!({"answer": "ok"}))],
    ));
    let agent = react()
        .name("worker")
        .no_prompt()
        .tools([actuator_tool_core::ToolDef::builder("think")
            .description("Thinks.")
            .parameters(
                actuator_tool_core::ToolParams::from_value(&json!({
                    "properties": {"thought": {"type": "string", "description": "A thought."}},
                    "required": ["thought"]
                }))
                .unwrap(),
            )
            .handler(|_args, _ctx| async { Ok::<_, actuator_tool_core::ToolFailure>("ok") })
            .build()
            .unwrap()])
        .model(Arc::new(ScriptedModel::new(outputs)))
        .build()
        .unwrap();
    let (stream_sink, mut stream) = EventStream::bounded(10_000, 3);
    let tee = Arc::new(Tee {
        stream: stream_sink,
        log: EventLog::new(),
        deltas: AtomicU64::new(0),
    });
    // Nobody reads while the run goes on.
    let out = run(&agent, "go", RunOptions::new().events(tee.clone()))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "ok");
    let (log, deltas) = (tee.log.clone(), tee.deltas.load(Ordering::Relaxed));
    drop(tee);

    let mut completed = Vec::new();
    let (mut received, mut reported) = (0, 0);
    while let Some(e) = stream.recv().await {
        reported += e.deltas_dropped;
        if matches!(&e.event, Event::ModelStream(s) if s.stream.is_delta()) {
            received += 1;
        } else {
            completed.push(e.event);
        }
    }
    // Every completed event, in order.
    assert_eq!(completed, log.events());
    // 5 turns of 10 words and a call each, and the submission: only 3 had room.
    assert_eq!(deltas, 5 * 11 + 1);
    assert_eq!(received, 3);
    let lost = stream.lost();
    assert_eq!((lost.deltas, lost.events), (deltas - 3, 0));
    // The events after each hole say how many deltas it swallowed (the last hole has no event
    // after it only if the run ended on deltas, which it does not).
    assert_eq!(reported, lost.deltas);
}

#[tokio::test]
async fn a_tools_progress_and_a_limit_are_placed_in_the_run_that_emitted_them() {
    use actuator_agent::limits::turn_limit;
    use actuator_tool_core::{ProgressReport, ToolContext, ToolDef, ToolFailure, ToolParams};
    let slow = ToolDef::builder("index")
        .description("Indexes.")
        .parameters(ToolParams::default())
        .handler(|_args, ctx: ToolContext| async move {
            ctx.report_progress(ProgressReport::new(1.0).total(2.0));
            Ok::<_, ToolFailure>("indexed")
        })
        .build()
        .unwrap();
    let call =
        |id: &str| ModelOutput::for_tool_calls("", "", vec![ToolCall::new(id, "index", json!({}))]);
    // Two turns of calls, and a turn limit of two: the third turn is over it.
    let agent = react()
        .name("indexer")
        .no_prompt()
        .tools([slow])
        .model(Arc::new(ScriptedModel::new([
            call("c1"),
            call("c2"),
            call("c3"),
        ])))
        .build()
        .unwrap();
    let (sink, mut stream) = EventStream::new();
    let out = run(
        &agent,
        "go",
        RunOptions::new().limits([turn_limit(2)]).events(sink),
    )
    .await
    .unwrap();
    assert!(out.limit.is_some());
    let mut progress = 0;
    let mut limits = 0;
    while let Some(e) = stream.recv().await {
        let placed = e.correlation.run_id.as_deref() == Some(out.span_id.as_str())
            && e.correlation.agent.as_deref() == Some("indexer");
        match &e.event {
            Event::Info(i) if i.source.as_deref() == Some("progress") => {
                assert!(placed, "{e:?}");
                progress += 1;
            }
            Event::Limit(_) => {
                assert!(placed, "{e:?}");
                limits += 1;
            }
            _ => {}
        }
    }
    assert_eq!((progress, limits), (2, 1));
}
