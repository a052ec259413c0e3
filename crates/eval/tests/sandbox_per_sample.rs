//! Each sample gets a sandbox of its own (a run resource its tools find), gone when it ends.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use actuator_agent::{AgentError, AgentErrorKind, RunContext};
use actuator_eval::{
    Dataset, EvalOptions, FailOnError, Sample, Task, eval,
    scorers::{IncludesOptions, includes},
};
use actuator_model::{BoxFuture, ModelOutput};
use actuator_multi::{Solver, TaskState};
use actuator_sandbox::{
    ExecOutput, ExecRequest, InteractiveProcess, LocalSandbox, Sandbox, SandboxError,
    SandboxHandle, SessionRequest,
};

/// Lists the sandbox's working directory, then leaves a file in it.
struct Lister;
impl Solver for Lister {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let sandbox = cx
                .resource::<SandboxHandle>()
                .ok_or_else(|| AgentError::new(AgentErrorKind::Failed("no sandbox".into())))?;
            let out = sandbox
                .sandbox()
                .exec(ExecRequest::new(["sh", "-c", "ls; touch left-behind"]))
                .await
                .map_err(|e| AgentError::new(AgentErrorKind::Failed(e.to_string())))?;
            state.output =
                ModelOutput::from_content("sh", format!("listing:[{}]", out.stdout.trim()));
            Ok(())
        })
    }
}

#[tokio::test]
async fn every_sample_has_a_fresh_sandbox() {
    if std::env::var_os("CI").is_none() && LocalSandbox::new().is_err() {
        return; // bubblewrap is installed by scripts/setup-test-env; CI always has it
    }
    let task = Task::new(
        "sandboxed",
        Dataset::new((0..3).map(|i| Sample::new(format!("s{i}"), "listing:[]"))),
        Arc::new(Lister),
    )
    .scorer(includes(IncludesOptions::default()))
    .sandbox(|| LocalSandbox::new().map(SandboxHandle::new));
    let run = eval(&task, EvalOptions::new().max_samples(1))
        .await
        .unwrap();
    assert_eq!(run.log.status, "success");
    // No sample saw the file the one before it left.
    assert_eq!(run.score("includes").unwrap().metric("accuracy"), Some(1.0));

    // A sandbox that cannot be made fails its sample with the reason.
    let broken = Task::new(
        "broken",
        Dataset::new([Sample::new("s", "")]),
        Arc::new(Lister),
    )
    .sandbox(|| Err(SandboxError::unavailable("no bwrap here")));
    let run = eval(&broken, EvalOptions::new().fail_on_error(FailOnError::Any))
        .await
        .unwrap();
    assert_eq!(run.log.status, "error");
}

/// A sandbox that records its cleanup, and whether each drop came after it.
#[derive(Debug)]
struct Tracked {
    cleanups: Arc<AtomicUsize>,
    clean_drops: Arc<AtomicUsize>,
    cleaned: AtomicBool,
    fail: bool,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if self.cleaned.load(Ordering::SeqCst) {
            self.clean_drops.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Sandbox for Tracked {
    fn name(&self) -> &str {
        "tracked"
    }
    fn workdir(&self) -> &str {
        "/"
    }
    fn exec(&self, _request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("tracked")) })
    }
    fn read_file<'a>(&'a self, _path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("tracked")) })
    }
    fn write_file<'a>(
        &'a self,
        _path: &'a str,
        _contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("tracked")) })
    }
    fn spawn_interactive(
        &self,
        _request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>> {
        Box::pin(async { Err(SandboxError::unavailable("tracked")) })
    }
    fn cleanup(&self) -> BoxFuture<'_, Result<(), SandboxError>> {
        Box::pin(async move {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            self.cleanups.fetch_add(1, Ordering::SeqCst);
            self.cleaned.store(true, Ordering::SeqCst);
            if self.fail {
                Err(SandboxError::unavailable("the container would not stop"))
            } else {
                Ok(())
            }
        })
    }
}

/// Does nothing.
struct Idle;
impl Solver for Idle {
    fn solve<'a>(
        &'a self,
        _state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn an_async_sandbox_is_cleaned_up_once_per_sample_before_it_is_dropped() {
    let (cleanups, clean_drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let tracked = |fail: bool| {
        let (cleanups, clean_drops) = (Arc::clone(&cleanups), Arc::clone(&clean_drops));
        move || {
            let (cleanups, clean_drops) = (Arc::clone(&cleanups), Arc::clone(&clean_drops));
            async move {
                // Made asynchronously, as a container is.
                tokio::task::yield_now().await;
                Ok(SandboxHandle::new(Tracked {
                    cleanups,
                    clean_drops,
                    cleaned: AtomicBool::new(false),
                    fail,
                }))
            }
        }
    };
    let task = Task::new(
        "cleaned",
        Dataset::new((0..4).map(|i| Sample::new(format!("s{i}"), ""))),
        Arc::new(Idle),
    )
    .sandbox_async(tracked(false));
    let run = eval(&task, EvalOptions::new().max_samples(2))
        .await
        .unwrap();
    assert_eq!(run.log.status, "success");
    assert_eq!(cleanups.load(Ordering::SeqCst), 4);
    assert_eq!(
        clean_drops.load(Ordering::SeqCst),
        4,
        "each dropped after its cleanup"
    );

    // A cleanup that fails is its sample's error, with the reason.
    let task = Task::new(
        "dirty",
        Dataset::new([Sample::new("s", "")]),
        Arc::new(Idle),
    )
    .sandbox_async(tracked(true));
    let run = eval(&task, EvalOptions::new().fail_on_error(FailOnError::Never))
        .await
        .unwrap();
    assert_eq!(run.error_count, 1);
    assert!(
        run.errors[0]
            .message
            .contains("The sample's sandbox could not be cleaned up: the container would not stop"),
        "{:?}",
        run.errors[0]
    );
}
