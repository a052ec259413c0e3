//! Each sample gets a sandbox of its own (a run resource its tools find), gone when it ends.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{AgentError, AgentErrorKind, RunContext};
use actuator_eval::{
    Dataset, EvalOptions, FailOnError, Sample, Task, eval,
    scorers::{IncludesOptions, includes},
};
use actuator_model::{BoxFuture, ModelOutput};
use actuator_multi::{Solver, TaskState};
use actuator_sandbox::{ExecRequest, LocalSandbox, SandboxError, SandboxHandle};

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
