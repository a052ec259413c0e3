//! A dataset split into shards, run apart and merged: the same samples, ids and metrics as
//! one run, in a log the reference reads.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_eval::log::merge_logs;
use actuator_eval::{EvalOptions, FailOnError, LogFormat, Sample, SampleId, eval, read_eval_log};

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
    let merged_path = merge_logs(&shard_logs, &dir.path().join("merged"), LogFormat::Eval).unwrap();
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

    if let Some(python) = common::inspect_python() {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_log.py");
        let out = std::process::Command::new(python)
            .arg(script)
            .arg(&merged_path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
