//! A dataset split into shards, run apart and merged: the same samples, ids and metrics as
//! one run, in a log the reference reads; a retried shard superseding its failed attempt, and
//! the same shard run twice refused.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actuator_eval::log::merge_logs;
use actuator_eval::{
    EvalOptions, FailOnError, LogError, LogFormat, Sample, SampleId, eval, eval_retry,
    read_eval_log,
};
use actuator_model::{ChatMessage, FunctionModel, ModelError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_run_apart_merge_into_the_log_of_one_run() {
    let mut whole = common::arithmetic_task(9);
    whole
        .dataset
        .samples
        .push(Sample::new("What is 5 + 5? (answer wrong)", "10"));
    let one = eval(&whole, EvalOptions::new().fail_on_error(FailOnError::Never))
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut shard_logs = Vec::new();
    for i in 0..3 {
        let mut part = whole.clone();
        part.dataset = whole.dataset.shard(i, 3);
        let shard_dir = dir.path().join(format!("shard-{i}"));
        let run = eval(&part, EvalOptions::new().log_dir(&shard_dir))
            .await
            .unwrap();
        shard_logs.push(run.location.unwrap());
    }
    let merged = merge_logs(&shard_logs, &dir.path().join("merged"), LogFormat::Eval).unwrap();
    assert_eq!(merged.samples, 10);
    assert!(merged.superseded.is_empty());
    let merged_path = merged.path;
    let merged = read_eval_log(&merged_path).unwrap();
    assert_eq!(merged.status, "success");
    let ids: Vec<SampleId> = merged
        .samples
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.id.clone())
        .collect();
    assert_eq!(ids, (1..=10).map(SampleId::Int).collect::<Vec<_>>());
    assert_eq!(merged.eval.dataset.samples, 10);
    let results = merged.results.as_ref().unwrap();
    assert_eq!(results.total_samples, 10);
    for name in ["match", "includes"] {
        let ours = results.scores.iter().find(|s| s.name == name).unwrap();
        let theirs = one.score(name).unwrap();
        for metric in ["accuracy", "stderr"] {
            let (a, b) = (ours.metric(metric).unwrap(), theirs.metric(metric).unwrap());
            assert!(
                (a - b).abs() < 1e-12,
                "{name} {metric}: merged {a}, one run {b}"
            );
        }
    }
    assert_eq!(merged.stats.model_usage, one.log.stats.model_usage);

    // Shards of different tasks do not merge.
    let mut other = common::arithmetic_task(1);
    other.name = "other".into();
    let run = eval(&other, EvalOptions::new().log_dir(dir.path().join("other")))
        .await
        .unwrap();
    let mut mixed = shard_logs.clone();
    mixed.push(run.location.unwrap());
    let err = merge_logs(&mixed, &dir.path().join("bad"), LogFormat::Eval).unwrap_err();
    assert!(err.to_string().contains("not 'arithmetic'"), "{err}");

    inspect_reads(&merged_path);
}

/// Checks that the reference reads `log` (skipped, saying so, without its Python outside CI).
fn inspect_reads(log: &Path) {
    if let Some(python) = common::inspect_python() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_log.py");
        let out = std::process::Command::new(python)
            .arg(script)
            .arg(log)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The arithmetic model, failing every question whose first number is odd while `broken` is
/// set.
fn flaky_model(broken: Arc<AtomicBool>) -> FunctionModel {
    FunctionModel::new("mockllm/model", move |messages, _tools| {
        let question = messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::User(u) => Some(u.content.text()),
                _ => None,
            })
            .unwrap_or_default();
        let first: u64 = question
            .split(|c: char| !c.is_ascii_digit())
            .find_map(|w| w.parse().ok())
            .unwrap_or(0);
        if broken.load(Ordering::SeqCst) && first % 2 == 1 {
            return Err(ModelError::other("the model's server went away"));
        }
        Ok(common::arithmetic_reply(messages))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_shard_supersedes_its_failed_attempt() {
    let broken = Arc::new(AtomicBool::new(false));
    let whole = common::arithmetic_task_on(9, flaky_model(broken.clone()));
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    // Three shards into one directory; the second one's model fails on sample 5.
    let mut failed = None;
    for i in 0..3 {
        let mut part = whole.clone();
        part.dataset = whole.dataset.shard(i, 3);
        broken.store(i == 1, Ordering::SeqCst);
        let run = eval(
            &part,
            EvalOptions::new()
                .log_dir(&logs)
                .fail_on_error(FailOnError::Never),
        )
        .await
        .unwrap();
        if i == 1 {
            assert_eq!(run.error_count, 1, "{run}");
            failed = Some((part, run.location.unwrap()));
        }
    }
    let (part, failed_log) = failed.unwrap();
    broken.store(false, Ordering::SeqCst);
    let retried = eval_retry(&part, &failed_log, EvalOptions::new())
        .await
        .unwrap();
    assert_eq!(retried.error_count, 0, "{retried}");

    // Every log of the directory, the failed attempt among them.
    let all = common::eval_logs(&logs);
    assert_eq!(all.len(), 4);
    let merged = merge_logs(&all, &dir.path().join("merged"), LogFormat::Eval).unwrap();
    let names = |paths: &[PathBuf]| -> Vec<_> {
        paths
            .iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&merged.superseded),
        names(std::slice::from_ref(&failed_log))
    );
    assert_eq!(merged.samples, 9);
    let log = read_eval_log(&merged.path).unwrap();
    assert_eq!(log.status, "success");
    let samples = log.samples.as_ref().unwrap();
    let ids: Vec<SampleId> = samples.iter().map(|s| s.id.clone()).collect();
    assert_eq!(ids, (1..=9).map(SampleId::Int).collect::<Vec<_>>());
    assert!(samples.iter().all(|s| s.error.is_none()));
    let results = log.results.as_ref().unwrap();
    assert_eq!(results.completed_samples, 9);
    let accuracy = results.scores.iter().find(|s| s.name == "match").unwrap();
    assert_eq!(accuracy.metric("accuracy"), Some(1.0));
    inspect_reads(&merged.path);

    // The failed attempt alone still merges, its failure kept.
    let mut without_retry = all;
    without_retry.retain(|p| p.file_name() != retried.location.as_ref().unwrap().file_name());
    let partial = merge_logs(&without_retry, &dir.path().join("partial"), LogFormat::Eval).unwrap();
    assert!(partial.superseded.is_empty());
    let log = read_eval_log(&partial.path).unwrap();
    let errors = log
        .samples
        .unwrap()
        .iter()
        .filter(|s| s.error.is_some())
        .count();
    assert_eq!(errors, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_shard_run_twice_is_refused_naming_both_logs() {
    let whole = common::arithmetic_task(4);
    let dir = tempfile::tempdir().unwrap();
    let mut part = whole.clone();
    part.dataset = whole.dataset.shard(0, 2);
    let mut logs = Vec::new();
    for attempt in ["a", "b"] {
        let run = eval(&part, EvalOptions::new().log_dir(dir.path().join(attempt)))
            .await
            .unwrap();
        logs.push(run.location.unwrap());
    }
    let out = dir.path().join("merged");
    let err = merge_logs(&logs, &out, LogFormat::Eval).unwrap_err();
    match &err {
        LogError::DuplicateSample {
            id,
            epoch,
            first,
            second,
        } => {
            assert_eq!((id, *epoch), (&SampleId::Int(1), 1));
            assert_eq!((first, second), (&logs[0], &logs[1]));
        }
        other => panic!("{other}"),
    }
    let text = err.to_string();
    for log in &logs {
        assert!(text.contains(&log.display().to_string()), "{text}");
    }
    assert!(text.contains("sample 1 (epoch 1)"), "{text}");
    // Nothing is left of the log it began.
    let left: Vec<_> = std::fs::read_dir(&out)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");

    // The same log given twice is read once.
    let merged = merge_logs(&[logs[0].clone(), logs[0].clone()], &out, LogFormat::Eval).unwrap();
    assert_eq!(merged.samples, 2);
}
