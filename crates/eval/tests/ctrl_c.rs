//! Ctrl-C (with `EvalOptions::ctrl_c`) stops the run as its stop signal does, even when it
//! comes as the first sample starts: the log ends `cancelled` with the finished samples, as
//! the reference's own `read_eval_log` reads it, and the process lives on.
//!
//! The test interrupts its own process, so this binary has this one test.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_agent::{AgentError, RunContext};
use actuator_eval::{Dataset, EvalOptions, Sample, Task, eval};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};
use rustix::process::{Signal, getpid, kill_process};

/// Interrupts the process as the first sample starts, then echoes after a short while.
struct Interrupting {
    sent: AtomicBool,
}

impl Solver for Interrupting {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            if !self.sent.swap(true, Ordering::SeqCst) {
                kill_process(getpid(), Signal::INT).unwrap();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            let input = state.messages[0].text();
            state.messages.push(ChatMessage::assistant(input.clone()));
            state.output = ModelOutput::from_content("echo", input);
            Ok(())
        })
    }
}

// One thread: the eval's own future is the first thing that runs, so a Ctrl-C handler that
// only a spawned task would register is not there yet when the first sample starts.
#[tokio::test(flavor = "current_thread")]
async fn ctrl_c_as_the_first_sample_starts_stops_the_run_and_the_log_ends_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let task = Task::new(
        "interrupted",
        Dataset::new((1..=20).map(|i| Sample::new(format!("s{i}"), format!("s{i}")))),
        Arc::new(Interrupting {
            sent: AtomicBool::new(false),
        }),
    );
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(2)
            .ctrl_c(true)
            .grace(Duration::from_secs(5))
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "cancelled");
    let completed = run.log.results.as_ref().unwrap().completed_samples;
    // The two running at the Ctrl-C finished within the grace; no more started.
    assert_eq!(completed, 2);
    let Some(read) = common::reference_read(&run.location.unwrap()) else {
        return;
    };
    assert_eq!(read["header"]["status"], "cancelled");
    assert_eq!(common::reference_keys(&read).len(), 2);
}
