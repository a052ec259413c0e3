//! An evaluation's samples share their model endpoint's concurrency controller; the run shows
//! each model's throughput on the progress display and records it in the log:
//! `stats.connection_limit_history` as the reference writes it (its reader reads it back) and
//! `stats.model_throughput` (which its reader ignores).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_eval::log::schema::LimitChangeReason;
use actuator_eval::{EvalOptions, LogFormat, eval};
use actuator_model::concurrency::{
    AdaptiveConcurrency, ConcurrencyController, ConnectionLimit, connection_controller,
};
use actuator_model::{BoxFuture, FunctionModel, GenerateRequest, Model, ModelError, ModelOutput};

/// The arithmetic model behind an endpoint's controller, as a provider uses it: a slot per
/// request, the first answer a rate limit (a back-off), every other request a success.
struct Limited {
    inner: Arc<FunctionModel>,
    controller: Arc<ConcurrencyController>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Model for Limited {
    fn name(&self) -> &str {
        "stub/limited"
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            let permit = request.wait_queued(self.controller.acquire()).await;
            if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                self.controller.rate_limited(None);
            }
            let out = self.inner.generate(request).await;
            drop(permit);
            self.controller.success(false);
            out
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_records_each_models_limit_changes_and_throughput() {
    let adaptive = AdaptiveConcurrency::new(1, 4, 8).unwrap();
    let controller = connection_controller(
        "eval-test|limited",
        "stub/limited",
        &ConnectionLimit::Adaptive(adaptive),
    );
    let model = Limited {
        inner: common::arithmetic_model(),
        controller: controller.clone(),
        calls: Default::default(),
    };
    let dir = tempfile::tempdir().unwrap();
    let task = common::arithmetic_task_on(6, model);
    let run = eval(
        &task,
        EvalOptions::new()
            .model("stub/limited")
            .log_dir(dir.path())
            .log_format(LogFormat::Eval),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");

    let stats = &run.log.stats;
    let throughput = &stats.model_throughput["stub/limited"];
    // Two generations a sample (add, then submit), every one through the controller.
    assert_eq!(throughput.requests, controller.stats().requests);
    assert!(throughput.requests >= 12, "{throughput:?}");
    assert_eq!(throughput.back_offs, 1);
    assert!(throughput.adaptive);
    assert!(throughput.requests_per_second > 0.0);
    // The controllers belong to the process: the other test's may be in the log too.
    let ours: Vec<_> = stats
        .connection_limit_history
        .iter()
        .filter(|c| c.model == "stub/limited")
        .collect();
    assert_eq!(ours.len(), 1);
    let change = ours[0];
    assert_eq!(change.model, "stub/limited");
    assert_eq!((change.old_limit, change.new_limit), (4, 3));
    assert_eq!(change.reason, LimitChangeReason::RateLimit);

    // The log holds both, and the reference's reader reads the history back as we wrote it.
    let log = common::eval_logs(dir.path()).remove(0);
    let ours = actuator_eval::read_eval_log(&log).unwrap();
    assert_eq!(ours.stats, *stats);
    let Some(theirs) = common::reference_read(&log) else {
        return;
    };
    let history = &theirs["header"]["stats"]["connection_limit_history"];
    assert_eq!(
        history,
        &serde_json::to_value(&stats.connection_limit_history).unwrap()
    );
    assert!(
        history
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["model"] == "stub/limited" && c["reason"] == "rate_limit")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_shards_keep_every_limit_change_and_add_up_their_throughput() {
    // No cooldown: each shard's first answer cuts the limit again (4 → 3, then 3 → 2).
    let adaptive = AdaptiveConcurrency::new(1, 4, 8)
        .unwrap()
        .cooldown(std::time::Duration::ZERO);
    let controller = connection_controller(
        "eval-test|shards",
        "stub/sharded",
        &ConnectionLimit::Adaptive(adaptive),
    );
    let dir = tempfile::tempdir().unwrap();
    let whole = common::arithmetic_task(4);
    let mut logs = Vec::new();
    let mut requests = 0;
    for i in 0..2 {
        let mut part = common::arithmetic_task_on(
            4,
            Limited {
                inner: common::arithmetic_model(),
                controller: controller.clone(),
                calls: Default::default(),
            },
        );
        part.dataset = whole.dataset.shard(i, 2);
        let run = eval(
            &part,
            EvalOptions::new().log_dir(dir.path().join(format!("shard-{i}"))),
        )
        .await
        .unwrap();
        requests += run.log.stats.model_throughput["stub/sharded"].requests;
        logs.push(run.location.unwrap());
    }
    let merged =
        actuator_eval::log::merge_logs(&logs, &dir.path().join("merged"), LogFormat::Eval).unwrap();
    let merged = actuator_eval::read_eval_log(&merged.path).unwrap();
    let limits: Vec<_> = merged
        .stats
        .connection_limit_history
        .iter()
        .filter(|c| c.model == "stub/sharded")
        .map(|c| (c.old_limit, c.new_limit))
        .collect();
    assert_eq!(limits, [(4, 3), (3, 2)]);
    let throughput = &merged.stats.model_throughput["stub/sharded"];
    assert_eq!(throughput.requests, requests);
    assert_eq!(throughput.back_offs, 2);
    assert!(throughput.requests_per_second > 0.0);
}
