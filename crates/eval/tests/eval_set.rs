//! `eval_set`: tasks into one directory, retried until done, finished work skipped.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actuator_eval::{EvalError, EvalOptions, EvalSetOptions, eval_set, read_eval_log};
use actuator_model::{ChatMessage, FunctionModel, ModelError};

type Calls = Arc<Mutex<HashMap<String, usize>>>;

/// The arithmetic model; with `fails(question, call)` true, that call fails.
fn model(calls: Calls, fails: fn(u64, usize) -> bool) -> FunctionModel {
    FunctionModel::new("mockllm/model", move |messages, _tools| {
        let q = messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::User(u) => Some(u.content.text()),
                _ => None,
            })
            .unwrap_or_default();
        let n = {
            let mut calls = calls.lock().unwrap();
            let n = calls.entry(q.clone()).or_default();
            *n += 1;
            *n
        };
        let first: u64 = q
            .split(|c: char| !c.is_ascii_digit())
            .find_map(|w| w.parse().ok())
            .unwrap_or(0);
        if fails(first, n) {
            return Err(ModelError::other("the model's server went away"));
        }
        Ok(common::arithmetic_reply(messages))
    })
}

fn logs_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_retries_a_failed_task_and_skips_finished_ones_when_run_again() {
    let (calls, flaky_calls): (Calls, Calls) = Default::default();
    let steady = common::arithmetic_task_on(4, model(calls.clone(), |_, _| false));
    // Sample 3's first call fails: the first run ends in error (fail_on_error), a retry
    // finishes it.
    let mut flaky =
        common::arithmetic_task_on(4, model(flaky_calls.clone(), |n, call| n == 3 && call == 1));
    flaky.name = "flaky".into();
    let tasks = [steady, flaky];
    let dir = tempfile::tempdir().unwrap();
    let set = EvalSetOptions::new().retry_wait(Duration::ZERO);

    let first = eval_set(&tasks, dir.path(), EvalOptions::new(), set.clone())
        .await
        .unwrap();
    assert!(first.success);
    assert_eq!(first.attempts, 3, "one run of each, one retry of flaky");
    let statuses: Vec<&str> = first.runs.iter().map(|r| r.log.status.as_str()).collect();
    assert_eq!(statuses, ["success", "success"]);
    // The failed attempt's log was removed once retried: one log per task.
    assert_eq!(logs_in(dir.path()), 2);
    let flaky_log = read_eval_log(first.runs[1].location.as_ref().unwrap()).unwrap();
    assert_eq!(flaky_log.samples.unwrap().len(), 4);

    // Run again: everything is done, nothing runs.
    let before = (
        calls.lock().unwrap().clone(),
        flaky_calls.lock().unwrap().clone(),
    );
    let again = eval_set(&tasks, dir.path(), EvalOptions::new(), set)
        .await
        .unwrap();
    assert!(again.success);
    assert_eq!(again.attempts, 0);
    assert_eq!(
        (
            calls.lock().unwrap().clone(),
            flaky_calls.lock().unwrap().clone()
        ),
        before
    );
    assert_eq!(again.runs[1].location, first.runs[1].location);
    if let Some(reads) = common::reference_read_all(&[
        again.runs[0].location.clone().unwrap(),
        again.runs[1].location.clone().unwrap(),
    ]) {
        assert!(reads.iter().all(|r| r["status"] == "success"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_keeps_failing_stops_after_its_retries() {
    let calls: Calls = Arc::default();
    let mut hopeless = common::arithmetic_task_on(2, model(calls, |_, _| true));
    hopeless.name = "hopeless".into();
    let dir = tempfile::tempdir().unwrap();
    let set = EvalSetOptions::new()
        .retry_wait(Duration::from_millis(1))
        .retry_attempts(2)
        .retry_cleanup(false);
    let run = eval_set(&[hopeless], dir.path(), EvalOptions::new(), set)
        .await
        .unwrap();
    assert!(!run.success);
    assert_eq!(run.attempts, 3, "the first run and two retries");
    assert_eq!(run.runs[0].log.status, "error");
    assert_eq!(logs_in(dir.path()), 3, "kept without retry_cleanup");
}

#[tokio::test]
async fn two_tasks_with_one_name_are_refused() {
    let tasks = [common::arithmetic_task(1), common::arithmetic_task(2)];
    let dir = tempfile::tempdir().unwrap();
    let err = eval_set(
        &tasks,
        dir.path(),
        EvalOptions::new(),
        EvalSetOptions::new(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, EvalError::Options(_)), "{err:?}");
    assert!(err.to_string().contains("named 'arithmetic'"), "{err}");
}
