//! `EventStream`: the bounded buffer's policy (deltas dropped and counted, completed events
//! kept, a subscriber too far behind cut off and told), and each event's place in the tree.
#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_events::{
    Event, EventSink, EventStream, InfoEvent, ModelStreamEvent, PendingToolEvent, SpanBeginEvent,
    SpanEndEvent, StreamEvent,
};
use serde_json::json;

fn delta(text: &str) -> Event {
    let text = StreamEvent::Text { text: text.into() };
    Event::ModelStream(ModelStreamEvent::new(1, text))
}

fn info(message: &str) -> Event {
    Event::Info(InfoEvent {
        source: None,
        message: message.into(),
    })
}

fn begin(id: &str, parent: Option<&str>, kind: &str, name: &str, call: Option<&str>) -> Event {
    Event::SpanBegin(Box::new(SpanBeginEvent {
        id: id.into(),
        parent_id: parent.map(str::to_owned),
        kind: kind.into(),
        name: name.into(),
        tool_call_id: call.map(Into::into),
    }))
}

fn drain(stream: &mut EventStream) -> Vec<actuator_events::RunEvent> {
    std::iter::from_fn(|| stream.try_recv()).collect()
}

#[test]
fn deltas_past_their_bound_are_dropped_and_counted_where_they_were_lost() {
    let (sink, mut stream) = EventStream::bounded(100, 2);
    assert!(sink.wants_model_stream());
    for piece in ["a", "b", "c", "d"] {
        sink.emit(delta(piece));
    }
    sink.emit(info("done"));
    let got = drain(&mut stream);
    // Two deltas fit; the other two are dropped, and the next event says so.
    assert_eq!(got.len(), 3);
    assert!(
        matches!(&got[1].event, Event::ModelStream(s) if s.stream == StreamEvent::Text { text: "b".into() })
    );
    assert_eq!(
        got.iter().map(|e| e.deltas_dropped).collect::<Vec<_>>(),
        [0, 0, 2]
    );
    assert_eq!((stream.lost().deltas, stream.lost().events), (2, 0));
    // Read, the deltas make room again.
    sink.emit(delta("e"));
    assert_eq!(drain(&mut stream).len(), 1);
}

#[test]
fn completed_events_and_retry_boundaries_are_kept_however_many_deltas_wait() {
    let (sink, mut stream) = EventStream::bounded(100, 1);
    sink.emit(delta("a"));
    let retry = StreamEvent::Retry { attempt: 2 };
    sink.emit(Event::ModelStream(ModelStreamEvent::new(1, retry)));
    for n in 0..50 {
        sink.emit(delta("x"));
        sink.emit(info(&n.to_string()));
    }
    let got = drain(&mut stream);
    let infos = got
        .iter()
        .filter(|e| matches!(e.event, Event::Info(_)))
        .count();
    assert_eq!(infos, 50);
    assert!(
        got.iter()
            .any(|e| matches!(&e.event, Event::ModelStream(s) if !s.stream.is_delta()))
    );
    assert_eq!(stream.lost().deltas, 50);
}

#[tokio::test]
async fn a_subscriber_too_far_behind_is_cut_off_and_told_what_it_missed() {
    let (sink, mut stream) = EventStream::bounded(3, 4);
    for n in 0..10 {
        sink.emit(info(&n.to_string()));
        sink.emit(delta("x"));
    }
    // Cut off, the sink wants no more deltas: providers stop building them.
    assert!(!sink.wants_model_stream());
    drop(sink);
    let mut got = Vec::new();
    while let Some(e) = stream.recv().await {
        got.push(e);
    }
    let infos: Vec<_> = got
        .iter()
        .filter_map(|e| match &e.event {
            Event::Info(i) => Some(i.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(infos, ["0", "1", "2"]);
    assert_eq!(stream.lost().events, 7);
    assert_eq!(stream.lost().deltas + got.len() as u64 - 3, 10);
}

#[test]
fn every_event_is_placed_by_its_span_in_the_run_tree() {
    let (sink, mut stream) = EventStream::new();
    sink.emit(begin("root", None, "agent", "boss", None));
    sink.emit_in(Some("root"), info("outer"));
    // The boss calls a helper as a tool: the call's pending event names its span.
    let mut call = PendingToolEvent::new("call_7", "helper", json!({}), 0.0);
    call.span_id = Some("root".into());
    sink.emit(Event::ToolPending(call));
    sink.emit_in(
        Some("root"),
        begin("inner", Some("root"), "agent", "helper", Some("call_7")),
    );
    sink.emit_in(Some("inner"), delta("hi"));
    // A handoff span inside the helper's run stays in that run.
    sink.emit_in(
        Some("inner"),
        begin("hand", Some("inner"), "handoff", "other", None),
    );
    sink.emit_in(Some("hand"), info("in handoff"));
    sink.emit_in(
        Some("hand"),
        Event::SpanEnd(SpanEndEvent { id: "hand".into() }),
    );
    sink.emit_in(
        Some("inner"),
        Event::SpanEnd(SpanEndEvent { id: "inner".into() }),
    );
    sink.emit(info("nowhere"));
    let got = drain(&mut stream);
    let place = |i: usize| {
        let c = &got[i].correlation;
        (
            c.run_id.as_deref(),
            c.span_id.as_deref(),
            c.parent_span_id.as_deref(),
            c.agent.as_deref(),
            c.tool_call_id.as_deref(),
        )
    };
    let root = (Some("root"), Some("root"), None, Some("boss"), None);
    assert_eq!(place(0), root);
    assert_eq!(place(1), root);
    assert_eq!(place(2), root);
    let helper = (
        Some("inner"),
        Some("inner"),
        Some("root"),
        Some("helper"),
        Some("call_7"),
    );
    assert_eq!(place(3), helper);
    assert_eq!(place(4), helper);
    let handoff = (
        Some("inner"),
        Some("hand"),
        Some("inner"),
        Some("helper"),
        Some("call_7"),
    );
    assert_eq!(place(5), handoff);
    assert_eq!(place(6), handoff);
    assert_eq!(place(7), handoff);
    assert_eq!(place(8), helper);
    assert_eq!(place(9), (None, None, None, None, None));
}

#[tokio::test]
async fn a_waiting_subscriber_is_woken_by_each_event_and_by_the_end() {
    let (sink, mut stream) = EventStream::new();
    let reader = tokio::spawn(async move {
        let mut n = 0;
        while stream.recv().await.is_some() {
            n += 1;
        }
        n
    });
    for n in 0..5 {
        tokio::task::yield_now().await;
        sink.emit(info(&n.to_string()));
    }
    drop(sink);
    assert_eq!(reader.await.unwrap(), 5);
}

#[test]
fn a_dropped_stream_leaves_a_sink_that_keeps_nothing_and_wants_no_deltas() {
    let (sink, stream) = EventStream::new();
    drop(stream);
    assert!(!sink.wants_model_stream());
    sink.emit(info("unheard"));
    let (sink, _stream) = EventStream::bounded(10, 0);
    assert!(!sink.wants_model_stream());
}
