//! Review of tool results in an evaluation: a reviewer's termination ends the sample as the
//! reference's `TerminateSampleError` does (an `operator` limit, the sample scored on what it
//! did, no error), every decision is a `review` event in the log, and the reference reads it.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::react;
use actuator_eval::{Dataset, EvalOptions, FailOnError, LogFormat, Sample, Task, eval, scorers};
use actuator_exec::{Review, ReviewPolicy, ReviewRequest, Reviewer};
use actuator_model::BoxFuture;
use actuator_multi::as_solver;
use serde_json::Value;

/// Ends the sample when `add` returns more than 10; lets smaller sums through.
struct SumMonitor;

impl Reviewer for SumMonitor {
    fn review<'a>(&'a self, r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        let sum: i64 = r.result.text().parse().unwrap_or(0);
        Box::pin(async move {
            if sum > 10 {
                Review::terminate().with_explanation(format!("{sum} is too large"))
            } else {
                Review::proceed()
            }
        })
    }

    fn name(&self) -> &str {
        "sum_monitor"
    }
}

fn task() -> Task {
    let agent = react()
        .name("arithmetic")
        .tools([common::add_tool()])
        .model(common::arithmetic_model())
        .review([ReviewPolicy::new(Arc::new(SumMonitor), ["add"]).unwrap()])
        .build()
        .unwrap();
    Task::new(
        "reviewed",
        Dataset::new([
            Sample::new("What is 1 + 2?", "3"),
            Sample::new("What is 7 + 8?", "15"),
        ]),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
    .scorer(scorers::match_(
        scorers::MatchOptions::default().numeric(true),
    ))
}

fn events<'a>(sample: &'a Value, kind: &str) -> Vec<&'a Value> {
    sample["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewers_termination_ends_the_sample_as_an_operator_limit() {
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &task(),
        EvalOptions::new()
            .model("mockllm/model")
            .log_dir(dir.path())
            .log_format(LogFormat::Json)
            .fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    let path = run.location.unwrap();
    let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let samples = raw["samples"].as_array().unwrap();
    let small = samples.iter().find(|s| s["target"] == "3").unwrap();
    let large = samples.iter().find(|s| s["target"] == "15").unwrap();

    // The small sum went through: reviewed, continued, answered.
    assert!(small.get("limit").is_none_or(Value::is_null), "{small}");
    let reviewed = events(small, "review");
    assert_eq!(reviewed.len(), 1);
    assert_eq!(reviewed[0]["reviewer"], "sum_monitor");
    assert_eq!(reviewed[0]["decision"], "continue");
    assert_eq!(reviewed[0]["call"]["function"], "add");
    assert_eq!(reviewed[0]["message"], "Let me add.");
    assert_eq!(small["scores"]["match"]["value"], "C");

    // The large one ended cleanly: no error, an operator limit with the reference's reason,
    // and still scored.
    assert!(large.get("error").is_none_or(Value::is_null), "{large}");
    assert_eq!(large["limit"]["type"], "operator");
    assert_eq!(large["limit"]["limit"], 1.0);
    let limit = events(large, "sample_limit");
    assert_eq!(limit.len(), 1);
    assert_eq!(limit[0]["type"], "operator");
    assert_eq!(
        limit[0]["message"],
        "Tool result reviewer requested termination."
    );
    let reviewed = events(large, "review");
    assert_eq!(reviewed[0]["decision"], "terminate");
    assert_eq!(reviewed[0]["explanation"], "15 is too large");
    assert!(large["scores"]["match"].is_object(), "{large}");
    // The reviewed result never reached the model.
    assert!(
        !large["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool"),
        "{large}"
    );
    // The call's event keeps the result that was reviewed.
    let tool = events(large, "tool");
    assert_eq!(tool[0]["result"], "15");
    assert_eq!(tool[0]["failed"], true);

    // The reference reads the review events and the limit as its own.
    if let Some(theirs) = common::reference_read(&path) {
        let read = theirs["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["target"] == "15")
            .unwrap();
        assert_eq!(read["limit"]["type"], "operator");
        let review = events(read, "review");
        assert_eq!(review.len(), 1);
        assert_eq!(review[0]["decision"], "terminate");
        assert_eq!(review[0]["reviewer"], "sum_monitor");
        assert_eq!(review[0]["call"]["arguments"]["x"], 7);
    }
}
