//! What a user sees when an evaluation goes wrong: a solver whose tools need a sandbox the task
//! does not give is refused before anything runs; failed samples' errors come back in the
//! result (with or without a log) and its `Display` says what went wrong; the log names the
//! model the samples called.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::react;
use actuator_eval::{Dataset, EvalError, EvalOptions, FailOnError, Sample, Task, eval};
use actuator_model::{BoxFuture, GenerateRequest, Model, ModelError, ModelOutput, RetryReport};
use actuator_multi::as_solver;
use actuator_sandbox::{LocalSandbox, SandboxHandle};
use common::*;

fn sandbox_task(model: Arc<dyn Model>) -> Task {
    let agent = react()
        .model(model)
        .tools([add_tool().with_requirement(SandboxHandle::requirement())])
        .build()
        .unwrap();
    Task::new(
        "sandboxed",
        Dataset::new([Sample::new("What is 1 + 2?", "3")]),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
}

#[tokio::test]
async fn a_solver_needing_a_sandbox_the_task_lacks_is_refused_before_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let err = eval(
        &sandbox_task(arithmetic_model()),
        EvalOptions::new().log_dir(dir.path()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, EvalError::MissingResource { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("Cannot start the evaluation: the tool 'add' needs a sandbox"),
        "{message}"
    );
    assert!(message.contains("Task::sandbox("), "{message}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // With a sandbox per sample, or the opt-out, it runs.
    let task = sandbox_task(arithmetic_model()).sandbox(|| {
        LocalSandbox::builder()
            .unconfined()
            .build()
            .map(SandboxHandle::new)
    });
    let run = eval(&task, EvalOptions::new()).await.unwrap();
    assert_eq!(run.log.status, "success", "{run}");
    let run = eval(
        &sandbox_task(arithmetic_model()),
        EvalOptions::new().allow_missing_resources(),
    )
    .await
    .unwrap();
    assert_eq!(run.error_count, 0, "{run}");
}

/// A model whose server is down: each request is retried once, then fails.
struct Down;

impl Model for Down {
    fn name(&self) -> &str {
        "openai-api/local"
    }
    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            request
                .wait_for_retry(RetryReport::new(
                    1,
                    Duration::from_millis(1),
                    "connection refused",
                ))
                .await;
            Err(ModelError::other(
                "The connection to openai-api at http://127.0.0.1:9/v1 failed: connection refused",
            ))
        })
    }
}

#[tokio::test]
async fn failed_samples_errors_are_in_the_result_without_a_log() {
    let task = sandbox_task(Arc::new(Down)).sandbox(|| {
        LocalSandbox::builder()
            .unconfined()
            .build()
            .map(SandboxHandle::new)
    });
    let run = eval(&task, EvalOptions::new()).await.unwrap();
    assert_eq!(run.log.status, "error");
    assert!(run.location.is_none());
    assert_eq!(run.error_count, 1);
    let first = run.first_error().unwrap();
    assert_eq!(first.id.to_string(), "1");
    assert_eq!(first.epoch, 1);
    assert!(first.message.contains("connection refused"), "{first}");
    let shown = run.to_string();
    assert!(
        shown.starts_with(
            "eval 'sandboxed' error: 0 of 1 samples completed, 1 failed (model openai-api/local)"
        ),
        "{shown}"
    );
    // The evaluation's error quotes the sample's once, and no metric over no scored sample.
    assert!(
        shown.contains("(fail_on_error is true); sample 1 (epoch 1): "),
        "{shown}"
    );
    assert_eq!(shown.matches("connection refused").count(), 1, "{shown}");
    assert!(!shown.contains("accuracy"), "{shown}");
    assert!(shown.contains("no log written"), "{shown}");

    // When sample errors do not fail the evaluation, the first is still shown.
    let run = eval(&task, EvalOptions::new().fail_on_error(FailOnError::Never))
        .await
        .unwrap();
    assert_eq!(run.log.status, "success");
    assert_eq!(run.error_count, 1);
    let shown = run.to_string();
    assert!(
        shown.contains("first error, sample 1 (epoch 1): "),
        "{shown}"
    );
    assert!(shown.contains("connection refused"), "{shown}");
}

#[tokio::test]
async fn the_log_names_the_model_the_samples_called_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let run = eval(&arithmetic_task(2), EvalOptions::new().log_dir(dir.path()))
        .await
        .unwrap();
    assert_eq!(run.log.eval.model, "mockllm/model");
    let read = actuator_eval::read_eval_log(run.location.as_ref().unwrap()).unwrap();
    assert_eq!(read.eval.model, "mockllm/model");
    let shown = run.to_string();
    assert!(shown.contains("log: "), "{shown}");
    assert!(shown.contains("/accuracy: "), "{shown}");

    let run = eval(
        &arithmetic_task(1),
        EvalOptions::new().model("openai/gpt-4.1-mini"),
    )
    .await
    .unwrap();
    assert_eq!(run.log.eval.model, "openai/gpt-4.1-mini");
}
