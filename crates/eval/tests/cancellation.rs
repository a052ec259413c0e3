//! A stopped evaluation (its `StopSignal`) writes every sample that finished, once, and ends
//! its log `cancelled`, as the reference's own `read_eval_log` reads it.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actuator_agent::{AgentError, RunContext};
use actuator_eval::{
    Dataset, EvalOptions, Sample, StopSignal, Task, eval, read_eval_log,
    scorers::{IncludesOptions, includes},
};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};

/// Echoes its input after `delay`; gives `stop` when `stop_after` samples have finished.
struct Slow {
    delay: Duration,
    finished: AtomicUsize,
    stop_after: usize,
    stop: StopSignal,
}

impl Solver for Slow {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            let input = state.messages[0].text();
            state.messages.push(ChatMessage::assistant(input.clone()));
            state.output = ModelOutput::from_content("slow", input);
            if self.finished.fetch_add(1, Ordering::SeqCst) + 1 == self.stop_after {
                self.stop.stop();
            }
            Ok(())
        })
    }
}

/// A run of 40 samples, four at a time, stopped when six have finished; the number that
/// finished, and what the reference reads (without it, what `read_eval_log` reads).
async fn stopped_run(grace: Duration) -> (usize, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let stop = StopSignal::new();
    let solver = Arc::new(Slow {
        delay: Duration::from_millis(100),
        finished: AtomicUsize::new(0),
        stop_after: 6,
        stop: stop.clone(),
    });
    let task = Task::new(
        "stopped",
        Dataset::new((1..=40).map(|i| Sample::new(format!("s{i}"), format!("s{i}")))),
        solver,
    )
    .scorer(includes(IncludesOptions::default()));
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(4)
            // Nothing is written before the stop: the finished samples are all buffered.
            .log_buffer(100)
            .stop_signal(stop)
            .grace(grace)
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "cancelled");
    let completed = run.log.results.as_ref().unwrap().completed_samples;
    let location = run.location.unwrap();
    let read = common::reference_read(&location).unwrap_or_else(|| {
        let ours = read_eval_log(&location).unwrap();
        serde_json::json!({
            "header": {"status": ours.status},
            "samples": ours.samples.unwrap().iter()
                .map(|s| serde_json::json!({"id": s.id.to_string(), "epoch": s.epoch}))
                .collect::<Vec<_>>(),
        })
    });
    (completed, read)
}

/// Each sample once, and how many.
fn distinct_samples(read: &serde_json::Value) -> usize {
    let keys = common::reference_keys(read);
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "each sample once: {keys:?}");
    keys.len()
}

#[tokio::test]
async fn a_stopped_run_keeps_every_finished_sample_once_and_ends_cancelled() {
    // A long grace: the samples running at the stop finish, and are written.
    let (completed, read) = stopped_run(Duration::from_secs(5)).await;
    assert!((6..40).contains(&completed), "{completed}");
    assert_eq!(read["header"]["status"], "cancelled");
    assert_eq!(distinct_samples(&read), completed);
}

#[tokio::test]
async fn a_stopped_run_whose_grace_runs_out_keeps_the_samples_finished_before() {
    // No grace: the samples running at the stop are cancelled; those finished are kept.
    let (completed, read) = stopped_run(Duration::ZERO).await;
    assert!((6..40).contains(&completed), "{completed}");
    assert_eq!(read["header"]["status"], "cancelled");
    assert_eq!(distinct_samples(&read), completed);
}

#[tokio::test]
async fn a_stop_given_as_the_only_running_sample_ends_is_cancelled_not_success() {
    // One sample at a time: the stop comes as the only running sample ends, so the samples
    // left are never started and the stream of work ends at once. That end must not read as
    // a run that did everything (it did, one time in two, before the stop was checked first).
    for round in 0..40 {
        let stop = StopSignal::new();
        let solver = Arc::new(Slow {
            delay: Duration::ZERO,
            finished: AtomicUsize::new(0),
            stop_after: 3,
            stop: stop.clone(),
        });
        let task = Task::new(
            "stopped",
            Dataset::new((1..=20).map(|i| Sample::new(format!("s{i}"), format!("s{i}")))),
            solver,
        );
        let run = eval(&task, EvalOptions::new().max_samples(1).stop_signal(stop))
            .await
            .unwrap();
        assert_eq!(run.log.status, "cancelled", "round {round}");
        assert_eq!(
            run.log.results.unwrap().completed_samples,
            3,
            "round {round}"
        );
    }
}
