//! A panic in user code (the solver, a scorer, a sandbox's setup or teardown) is one sample's
//! error, not the evaluation's end: the samples finished before it are in the log once, the
//! panic's message is on its sample, and the log ends with the status the reference would give
//! it. Every log is read back with the reference's own `read_eval_log`.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actuator_agent::{AgentError, RunContext};
use actuator_eval::{
    Dataset, EvalOptions, FailOnError, Sample, ScoreError, Scorer, StopSignal, Target, Task, eval,
    read_eval_log,
    scorers::{IncludesOptions, includes},
};
use actuator_events::Score;
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};
use actuator_sandbox::{
    ExecOutput, ExecRequest, InteractiveProcess, Sandbox, SandboxError, SandboxHandle,
    SessionRequest,
};

/// Echoes its input; "boom" panics after its first await, "bang" in `solve` itself, and
/// "slow" takes a second.
struct Bomb;
impl Solver for Bomb {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        let input = state.messages[0].text();
        if input.contains("bang") {
            panic!("solver went bang on {input}");
        }
        Box::pin(async move {
            state.messages.push(ChatMessage::assistant(input.clone()));
            tokio::task::yield_now().await;
            if input.contains("boom") {
                panic!("solver exploded on {input}");
            }
            if input.contains("slow") {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            state.output = ModelOutput::from_content("echo", input);
            Ok(())
        })
    }
}
/// `includes`, except that it panics on an answer containing "fussy".
struct Fussy;
impl Scorer for Fussy {
    fn name(&self) -> &str {
        "fussy"
    }

    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        Box::pin(async move {
            let answer = state.output.completion();
            if answer.contains("fussy") {
                panic!("scorer choked on {answer}");
            }
            let hit = target.texts().iter().any(|t| answer.contains(t));
            Ok(Score::new(if hit { "C" } else { "I" }))
        })
    }
}

fn samples(inputs: &[&str]) -> Dataset {
    Dataset::new(inputs.iter().map(|i| Sample::new(*i, *i)))
}

fn ten_with(at: usize, special: &str) -> Vec<String> {
    (1..=10)
        .map(|i| {
            if i == at {
                format!("s{i} {special}")
            } else {
                format!("s{i}")
            }
        })
        .collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn keys(ids: std::ops::RangeInclusive<u32>) -> Vec<(String, u64)> {
    let mut k: Vec<(String, u64)> = ids.map(|i| (i.to_string(), 1)).collect();
    k.sort();
    k
}

fn sorted(mut k: Vec<(String, u64)>) -> Vec<(String, u64)> {
    k.sort();
    k
}

/// The reference's view of the sample with id `id`.
fn sample(read: &serde_json::Value, id: u32) -> &serde_json::Value {
    read["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap()
}

#[tokio::test]
async fn a_panicking_solver_fails_its_sample_and_the_eval_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = ten_with(8, "boom");
    let task = Task::new("bomb", samples(&refs(&inputs)), Arc::new(Bomb))
        .scorer(includes(IncludesOptions::default()));
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(1)
            .fail_on_error(FailOnError::Never)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    assert_eq!(run.log.results.as_ref().unwrap().completed_samples, 9);
    let location = run.location.unwrap();
    let ours = read_eval_log(&location).unwrap();
    let panicked = &ours.samples.as_ref().unwrap()[7];
    let error = panicked.error.as_ref().unwrap();
    assert_eq!(
        error.message,
        "the solver panicked: solver exploded on s8 boom"
    );
    // Where it panicked, as Rust prints a panic.
    assert!(
        error.traceback.contains("sample_panics.rs:"),
        "{}",
        error.traceback
    );
    // What it did before the panic is kept.
    assert_eq!(panicked.messages.len(), 2);
    let Some(read) = common::reference_read(&location) else {
        return;
    };
    assert_eq!(read["header"]["status"], "success");
    assert_eq!(sorted(common::reference_keys(&read)), keys(1..=10));
    assert_eq!(
        sample(&read, 8)["error"],
        "the solver panicked: solver exploded on s8 boom"
    );
    assert_eq!(sample(&read, 7)["scores"]["includes"]["value"], "C");
}

#[tokio::test]
async fn a_panic_with_fail_on_error_ends_the_log_as_error_keeping_the_finished_samples() {
    let dir = tempfile::tempdir().unwrap();
    // Panics in `solve` itself, before it returns a future.
    let inputs = ten_with(8, "bang");
    let task = Task::new("bang", samples(&refs(&inputs)), Arc::new(Bomb))
        .scorer(includes(IncludesOptions::default()));
    let run = eval(&task, EvalOptions::new().max_samples(1).log_dir(dir.path()))
        .await
        .unwrap();
    assert_eq!(run.log.status, "error");
    let error = run.log.error.as_ref().unwrap();
    assert!(
        error
            .message
            .contains("the solver panicked: solver went bang on s8 bang"),
        "{}",
        error.message
    );
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(read["header"]["status"], "error");
    assert!(
        read["header"]["error"]
            .as_str()
            .unwrap()
            .contains("solver went bang"),
        "{}",
        read["header"]["error"]
    );
    // The seven finished before it, and the one that panicked, once each.
    assert_eq!(sorted(common::reference_keys(&read)), keys(1..=8));
    assert_eq!(
        sample(&read, 8)["error"],
        "the solver panicked: solver went bang on s8 bang"
    );
}

#[tokio::test]
async fn a_panicking_scorer_fails_its_sample_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = ten_with(3, "fussy");
    let task = Task::new("fussy", samples(&refs(&inputs)), Arc::new(Bomb)).scorer(Fussy);
    let run = eval(
        &task,
        EvalOptions::new()
            .fail_on_error(FailOnError::Never)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    assert_eq!(run.score("fussy").unwrap().scored_samples, 9);
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(sorted(common::reference_keys(&read)), keys(1..=10));
    assert_eq!(
        sample(&read, 3)["error"],
        "the scorer 'fussy' panicked: scorer choked on s3 fussy"
    );
    assert!(sample(&read, 4)["error"].is_null());
}

#[tokio::test]
async fn a_panic_is_retried_like_any_error() {
    let dir = tempfile::tempdir().unwrap();
    let task = Task::new("retry", samples(&["boom"]), Arc::new(Bomb));
    let run = eval(
        &task,
        EvalOptions::new()
            .retry_on_error(1)
            .fail_on_error(FailOnError::Never)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    let log = read_eval_log(run.location.unwrap()).unwrap();
    let only = &log.samples.unwrap()[0];
    assert_eq!(
        only.error.as_ref().unwrap().message,
        "the solver panicked: solver exploded on boom"
    );
    assert_eq!(only.error_retries.as_ref().unwrap().len(), 1);
}

/// A sandbox that can do nothing and panics when it is torn down.
#[derive(Debug)]
struct Fragile;
impl Drop for Fragile {
    fn drop(&mut self) {
        panic!("sandbox teardown failed");
    }
}
impl Sandbox for Fragile {
    fn name(&self) -> &str {
        "fragile"
    }
    fn workdir(&self) -> &str {
        "/"
    }
    fn exec(&self, _request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("fragile")) })
    }
    fn read_file<'a>(&'a self, _path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("fragile")) })
    }
    fn write_file<'a>(
        &'a self,
        _path: &'a str,
        _contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("fragile")) })
    }
    fn spawn_interactive(
        &self,
        _request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("fragile")) })
    }
}

#[tokio::test]
async fn a_sandbox_whose_setup_panics_fails_only_its_sample() {
    let dir = tempfile::tempdir().unwrap();
    let made = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&made);
    let inputs = ten_with(0, "");
    let task = Task::new("setup", samples(&refs(&inputs)), Arc::new(Bomb))
        .scorer(includes(IncludesOptions::default()))
        .sandbox(move || {
            if counter.fetch_add(1, Ordering::SeqCst) == 2 {
                panic!("no sandbox for you");
            }
            Ok(SandboxHandle::new(NoTeardown))
        });
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(1)
            .fail_on_error(FailOnError::Never)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(made.load(Ordering::SeqCst), 10);
    assert_eq!(run.log.results.as_ref().unwrap().completed_samples, 9);
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(sorted(common::reference_keys(&read)), keys(1..=10));
    assert_eq!(
        sample(&read, 3)["error"],
        "the sample's sandbox setup panicked: no sandbox for you"
    );
}

/// A sandbox that does nothing and goes quietly.
#[derive(Debug)]
struct NoTeardown;
impl Sandbox for NoTeardown {
    fn name(&self) -> &str {
        "quiet"
    }
    fn workdir(&self) -> &str {
        "/"
    }
    fn exec(&self, _request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("quiet")) })
    }
    fn read_file<'a>(&'a self, _path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("quiet")) })
    }
    fn write_file<'a>(
        &'a self,
        _path: &'a str,
        _contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("quiet")) })
    }
    fn spawn_interactive(
        &self,
        _request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("quiet")) })
    }
}

#[tokio::test]
async fn a_sandbox_whose_teardown_panics_fails_its_sample_and_the_eval_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = ten_with(0, "");
    let task = Task::new("teardown", samples(&refs(&inputs)), Arc::new(Bomb))
        .scorer(includes(IncludesOptions::default()))
        .sandbox(|| Ok(SandboxHandle::new(Fragile)));
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(3)
            .fail_on_error(FailOnError::Never)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(sorted(common::reference_keys(&read)), keys(1..=10));
    for s in read["samples"].as_array().unwrap() {
        assert_eq!(
            s["error"],
            "the sample's sandbox teardown panicked: sandbox teardown failed"
        );
    }
}

#[tokio::test]
async fn a_sandbox_whose_teardown_panics_as_its_sample_is_cancelled_does_not_end_the_eval() {
    let dir = tempfile::tempdir().unwrap();
    // Every sample is slow: the stop comes while three run, and the grace is too short.
    let inputs: Vec<String> = (1..=10).map(|i| format!("s{i} slow")).collect();
    let task = Task::new("cut", samples(&refs(&inputs)), Arc::new(Bomb))
        .sandbox(|| Ok(SandboxHandle::new(Fragile)));
    let stop = StopSignal::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.stop();
    });
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(3)
            .fail_on_error(FailOnError::Never)
            .stop_signal(stop)
            .grace(Duration::from_millis(10))
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "cancelled");
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(read["header"]["status"], "cancelled");
    assert!(common::reference_keys(&read).is_empty());
}

/// A scorer whose name panics.
struct Nameless;
impl Scorer for Nameless {
    fn name(&self) -> &str {
        panic!("no name");
    }

    fn score<'a>(
        &'a self,
        _state: &'a TaskState,
        _target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>> {
        Box::pin(async { Ok(Score::new("C")) })
    }
}

#[tokio::test]
async fn a_scorer_whose_name_panics_is_an_error_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let task = Task::new("nameless", samples(&["a"]), Arc::new(Bomb)).scorer(Nameless);
    let err = eval(&task, EvalOptions::new().log_dir(dir.path()))
        .await
        .unwrap_err();
    assert!(matches!(err, actuator_eval::EvalError::Panicked { .. }));
    assert_eq!(
        err.to_string(),
        "Cannot start the evaluation: a scorer's name or metrics panicked: no name"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
