//! `EvalOptions::events`: a user's sink sees every sample's events as one tree (the sample's
//! span, the reference's `solvers` and `scorers` spans, a score event per scorer), events the
//! log does not keep included, and the log is the same with or without it.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_eval::{EvalOptions, eval, read_eval_log};
use actuator_events::{Event, EventSink};

/// Every event with the span it was emitted in.
#[derive(Default)]
struct Seen(Mutex<Vec<(Option<String>, Event)>>);

impl EventSink for Seen {
    fn emit(&self, event: Event) {
        self.emit_in(None, event);
    }

    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        self.0
            .lock()
            .unwrap()
            .push((span_id.map(str::to_owned), event));
    }
}

/// The id of the span named `name` whose parent is `parent`.
fn span(seen: &[(Option<String>, Event)], name: &str, parent: Option<&str>) -> String {
    seen.iter()
        .find_map(|(_, e)| match e {
            Event::SpanBegin(b) if b.name == name && b.parent_id.as_deref() == parent => {
                Some(b.id.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no span {name} under {parent:?}"))
}

#[tokio::test]
async fn a_users_sink_sees_each_sample_as_one_tree_with_its_scores() {
    let task = common::arithmetic_task(1);
    let seen = Arc::new(Seen::default());
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &task,
        EvalOptions::new().log_dir(dir.path()).events(seen.clone()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    let seen = std::mem::take(&mut *seen.0.lock().unwrap());

    // Samples without ids are numbered from 1, as in the log.
    let sample = span(&seen, "arithmetic 1 epoch 1", None);
    let solvers = span(&seen, "solvers", Some(&sample));
    let scorers = span(&seen, "scorers", Some(&sample));
    let agent = seen
        .iter()
        .find_map(|(_, e)| match e {
            Event::SpanBegin(b) if b.kind == "agent" => Some(b.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(agent.parent_id.as_deref(), Some(solvers.as_str()));
    let scorer = span(&seen, "match", Some(&scorers));
    let scores: Vec<_> = seen
        .iter()
        .filter_map(|(in_span, e)| match e {
            Event::Score(s) => Some((in_span.clone(), s.clone())),
            _ => None,
        })
        .collect();
    // The task has two scorers: `match`, then `includes`.
    assert_eq!(scores.len(), 2);
    assert_eq!(scores[1].1.scorer, "includes");
    let (in_span, score) = &scores[0];
    assert_eq!(
        in_span.as_deref(),
        Some(scorer.as_str()),
        "in its scorer's span"
    );
    assert_eq!(score.scorer, "match");
    assert_eq!(score.score.value, actuator_events::ScoreValue::from("C"));
    assert_eq!(
        score.target,
        Some(serde_json::json!(task.dataset.samples[0].target))
    );
    // The user's sink wanted pending tool events (the default); the log keeps none.
    assert!(seen.iter().any(|(_, e)| matches!(e, Event::ToolPending(_))));
    // Every span that began ended, the sample's last.
    let ends = seen
        .iter()
        .filter(|(_, e)| matches!(e, Event::SpanEnd(_)))
        .count();
    let begins = seen
        .iter()
        .filter(|(_, e)| matches!(e, Event::SpanBegin(_)))
        .count();
    assert_eq!(begins, ends);
    assert!(matches!(&seen.last().unwrap().1, Event::SpanEnd(end) if end.id == sample));

    // The log is what it is without the sink: the same kinds of events in the same order,
    // no sample span, no pending events.
    let other = tempfile::tempdir().unwrap();
    let plain = eval(&task, EvalOptions::new().log_dir(other.path()))
        .await
        .unwrap();
    let kinds = |path: &std::path::Path| -> Vec<String> {
        let log = read_eval_log(path).unwrap();
        log.samples.unwrap()[0]
            .events
            .iter()
            .map(|e| format!("{} {}", e["event"], e["type"]))
            .collect()
    };
    let with_sink = kinds(run.location.as_ref().unwrap());
    assert_eq!(with_sink, kinds(plain.location.as_ref().unwrap()));
    assert!(
        !with_sink.iter().any(|k| k.contains("sample")),
        "{with_sink:?}"
    );
}
