//! Review of tool results: each decision, escalation, pattern matching, what the reviewer is
//! shown (raw and truncated output, the executed call), the events, termination, panics, and
//! which calls are reviewed at all.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actuator_events::{Event, EventLog, ReviewDecision};
use actuator_exec::{
    ApprovalDecision, ApprovalPolicy, ExecError, ExecuteOptions, Review, ReviewPolicy,
    ReviewRequest, Reviewer, ReviewerRegistry, auto_approver, execute_tools,
};
use actuator_model::{BoxFuture, MessageContent};
use actuator_tool_core::{ToolError, ToolFailure, ToolOutput};
use common::{constant, conversation, result, tool};
use serde_json::{Value, json};

/// What a reviewer was shown of one call.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    function: String,
    arguments: Value,
    message: String,
    result: String,
    error: Option<String>,
    truncated: Option<(usize, usize)>,
    output: String,
    history: usize,
}

/// A reviewer with a fixed answer that records what it was shown.
struct Recorder {
    name: &'static str,
    answer: Review,
    seen: Mutex<Vec<Shown>>,
}

impl Recorder {
    fn new(name: &'static str, answer: Review) -> Arc<Self> {
        Arc::new(Recorder {
            name,
            answer,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<Shown> {
        self.seen.lock().unwrap().clone()
    }
}

impl Reviewer for Recorder {
    fn review<'a>(&'a self, r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        self.seen.lock().unwrap().push(Shown {
            function: r.call.function.to_string(),
            arguments: r.call.arguments.to_shared_value().unwrap().as_ref().clone(),
            message: r.message.to_owned(),
            result: r.result.text(),
            error: r.error.map(|e| e.message.clone()),
            truncated: r.truncated,
            output: match r.output {
                ToolOutput::Text(t) => t.to_string(),
                ToolOutput::Content(_) => "<content>".into(),
            },
            history: r.history.len(),
        });
        Box::pin(std::future::ready(self.answer.clone()))
    }

    fn name(&self) -> &str {
        self.name
    }
}

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

#[tokio::test]
async fn continue_passes_the_result_to_the_model_and_is_recorded_after_the_calls_event() {
    let rec = Recorder::new("monitor", Review::proceed().with_explanation("fine"));
    let (opts, log) = options(vec![policy(rec.clone(), &["bash"])]);
    let tools = [constant("bash", false, "file.txt")];
    let out = execute_tools(
        &conversation(&[("bash", json!({"s": "ls"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(result(&out.messages[0]).0, "file.txt");
    assert_eq!(
        reviews(&log),
        vec![(
            "monitor".into(),
            ReviewDecision::Continue,
            Some("fine".into())
        )]
    );
    // The decision follows the call's completed event, as in the reference's log.
    let events = log.events();
    let tool_at = events
        .iter()
        .position(|e| matches!(e, Event::Tool(t) if !t.is_pending()))
        .unwrap();
    let review_at = events
        .iter()
        .position(|e| matches!(e, Event::Review(_)))
        .unwrap();
    assert!(tool_at < review_at, "{events:?}");
    let Event::Review(r) = &events[review_at] else {
        unreachable!()
    };
    assert_eq!(&*r.id, "call_0");
    assert_eq!(&*r.function, "bash");
    assert_eq!(*r.arguments, json!({"s": "ls"}));
    assert_eq!(r.message, "Let me use some tools.");
    let seen = rec.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].message, "Let me use some tools.");
    // The history ends with the assistant turn that made the call.
    assert_eq!(seen[0].history, 2);
}

#[tokio::test]
async fn terminate_ends_the_run_with_the_reason_and_keeps_the_result_on_the_event() {
    let rec = Recorder::new(
        "monitor",
        Review::terminate().with_explanation("exfiltration"),
    );
    let (opts, log) = options(vec![policy(rec.clone(), &["bash"])]);
    let tools = [
        constant("read", false, "ok"),
        constant("bash", false, "secret"),
    ];
    let err = execute_tools(
        &conversation(&[("read", json!({})), ("bash", json!({}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ExecError::ReviewTerminated { function, call_id, .. } if function == "bash" && call_id == "call_1"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Tool result reviewer requested termination."
    );
    assert_eq!(
        err.termination(),
        Some("Tool result reviewer requested termination.")
    );
    // The earlier call's message is kept; the reviewed one never reaches the model.
    let kept: Vec<_> = err.messages().iter().map(result).collect();
    assert_eq!(kept, vec![("ok".to_owned(), None, None)]);
    let events = log.events();
    let bash = events
        .iter()
        .find_map(|e| match e {
            Event::Tool(t) if !t.is_pending() && &*t.function == "bash" => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(bash.result, MessageContent::from("secret"));
    assert_eq!(bash.failed, Some(true));
    assert_eq!(
        bash.fatal.as_deref(),
        Some("Tool result reviewer requested termination.")
    );
    assert_eq!(
        reviews(&log),
        vec![(
            "monitor".into(),
            ReviewDecision::Terminate,
            Some("exfiltration".into())
        )]
    );
}

#[tokio::test]
async fn escalate_asks_the_next_matching_reviewer() {
    let first = Recorder::new("first", Review::escalate());
    let unmatched = Recorder::new("unmatched", Review::terminate());
    let second = Recorder::new("second", Review::terminate());
    let (opts, log) = options(vec![
        policy(first.clone(), &["bash"]),
        policy(unmatched.clone(), &["python"]),
        policy(second.clone(), &["*"]),
    ]);
    let tools = [constant("bash", false, "out")];
    let err = execute_tools(&conversation(&[("bash", json!({}))]), &tools, &opts)
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::ReviewTerminated { .. }), "{err:?}");
    assert!(unmatched.seen().is_empty());
    assert_eq!(second.seen().len(), 1);
    assert_eq!(
        reviews(&log),
        vec![
            ("first".into(), ReviewDecision::Escalate, None),
            ("second".into(), ReviewDecision::Terminate, None),
        ]
    );
}

#[tokio::test]
async fn an_escalation_nobody_takes_continues_and_is_recorded_under_policy() {
    let unsure = Recorder::new("unsure", Review::escalate());
    let (opts, log) = options(vec![policy(unsure, &["bash"])]);
    let tools = [constant("bash", false, "out")];
    let out = execute_tools(&conversation(&[("bash", json!({}))]), &tools, &opts)
        .await
        .unwrap();
    assert_eq!(result(&out.messages[0]).0, "out");
    assert_eq!(
        reviews(&log),
        vec![
            ("unsure".into(), ReviewDecision::Escalate, None),
            (
                "policy".into(),
                ReviewDecision::Continue,
                Some("No reviewer took the escalation for tool bash".into())
            ),
        ]
    );
}

#[tokio::test]
async fn policies_match_as_approval_policies_do() {
    let exact = Recorder::new("exact", Review::proceed());
    let glob = Recorder::new("glob", Review::proceed());
    let by_argument = Recorder::new("by_argument", Review::proceed());
    let (opts, log) = options(vec![
        policy(exact.clone(), &["bash"]),
        policy(glob.clone(), &["web_*"]),
        policy(by_argument.clone(), &["note(s='secret*"]),
    ]);
    let tools = [
        constant("bash", true, ""),
        constant("bash_session", true, ""),
        constant("web_search", true, ""),
        constant("note", true, ""),
    ];
    execute_tools(
        &conversation(&[
            ("bash", json!({})),
            ("bash_session", json!({})),
            ("web_search", json!({})),
            ("note", json!({"s": "public"})),
            ("note", json!({"s": "secret plans"})),
        ]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    let functions = |r: &Recorder| -> Vec<String> {
        let mut f: Vec<_> = r
            .seen()
            .into_iter()
            .map(|s| format!("{}{}", s.function, s.arguments))
            .collect();
        f.sort();
        f
    };
    // `bash` is exactly `bash` (D4), not `bash_session`.
    assert_eq!(functions(&exact), vec!["bash{}"]);
    assert_eq!(functions(&glob), vec!["web_search{}"]);
    assert_eq!(functions(&by_argument), vec![r#"note{"s":"secret plans"}"#]);
    // A result no policy covers is not reviewed and records nothing.
    assert_eq!(reviews(&log).len(), 3);
}

#[tokio::test]
async fn the_reviewer_sees_the_raw_output_and_the_truncated_result() {
    let rec = Recorder::new("monitor", Review::proceed());
    let (opts, _log) = options(vec![policy(rec.clone(), &["long"])]);
    let opts = opts.max_output(10);
    let long = "0123456789".repeat(10);
    let tools = [tool("long", false, move |_a, _c| {
        let long = long.clone();
        async move { Ok(ToolOutput::Text(long.into())) }
    })];
    let out = execute_tools(&conversation(&[("long", json!({}))]), &tools, &opts)
        .await
        .unwrap();
    let seen = rec.seen();
    assert_eq!(seen[0].output, "0123456789".repeat(10));
    assert_eq!(seen[0].truncated, Some((100, 10)));
    // What the reviewer was shown as the result is what the model reads.
    assert_eq!(seen[0].result, result(&out.messages[0]).0);
    assert_ne!(seen[0].result, seen[0].output);
}

#[tokio::test]
async fn a_tool_error_is_reviewed_with_its_error() {
    let rec = Recorder::new("monitor", Review::proceed());
    let (opts, _log) = options(vec![policy(rec.clone(), &["fails"])]);
    let tools = [tool("fails", false, |_a, _c| async {
        Err(ToolFailure::from(ToolError::new("disk full")))
    })];
    let out = execute_tools(&conversation(&[("fails", json!({}))]), &tools, &opts)
        .await
        .unwrap();
    assert_eq!(result(&out.messages[0]).2.as_deref(), Some("disk full"));
    assert_eq!(rec.seen()[0].error.as_deref(), Some("disk full"));
}

#[tokio::test]
async fn calls_that_did_not_run_are_not_reviewed() {
    let rec = Recorder::new("monitor", Review::terminate());
    let (opts, _log) = options(vec![policy(rec.clone(), &["*"])]);
    let opts = opts.approval(
        ApprovalPolicy::new(auto_approver(ApprovalDecision::Reject), ["rejected"]).unwrap(),
    );
    let opts = opts
        .approval(ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["echo"]).unwrap());
    let tools = [constant("rejected", false, ""), constant("echo", false, "")];
    let out = execute_tools(
        &conversation(&[
            ("rejected", json!({})),
            ("missing", json!({})),
            ("echo", json!({"n": "not a number"})),
        ]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    // Rejected, unknown, invalid: each error is the model's feedback, and nothing ran.
    assert!(out.messages.iter().all(|m| result(m).1.is_some()));
    assert!(rec.seen().is_empty());
}

struct Panics;

impl Reviewer for Panics {
    fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        Box::pin(async { panic!("the monitor broke") })
    }
}

#[tokio::test]
async fn a_reviewers_panic_is_contained_and_stops_the_run() {
    let (opts, log) = options(vec![policy(Arc::new(Panics), &["bash"])]);
    let tools = [constant("bash", false, "out")];
    let err = execute_tools(&conversation(&[("bash", json!({}))]), &tools, &opts)
        .await
        .unwrap_err();
    let ExecError::Fatal { cause, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        cause
            .to_string()
            .contains("a reviewer panicked: the monitor broke"),
        "{cause}"
    );
    assert!(reviews(&log).is_empty());
}

struct Slow;

impl Reviewer for Slow {
    fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Review::proceed()
        })
    }
}

#[tokio::test]
async fn time_spent_reviewing_is_waiting_not_working() {
    let (opts, log) = options(vec![policy(Arc::new(Slow), &["bash"])]);
    let tools = [constant("bash", false, "out")];
    let out = execute_tools(&conversation(&[("bash", json!({}))]), &tools, &opts)
        .await
        .unwrap();
    assert!(
        out.waiting >= Duration::from_millis(300),
        "{:?}",
        out.waiting
    );
    let working = log
        .events()
        .iter()
        .find_map(|e| match e {
            Event::Tool(t) if !t.is_pending() => t.working_time,
            _ => None,
        })
        .unwrap();
    assert!(working < 0.3, "{working}");
}

#[test]
fn review_policy_files_name_registered_reviewers() {
    let mut registry = ReviewerRegistry::new();
    registry.register("monitor", |params| {
        let decision = match params.get("decision").and_then(Value::as_str) {
            Some("terminate") => Review::terminate(),
            Some("continue") | None => Review::proceed(),
            Some(other) => return Err(format!("unknown decision {other}")),
        };
        Ok(Recorder::new("ignored", decision))
    });
    let policies = registry
        .policies_from_json(
            r#"{"reviewers": [{"name": "monitor", "tools": "bash, python", "decision": "terminate"}]}"#,
        )
        .unwrap();
    assert_eq!(policies[0].reviewer_name(), "monitor");
    let err = registry
        .policies_from_json(
            r#"{"reviewers": [{"name": "monitor", "tools": "*", "decision": "maybe"}]}"#,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Reviewer 'monitor' in the review policy: unknown decision maybe"
    );
    let err = registry
        .policies_from_json(r#"{"approvers": []}"#)
        .unwrap_err();
    assert!(
        err.to_string().starts_with("Invalid review policy"),
        "{err}"
    );
}

#[tokio::test]
async fn a_policy_files_reviewer_decides_under_its_entry_name() {
    let mut registry = ReviewerRegistry::new();
    registry.register("monitor", |_| {
        Ok(Recorder::new("type_name", Review::terminate()))
    });
    let dir = std::env::temp_dir().join(format!("review-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("review.json");
    std::fs::write(
        &file,
        r#"{"reviewers": [{"name": "monitor", "tools": ["bash"]}]}"#,
    )
    .unwrap();
    let policies = registry.read_policies(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let (opts, log) = options(policies);
    let tools = [constant("bash", false, "")];
    let err = execute_tools(&conversation(&[("bash", json!({}))]), &tools, &opts)
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::ReviewTerminated { .. }));
    assert_eq!(reviews(&log)[0].0, "monitor");
}

#[cfg(feature = "yaml")]
#[test]
fn review_policy_files_can_be_yaml() {
    let mut registry = ReviewerRegistry::new();
    registry.register("monitor", |_| Ok(Recorder::new("m", Review::proceed())));
    let dir = std::env::temp_dir().join(format!("review-yaml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("review.yaml");
    std::fs::write(
        &file,
        "reviewers:\n  - name: monitor\n    tools: bash, python\n  - name: monitor\n    tools: \"*\"\n",
    )
    .unwrap();
    let policies = registry.read_policies(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(policies.len(), 2);
}

#[cfg(not(feature = "yaml"))]
#[test]
fn a_yaml_review_policy_without_the_feature_says_so() {
    let err = ReviewerRegistry::new()
        .read_policies("/nonexistent/review.yaml")
        .unwrap_err();
    // Unreadable first: the file does not exist.
    assert!(
        err.to_string().starts_with("Review policy file not found"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_stage_spread_over_workers_shows_reviewers_the_conversation() {
    let rec = Recorder::new("monitor", Review::proceed());
    let (opts, log) = options(vec![policy(rec.clone(), &["t"])]);
    let calls: Vec<(&str, Value)> = (0..100).map(|i| ("t", json!({"n": i}))).collect();
    let tools = [constant("t", true, "ok")];
    let out = execute_tools(&conversation(&calls), &tools, &opts)
        .await
        .unwrap();
    assert_eq!(out.messages.len(), 100);
    let seen = rec.seen();
    assert_eq!(seen.len(), 100);
    assert!(
        seen.iter()
            .all(|s| s.history == 2 && s.message == "Let me use some tools.")
    );
    assert_eq!(reviews(&log).len(), 100);
}
