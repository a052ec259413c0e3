//! An evaluation split over a real Slurm array job (one machine's single-node cluster: munged,
//! slurmctld and slurmd from Debian's packages, started here with a configuration for this
//! host and stopped by PID at the end): the `eval_cli` example's shards run as array tasks
//! through `deploy/slurm/`'s scripts, one of them crashes, the merge job names it, `retry`
//! runs it again alone, and the merged log, read by the reference's own reader, has every
//! sample exactly once with the scores, metrics and usage of one process running the whole
//! dataset. Slurm comes from `scripts/setup-test-env` (missing: skipped with a reason, a
//! failure under CI).

#![cfg(all(feature = "cli", feature = "tools", feature = "macros"))]
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::print_stderr,
    clippy::expect_used
)]

mod cluster;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cluster::{SlurmCluster, needed};
use serde_json::Value;

const SHARDS: usize = 4;
const SAMPLES: usize = 40;
/// The sample whose shard crashes: id 35 is in shard (35 - 1) % 4 = 2.
const CRASH_ON: usize = 35;

fn example() -> Option<PathBuf> {
    // The test binary is target/<profile>/deps/<name>; the example is built beside deps.
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    needed(
        profile.join("examples/eval_cli"),
        "the built example (cargo test --all-features builds it)",
    )
}

fn inspect_python() -> Option<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(|| workspace.join("target"), |t| workspace.join(t));
    needed(
        target.join("test-env/venv-inspect/bin/python"),
        "the reference's Python (run scripts/setup-test-env)",
    )
}

/// The log as the reference's `read_eval_log` reads it (`check_log.py`).
fn reference_read(python: &Path, log: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval/tests/inspect/check_log.py");
    let out = Command::new(python).arg(script).arg(log).output().unwrap();
    assert!(
        out.status.success(),
        "the reference cannot read {}: {}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn logs_in(dir: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eval"))
        .collect();
    logs.sort();
    logs
}

/// Each sample's `(id, epoch)` and score value, sorted.
fn scored(read: &Value) -> Vec<(String, u64, String)> {
    let mut out: Vec<_> = read["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].to_string(),
                s["epoch"].as_u64().unwrap(),
                s["scores"]["match"]["value"].to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn shards_run_as_a_slurm_array_crash_retry_and_merge_into_one_run() {
    let (Some(eval_cli), Some(python)) = (example(), inspect_python()) else {
        return;
    };
    let Some(cluster) = SlurmCluster::start() else {
        return;
    };
    let work = cluster.dir().join("work");
    let logs = work.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/slurm");
    let env = [
        ("EVAL_BIN", eval_cli.display().to_string()),
        ("EVAL_TASK", "arithmetic".into()),
        ("LOG_DIR", logs.display().to_string()),
        ("EVAL_ARGS", format!("-T samples={SAMPLES} --max-samples 4")),
        // Only the shard holding this sample has it: that array task aborts there.
        ("EVAL_CLI_CRASH_ON", CRASH_ON.to_string()),
    ];

    // The shards and their merge, as a user submits them.
    let started = Instant::now();
    let submitted = cluster.run(
        Command::new(deploy.join("submit.sh"))
            .arg(format!("--array=0-{}", SHARDS - 1))
            .envs(env.clone())
            .current_dir(&work),
    );
    let ids: Vec<&str> = submitted.split_whitespace().collect();
    assert_eq!(
        ids.len(),
        2,
        "submit.sh prints the shards' and the merge's job ids: {submitted}"
    );
    let (shards_job, merge_job) = (ids[0].to_owned(), ids[1].to_owned());
    let merge_state = cluster.wait_for(&merge_job, Duration::from_secs(300));
    let slurm_wall = started.elapsed();
    // Three array tasks completed, one crashed; the merge ran after all and failed, naming it.
    let states: Vec<String> = (0..SHARDS)
        .map(|i| cluster.state(&format!("{shards_job}_{i}")))
        .collect();
    assert_eq!(
        states.iter().filter(|s| *s == "COMPLETED").count(),
        SHARDS - 1,
        "{states:?}"
    );
    assert_eq!(states[(CRASH_ON - 1) % SHARDS], "FAILED", "{states:?}");
    assert_eq!(
        merge_state, "FAILED",
        "the merge of an unfinished shard fails"
    );
    let merge_out =
        std::fs::read_to_string(work.join(format!("slurm-merge-{merge_job}.out"))).unwrap();
    let shard_logs = logs_in(&logs);
    assert_eq!(shard_logs.len(), SHARDS, "{shard_logs:?}");
    let crashed: Vec<&PathBuf> = shard_logs
        .iter()
        .filter(|l| reference_read(&python, l)["header"]["status"] == "started")
        .collect();
    assert_eq!(crashed.len(), 1, "{crashed:?}");
    let crashed = crashed[0].clone();
    assert!(
        merge_out.contains(&crashed.display().to_string()) && merge_out.contains("retry"),
        "the merge names the shard to retry and how: {merge_out}"
    );

    // The crashed shard alone runs again (no crash this time), then the merge again.
    let retry = cluster.run(
        Command::new("sbatch")
            .args(["--parsable", "--wait", "--export=ALL"])
            .arg(deploy.join("retry.sbatch"))
            .arg(&crashed)
            .envs(env[..4].iter().cloned())
            .current_dir(&work),
    );
    assert_eq!(cluster.state(retry.trim()), "COMPLETED");
    let merged = work.join("merged.eval");
    let merge = cluster.run(
        Command::new("sbatch")
            .args(["--parsable", "--wait", "--export=ALL"])
            .arg(deploy.join("merge.sbatch"))
            .envs(env[..4].iter().cloned())
            .env("MERGED", &merged)
            .current_dir(&work),
    );
    assert_eq!(cluster.state(merge.trim()), "COMPLETED");

    // One process running the whole dataset, for comparison.
    let one_dir = work.join("one");
    let started = Instant::now();
    let out = Command::new(&eval_cli)
        .args([
            "eval",
            "arithmetic",
            "-T",
            &format!("samples={SAMPLES}"),
            "--max-samples",
            "4",
        ])
        .arg("--log-dir")
        .arg(&one_dir)
        .output()
        .unwrap();
    let one_wall = started.elapsed();
    assert!(out.status.success(), "{out:?}");
    let one = reference_read(&python, &logs_in(&one_dir)[0]);
    let all = reference_read(&python, &merged);

    assert_eq!(all["header"]["status"], "success");
    assert_eq!(all["header"]["dataset_samples"], SAMPLES);
    let samples = scored(&all);
    assert_eq!(samples.len(), SAMPLES, "every sample exactly once");
    assert_eq!(
        samples,
        scored(&one),
        "the same samples and scores as one process"
    );
    assert_eq!(
        all["header"]["results"]["scores"], one["header"]["results"]["scores"],
        "the same metrics"
    );
    assert_eq!(
        all["header"]["stats"]["model_usage"], one["header"]["stats"]["model_usage"],
        "usage summed over the shards"
    );
    eprintln!(
        "slurm: {SHARDS} shards of {SAMPLES} samples and their merge in {:.1} s; one process {:.2} s",
        slurm_wall.as_secs_f64(),
        one_wall.as_secs_f64()
    );
}
