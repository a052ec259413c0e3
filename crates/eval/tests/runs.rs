//! How eval runs samples: concurrency bounded by max_samples, fail-on-error and retries,
//! epochs, a stop, and a log that stays readable when the run is cut off.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actuator_agent::{AgentError, AgentErrorKind, RunContext};
use actuator_eval::{
    Dataset, EvalOptions, FailOnError, LogFormat, Sample, StopSignal, Task, eval, read_eval_log,
    scorers::{IncludesOptions, includes},
};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};

/// Answers with the sample's input after `delay`, failing the first `fail_first` attempts of
/// samples whose input contains "flaky" and every attempt of those containing "broken".
struct Echo {
    delay: Duration,
    running: AtomicUsize,
    peak: AtomicUsize,
    attempts: AtomicUsize,
    fail_first: usize,
}

impl Echo {
    fn new(delay: Duration) -> Arc<Self> {
        Arc::new(Echo {
            delay,
            running: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            attempts: AtomicUsize::new(0),
            fail_first: 1,
        })
    }
}

impl Solver for Echo {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            self.running.fetch_sub(1, Ordering::SeqCst);
            let input = state.messages[0].text();
            let attempt = self.attempts.fetch_add(1, Ordering::SeqCst);
            let fails =
                input.contains("broken") || (input.contains("flaky") && attempt < self.fail_first);
            if fails {
                return Err(AgentError::new(AgentErrorKind::Failed(format!(
                    "could not do {input}"
                ))));
            }
            state.output = ModelOutput::from_content("echo", input.clone());
            state.messages.push(ChatMessage::assistant(input));
            Ok(())
        })
    }
}

fn task(solver: Arc<Echo>, inputs: &[&str]) -> Task {
    Task::new(
        "echo",
        Dataset::new(inputs.iter().map(|i| Sample::new(*i, *i))),
        solver,
    )
    .scorer(includes(IncludesOptions::default()))
}

#[tokio::test]
async fn samples_run_concurrently_up_to_max_samples() {
    let solver = Echo::new(Duration::from_millis(30));
    let inputs: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let run = eval(
        &task(solver.clone(), &refs),
        EvalOptions::new().max_samples(7),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    assert_eq!(run.log.results.as_ref().unwrap().completed_samples, 40);
    let peak = solver.peak.load(Ordering::SeqCst);
    assert!((2..=7).contains(&peak), "peak concurrency {peak}");
}

#[tokio::test]
async fn fail_on_error_policies() {
    let inputs = ["a", "broken 1", "b", "broken 2", "c"];
    let any = eval(
        &task(Echo::new(Duration::ZERO), &inputs),
        EvalOptions::new().max_samples(1),
    )
    .await
    .unwrap();
    assert_eq!(any.log.status, "error");
    assert!(
        any.log
            .error
            .as_ref()
            .unwrap()
            .message
            .contains("1 of 5 samples failed"),
        "{:?}",
        any.log.error
    );

    let never = eval(
        &task(Echo::new(Duration::ZERO), &inputs),
        EvalOptions::new().fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(never.log.status, "success");
    assert_eq!(never.log.results.as_ref().unwrap().completed_samples, 3);
    assert_eq!(never.score("includes").unwrap().unscored_samples, 2);

    // As the reference's `_should_eval_fail`: a count is reached, not exceeded.
    let count = eval(
        &task(Echo::new(Duration::ZERO), &inputs),
        EvalOptions::new().fail_on_error(FailOnError::Count(3)),
    )
    .await
    .unwrap();
    assert_eq!(count.log.status, "success", "two errors are allowed");
    let reached = eval(
        &task(Echo::new(Duration::ZERO), &inputs),
        EvalOptions::new()
            .max_samples(1)
            .fail_on_error(FailOnError::Count(2)),
    )
    .await
    .unwrap();
    assert_eq!(reached.log.status, "error", "two errors reach 2");
    assert!(
        reached.log.error.as_ref().unwrap().message.starts_with(
            "2 of 5 samples failed (fail_on_error is 2); sample 4 (epoch 1): could not do broken 2"
        ),
        "{:?}",
        reached.log.error
    );
    let fraction = eval(
        &task(Echo::new(Duration::ZERO), &inputs),
        EvalOptions::new().fail_on_error(FailOnError::Fraction(0.3)),
    )
    .await
    .unwrap();
    assert_eq!(fraction.log.status, "error", "40% failed");
}

#[tokio::test]
async fn a_sample_that_errors_is_retried_and_its_earlier_errors_kept() {
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &task(Echo::new(Duration::ZERO), &["flaky"]),
        EvalOptions::new().retry_on_error(2).log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    let log = read_eval_log(run.location.unwrap()).unwrap();
    let sample = &log.samples.unwrap()[0];
    assert!(sample.error.is_none());
    let retries = sample.error_retries.as_ref().unwrap();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].message, "could not do flaky");
}

#[tokio::test]
async fn every_epoch_of_every_sample_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &task(Echo::new(Duration::ZERO), &["a", "b", "c"]).epochs(2),
        EvalOptions::new()
            .log_dir(dir.path())
            .log_format(LogFormat::Json),
    )
    .await
    .unwrap();
    assert_eq!(run.log.results.as_ref().unwrap().total_samples, 6);
    let log = read_eval_log(run.location.unwrap()).unwrap();
    let keys: Vec<(String, u32)> = log
        .samples
        .unwrap()
        .iter()
        .map(|s| (s.id.to_string(), s.epoch))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("1".into(), 1),
            ("1".into(), 2),
            ("2".into(), 1),
            ("2".into(), 2),
            ("3".into(), 1),
            ("3".into(), 2)
        ]
    );
}

#[tokio::test]
async fn duplicate_sample_ids_are_refused_before_anything_runs() {
    let solver = Echo::new(Duration::ZERO);
    let t = Task::new(
        "dup",
        Dataset::new([
            Sample::new("a", "a").with_id(1),
            Sample::new("b", "b").with_id(1),
        ]),
        solver.clone(),
    );
    let err = eval(&t, EvalOptions::new()).await.unwrap_err();
    assert!(
        err.to_string().contains("Two samples have the id 1"),
        "{err}"
    );
    assert_eq!(solver.attempts.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_stop_lets_running_samples_finish_within_the_grace_and_starts_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let solver = Echo::new(Duration::from_millis(50));
    let inputs: Vec<String> = (0..100).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let stop = StopSignal::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(120)).await;
        stopper.stop();
    });
    let run = eval(
        &task(solver.clone(), &refs),
        EvalOptions::new()
            .max_samples(4)
            .log_dir(dir.path())
            .stop_signal(stop)
            .grace(Duration::from_secs(5)),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "cancelled");
    let done = run.log.results.as_ref().unwrap().completed_samples;
    assert!((4..100).contains(&done), "{done} samples completed");
    // The ones running when the stop came finished (the grace was long enough).
    assert_eq!(solver.running.load(Ordering::SeqCst), 0);
    let log = read_eval_log(run.location.unwrap()).unwrap();
    assert_eq!(log.status, "cancelled");
    assert_eq!(log.samples.unwrap().len(), done);
}

#[tokio::test]
async fn a_run_cut_off_leaves_a_log_with_the_samples_flushed_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let solver = Echo::new(Duration::from_millis(30));
    let inputs: Vec<String> = (0..400).map(|i| format!("s{i}")).collect();
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let t = task(solver, &refs);
    // About 160 samples a second; the first write comes after a second.
    let cut = tokio::time::timeout(
        Duration::from_millis(1600),
        eval(
            &t,
            EvalOptions::new()
                .max_samples(5)
                .log_dir(dir.path())
                .log_buffer(5),
        ),
    )
    .await;
    assert!(cut.is_err(), "the run was cut off");
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = read_eval_log(&file).unwrap();
    assert_eq!(log.status, "started");
    let samples = log.samples.unwrap();
    // About 160 samples a second, written once the first second has passed.
    assert!(
        !samples.is_empty() && samples.len() < 400,
        "{} samples",
        samples.len()
    );
    // The reference reads the unfinished log too.
    if let Some(python) = common::inspect_python() {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_log.py");
        let out = std::process::Command::new(python)
            .arg(script)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(read["header"]["status"], "started");
        assert_eq!(read["samples"].as_array().unwrap().len(), samples.len());
    }
}

/// Appends its tag to the conversation; "stop" marks the state completed.
struct Tag(&'static str);
impl Solver for Tag {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            state.messages.push(ChatMessage::assistant(self.0));
            state.output = ModelOutput::from_content("tag", self.0);
            if self.0 == "stop" {
                state.completed = true;
            }
            Ok(())
        })
    }
}

#[tokio::test]
async fn a_chain_runs_its_solvers_in_turn_until_one_completes_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let solver = actuator_eval::chain(vec![
        Arc::new(Tag("first")),
        Arc::new(Tag("stop")),
        Arc::new(Tag("never")),
    ]);
    let t = Task::new(
        "chained",
        Dataset::new([Sample::new("go", "stop")]),
        Arc::new(solver),
    )
    .scorer(includes(IncludesOptions::default()));
    let run = eval(&t, EvalOptions::new().log_dir(dir.path()))
        .await
        .unwrap();
    assert_eq!(run.score("includes").unwrap().metric("accuracy"), Some(1.0));
    let log = read_eval_log(run.location.unwrap()).unwrap();
    let texts: Vec<String> = log.samples.unwrap()[0]
        .messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts, vec!["go", "first", "stop"]);
}
