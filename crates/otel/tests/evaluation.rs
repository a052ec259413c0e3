//! Scores as the GenAI conventions' evaluation results: events on the scorer's span, with the
//! scorer's name, the value and its label; the explanation only when contents are asked for;
//! a map of values as one result per entry, bounded per span.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;

use actuator_events::{
    Event, EventSink, Score, ScoreEvent, ScoreValue, SpanBeginEvent, SpanEndEvent,
};
use actuator_otel::OtelSink;
use opentelemetry::trace::Event as SpanEvent;
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SpanData};

fn begin(id: &str, parent: Option<&str>, kind: &str, name: &str) -> Event {
    Event::SpanBegin(Box::new(SpanBeginEvent {
        id: id.into(),
        parent_id: parent.map(Into::into),
        kind: kind.into(),
        name: name.into(),
        tool_call_id: None,
    }))
}

fn end(id: &str) -> Event {
    Event::SpanEnd(SpanEndEvent { id: id.into() })
}

fn attr<'a>(event: &'a SpanEvent, key: &str) -> Option<&'a Value> {
    event
        .attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| &kv.value)
}

/// An evaluation's sample as it reaches a user's sink: the sample's span, the scorers' span,
/// and one scorer span per score, the score emitted in it.
fn scored(scores: Vec<ScoreEvent>, capture: bool) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .capture_content(capture)
        .build_with_exporter(exporter.clone())
        .unwrap();
    sink.emit(begin("sample", None, "sample", "arithmetic 1 epoch 1"));
    sink.emit(begin("scorers", Some("sample"), "scorers", "scorers"));
    for (i, score) in scores.into_iter().enumerate() {
        let id = format!("scorer{i}");
        sink.emit(begin(&id, Some("scorers"), "scorer", &score.scorer.clone()));
        sink.emit_in(Some(&id), Event::Score(Box::new(score)));
        sink.emit(end(&id));
    }
    sink.emit(end("scorers"));
    sink.emit(end("sample"));
    sink.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn span<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

#[test]
fn a_score_is_an_evaluation_result_on_its_scorers_span_in_the_samples_trace() {
    let spans = scored(
        vec![
            ScoreEvent::new(
                "match",
                Score::new("C").with_explanation("the answer: 191.5 m"),
            ),
            ScoreEvent::new("accuracy", Score::new(0.25)),
        ],
        false,
    );
    let sample = span(&spans, "sample arithmetic 1 epoch 1");
    let scorer = span(&spans, "scorer match");
    assert_eq!(
        scorer.span_context.trace_id(),
        sample.span_context.trace_id()
    );
    assert_eq!(scorer.events.len(), 1);
    let result = &scorer.events[0];
    assert_eq!(result.name, "gen_ai.evaluation.result");
    assert_eq!(
        attr(result, "gen_ai.evaluation.name"),
        Some(&Value::from("match"))
    );
    assert_eq!(
        attr(result, "gen_ai.evaluation.score.value"),
        Some(&Value::F64(1.0))
    );
    assert_eq!(
        attr(result, "gen_ai.evaluation.score.label"),
        Some(&Value::from("C"))
    );
    // The explanation quotes the answer: content, off by default.
    assert_eq!(attr(result, "gen_ai.evaluation.explanation"), None);

    let number = &span(&spans, "scorer accuracy").events[0];
    assert_eq!(
        attr(number, "gen_ai.evaluation.score.value"),
        Some(&Value::F64(0.25))
    );
    assert_eq!(attr(number, "gen_ai.evaluation.score.label"), None);
    // The spans around carry no results of their own.
    assert!(sample.events.is_empty());
    assert!(span(&spans, "scorers scorers").events.is_empty());
}

#[test]
fn the_explanation_is_exported_when_contents_are_asked_for() {
    let spans = scored(
        vec![ScoreEvent::new(
            "match",
            Score::new("I").with_explanation("the answer: 42"),
        )],
        true,
    );
    let result = &span(&spans, "scorer match").events[0];
    assert_eq!(
        attr(result, "gen_ai.evaluation.explanation"),
        Some(&Value::from("the answer: 42"))
    );
    assert_eq!(
        attr(result, "gen_ai.evaluation.score.value"),
        Some(&Value::F64(0.0))
    );
}

#[test]
fn a_map_of_values_is_one_result_per_entry_and_a_span_holds_a_bounded_number() {
    let small: BTreeMap<String, ScoreValue> = [
        ("accuracy".to_owned(), ScoreValue::from(1)),
        ("helpful".to_owned(), ScoreValue::from(true)),
    ]
    .into();
    let huge: BTreeMap<String, ScoreValue> = (0..10_000)
        .map(|i| (format!("k{i:05}"), ScoreValue::from(i)))
        .collect();
    let spans = scored(
        vec![
            ScoreEvent::new("rubric", Score::new(ScoreValue::Map(small))),
            ScoreEvent::new("many", Score::new(ScoreValue::Map(huge))),
        ],
        false,
    );
    let rubric = span(&spans, "scorer rubric");
    let names: Vec<_> = rubric
        .events
        .iter()
        .map(|e| {
            attr(e, "gen_ai.evaluation.name")
                .unwrap()
                .as_str()
                .into_owned()
        })
        .collect();
    assert_eq!(names, ["rubric/accuracy", "rubric/helpful"]);
    assert_eq!(
        attr(&rubric.events[1], "gen_ai.evaluation.score.label"),
        Some(&Value::from("true"))
    );
    // A scorer's map is as large as the scorer makes it; a span keeps 128 results.
    let many = span(&spans, "scorer many");
    assert_eq!(many.events.len(), 128);
    assert_eq!(many.events.dropped_count, 10_000 - 128);
}

#[test]
fn a_score_outside_any_span_exports_nothing_and_breaks_nothing() {
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .build_with_exporter(exporter.clone())
        .unwrap();
    sink.emit_in(
        Some("gone"),
        Event::Score(Box::new(ScoreEvent::new("match", Score::new("C")))),
    );
    sink.emit(begin("a", None, "agent", "after"));
    sink.emit(end("a"));
    sink.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    assert_eq!(spans.len(), 1);
    assert!(spans[0].events.is_empty());
}
