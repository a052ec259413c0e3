//! W9: an evaluation of 10 000 samples (`--samples N` to change, `--quick` for 1 000): a react
//! agent on a model that computes its answers (two turns: `add`, then `submit`), 100 samples
//! at once (`--max-samples N` to change), the `.eval` log written as samples finish. Reports
//! wall time, samples per second and peak RSS (VmHWM), then reads the log back and checks that
//! every sample is there once, in order, with its score. Prints `RESULT {json}` lines like the
//! Python reference (`bench/python-reference/w9_eval.py`).
//!
//! The model answers at once, so a sample runs from its first generation to its last without
//! letting another start: whatever `--max-samples` says, one sample is in flight. With
//! `--model yield` it yields to the runtime once per generation, as a model behind a network
//! does, and every sample allowed in flight is alive together. The most samples seen between
//! their first and last generation at once is printed as "in flight". `--log-dir DIR` keeps
//! the log there (by default it goes to a temporary directory, removed at the end).

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use actuator_eval::{EvalOptions, eval, read_eval_log};
use actuator_model::{
    BoxFuture, ChatMessage, FunctionModel, GenerateRequest, Model, ModelError, ModelOutput,
};
use serde_json::json;

/// The arithmetic model, yielding once per generation when `yielding`, counting the samples
/// between their first generation (no tool result yet) and their last (the submit).
struct Gauged {
    inner: Arc<FunctionModel>,
    yielding: bool,
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl Model for Gauged {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            let first = !request
                .input
                .iter()
                .any(|m| matches!(m, ChatMessage::Tool(_)));
            if first {
                let live = self.live.fetch_add(1, Ordering::Relaxed) + 1;
                self.peak.fetch_max(live, Ordering::Relaxed);
            }
            if self.yielding {
                tokio::task::yield_now().await;
            }
            let out = self.inner.generate(request).await;
            if !first {
                self.live.fetch_sub(1, Ordering::Relaxed);
            }
            out
        })
    }
}

fn vm_hwm_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn emit(case: &str, value: f64, unit: &str) {
    let row = json!({"workload": "W9", "case": case, "median": value, "p90": value, "min": value, "runs": 1, "unit": unit});
    println!("RESULT {row}");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut samples = 10_000;
    let mut with_log = true;
    let mut in_flight = 100;
    let mut yielding = false;
    let mut keep: Option<std::path::PathBuf> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--log-dir" => keep = args.next().map(Into::into),
            "--model" => yielding = args.next().as_deref() == Some("yield"),
            "--quick" => samples = 1_000,
            "--no-log" => with_log = false,
            "--samples" => samples = args.next().and_then(|n| n.parse().ok()).unwrap_or(samples),
            "--max-samples" => {
                in_flight = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(in_flight);
            }
            _ => {}
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log_dir = keep.unwrap_or_else(|| dir.path().to_owned());
    let model = Arc::new(Gauged {
        inner: common::arithmetic_model(),
        yielding,
        live: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
    });
    let task = common::arithmetic_task_on(samples, Arc::clone(&model));
    let before = vm_hwm_mib();
    let started = Instant::now();
    let run = runtime
        .block_on(eval(
            &task,
            EvalOptions::new()
                .model("mockllm/model")
                .max_samples(in_flight)
                .log_dir(&log_dir),
        ))
        .unwrap();
    let wall = started.elapsed().as_secs_f64();
    let peak = vm_hwm_mib();
    let alive = model.peak.load(Ordering::Relaxed);
    assert_eq!(run.log.status, "success");
    if !with_log {
        eprintln!(
            "W9 without a log: {samples} samples, {in_flight} at once ({alive} in flight), in \
             {wall:.2} s, peak RSS {peak:.1} MiB (before {before:.1})"
        );
        return;
    }
    let path = run.location.unwrap();
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());

    // Nothing lost or reordered: every sample once, in id order, correct.
    let log = read_eval_log(&path).unwrap();
    let read = log.samples.unwrap();
    assert_eq!(read.len(), samples);
    for (i, s) in read.iter().enumerate() {
        assert_eq!(s.id, actuator_eval::SampleId::Int(i as i64 + 1));
        assert_eq!(
            s.scores.as_ref().unwrap()["match"]["value"],
            "C",
            "sample {}",
            s.id
        );
    }
    eprintln!(
        "W9: {samples} samples, {in_flight} at once ({alive} in flight), in {wall:.2} s ({:.0}/s), peak RSS {peak:.1} MiB (before {before:.1}), log {:.1} MiB",
        samples as f64 / wall,
        size as f64 / 1048576.0
    );
    let mut n = if samples == 10_000 {
        "10 000".to_owned()
    } else {
        samples.to_string()
    };
    n.push_str(" samples");
    if in_flight != 100 {
        n.push_str(&format!(", {in_flight} at once"));
    }
    if yielding {
        n.push_str(", yielding model");
    }
    emit(&format!("eval {n}: wall"), wall, "s");
    emit(
        &format!("eval {n}: samples per second"),
        samples as f64 / wall,
        "samples/s",
    );
    emit(&format!("eval {n}: peak RSS (VmHWM)"), peak, "MiB");
    emit(
        &format!("eval {n}: log size"),
        size as f64 / 1048576.0,
        "MiB",
    );
}
