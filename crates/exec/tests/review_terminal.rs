//! The terminal reviewer (the reference's `human` reviewer): what the operator is shown, each
//! answer, failing closed without one, and `human` in review policy files.

#![cfg(feature = "terminal")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_events::{Event, EventLog, ReviewDecision};
use actuator_exec::{
    ExecError, ExecuteOptions, ReviewPolicy, Reviewer, ReviewerRegistry, execute_tools,
};
use common::{constant, conversation, result};
use serde_json::json;

fn policy(reviewer: Arc<dyn Reviewer>, tools: &[&str]) -> ReviewPolicy {
    ReviewPolicy::new(reviewer, tools.iter().copied()).unwrap()
}

fn options(policies: Vec<ReviewPolicy>) -> (ExecuteOptions, Arc<EventLog>) {
    let log = EventLog::new();
    let mut opts = ExecuteOptions::default().events(log.clone());
    for p in policies {
        opts = opts.review(p);
    }
    (opts, log)
}

/// (reviewer, decision, explanation) of each review event, in order.
fn reviews(log: &EventLog) -> Vec<(String, ReviewDecision, Option<String>)> {
    log.events()
        .iter()
        .filter_map(|e| match e {
            Event::Review(r) => Some((r.reviewer.clone(), r.decision, r.explanation.clone())),
            _ => None,
        })
        .collect()
}

/// A writer the test reads back.
#[derive(Clone, Default)]
struct Screen(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Screen {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn human_review(
    answers: &'static str,
    output: &'static str,
) -> (Result<String, ExecError>, String, Arc<EventLog>) {
    use actuator_exec::TerminalReviewer;
    let screen = Screen::default();
    let human = TerminalReviewer::with_io(std::io::Cursor::new(answers), screen.clone());
    let (opts, log) = options(vec![policy(Arc::new(human), &["bash"])]);
    let tools = [constant("bash", false, output)];
    let out = execute_tools(
        &conversation(&[("bash", json!({"s": "ls"}))]),
        &tools,
        &opts,
    )
    .await
    .map(|o| result(&o.messages[0]).0);
    let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    (out, shown, log)
}

#[tokio::test]
async fn the_human_reviewer_sees_the_call_with_its_result_and_decides() {
    let (out, shown, log) = human_review("x\nc\n", "a.txt {{s}}").await;
    assert_eq!(out.unwrap(), "a.txt {{s}}");
    // The default view, then the result in a fence; the result is evidence, not a template.
    assert!(shown.contains("bash(s='ls')"), "{shown}");
    assert!(
        shown.contains("**Result**\n\n```\na.txt { {s}}\n```"),
        "{shown}"
    );
    assert!(
        shown.contains("Review this result: [c]ontinue / [t]erminate: "),
        "{shown}"
    );
    assert!(
        shown.contains("Please answer [c]ontinue, [t]erminate."),
        "{shown}"
    );
    assert_eq!(
        reviews(&log),
        vec![(
            "human".into(),
            ReviewDecision::Continue,
            Some("Human operator reviewed the tool result and let the sample continue.".into())
        )]
    );

    let (out, _, log) = human_review("terminate\n", "secret").await;
    assert!(matches!(out, Err(ExecError::ReviewTerminated { .. })));
    assert_eq!(
        reviews(&log)[0].2.as_deref(),
        Some("Human operator reviewed the tool result and asked that the sample be terminated.")
    );
}

#[tokio::test]
async fn a_human_review_without_an_answer_fails_closed() {
    let (out, _, log) = human_review("", "x").await;
    assert!(
        matches!(out, Err(ExecError::ReviewTerminated { .. })),
        "{out:?}"
    );
    assert_eq!(
        reviews(&log)[0].2.as_deref(),
        Some(
            "Human review ended without one of the offered choices (the reviewer's terminal closed); the sample is terminated."
        )
    );
}

#[test]
fn review_policy_files_know_the_human_reviewer() {
    let policies = ReviewerRegistry::new()
        .policies_from_json(
            r#"{"reviewers": [{"name": "human", "tools": "*", "choices": ["continue", "escalate"]}]}"#,
        )
        .unwrap();
    assert_eq!(policies[0].reviewer_name(), "human");
    let err = ReviewerRegistry::new()
        .policies_from_json(
            r#"{"reviewers": [{"name": "human", "tools": "*", "choices": ["maybe"]}]}"#,
        )
        .unwrap_err();
    assert!(err.to_string().contains("'choices' must be"), "{err}");
}
