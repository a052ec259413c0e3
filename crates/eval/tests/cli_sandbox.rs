//! `eval --sandbox` gives every sample the sandbox it names in place of the task's, the log
//! names it, and `retry` gives it again from the log: a retried sample runs in the same kind
//! of sandbox as the run it retries.

#![cfg(feature = "cli")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actuator_agent::{AgentError, AgentErrorKind, RunContext};
use actuator_eval::cli::{self, Exit, Tasks};
use actuator_eval::{Dataset, Sample, Task, read_eval_log};
use actuator_model::{BoxFuture, ModelOutput};
use actuator_multi::{Solver, TaskState};
use actuator_sandbox::{ExecRequest, LocalSandbox, SandboxHandle};

/// Says where its sandbox runs (`docker` inside a container, `local` otherwise); fails while
/// `failing` is set, and without a sandbox.
struct Where {
    failing: Arc<AtomicBool>,
}

impl Solver for Where {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let failed = |m: String| AgentError::new(AgentErrorKind::Failed(m));
            if self.failing.load(Ordering::SeqCst) {
                return Err(failed("not yet".into()));
            }
            let sandbox = cx
                .resource::<SandboxHandle>()
                .ok_or_else(|| failed("no sandbox".into()))?;
            let script = "if [ -e /.dockerenv ]; then echo docker; else echo local; fi";
            let out = sandbox
                .sandbox()
                .exec(ExecRequest::new(["sh", "-c", script]))
                .await
                .map_err(|e| failed(e.to_string()))?;
            state.output = ModelOutput::from_content("sh", out.stdout.trim().to_owned());
            Ok(())
        })
    }
}

fn tasks(failing: Arc<AtomicBool>) -> Tasks {
    Tasks::new("test-evals").task("where", "Says where it runs", move |_| {
        let dataset = Dataset::new((1..=2).map(|i| Sample::new(format!("q{i}"), "")));
        Ok(Task::new(
            "where",
            dataset,
            Arc::new(Where {
                failing: failing.clone(),
            }),
        ))
    })
}

async fn run(tasks: &Tasks, args: &[&str]) -> Exit {
    cli::run(
        tasks,
        std::iter::once("test-evals").chain(args.iter().copied()),
    )
    .await
}

/// Each sample's output, and the sandbox the log names.
fn outputs(log: &std::path::Path) -> (Vec<String>, Option<String>) {
    let log = read_eval_log(log).unwrap();
    let outputs = log
        .samples
        .unwrap()
        .iter()
        .map(|s| {
            s.output["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    (outputs, log.eval.sandbox.map(|s| s.kind))
}

/// `eval --sandbox KIND` runs where KIND says; a failed run retried runs there again.
async fn sandbox_given_and_given_again_on_retry(kind: &str, flag: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let failing = Arc::new(AtomicBool::new(false));
    let tasks = tasks(failing.clone());
    let args = ["eval", "where", "--sandbox", flag, "--log-dir", d];
    assert_eq!(run(&tasks, &args).await, Exit::Success);
    let log = common::eval_logs(dir.path()).pop().unwrap();
    assert_eq!(
        outputs(&log),
        (vec![kind.to_owned(); 2], Some(kind.to_owned()))
    );

    // A run that fails, then its retry: the task has no sandbox of its own, so only the
    // log can say which one the retried samples get.
    let failed_dir = dir.path().join("failed");
    let f = failed_dir.to_str().unwrap();
    failing.store(true, Ordering::SeqCst);
    let args = ["eval", "where", "--sandbox", flag, "--log-dir", f];
    assert_eq!(run(&tasks, &args).await, Exit::Failed);
    failing.store(false, Ordering::SeqCst);
    let failed = common::eval_logs(&failed_dir).pop().unwrap();
    assert_eq!(
        run(&tasks, &["retry", failed.to_str().unwrap()]).await,
        Exit::Success
    );
    let retried = common::eval_logs(&failed_dir)
        .into_iter()
        .find(|l| *l != failed)
        .unwrap();
    assert_eq!(
        outputs(&retried),
        (vec![kind.to_owned(); 2], Some(kind.to_owned()))
    );
}

#[tokio::test]
async fn a_local_sandbox_named_on_the_command_line_and_again_on_retry() {
    if std::env::var_os("CI").is_none() && LocalSandbox::new().is_err() {
        return; // bubblewrap is installed by scripts/setup-test-env; CI always has it
    }
    sandbox_given_and_given_again_on_retry("local", "local").await;
}

#[cfg(feature = "docker")]
#[tokio::test]
async fn a_docker_sandbox_named_on_the_command_line_and_again_on_retry() {
    let Some(_lock) = actuator_sandbox::testing::docker_engine(false).unwrap() else {
        return;
    };
    sandbox_given_and_given_again_on_retry("docker", "docker").await;
}
