//! Merging a task's shard logs (issue 40 §4): 64 shards of 1 000 samples each (`--shards N`,
//! `--samples M` a shard; `--quick` for 16 shards), merged into one `.eval` log with
//! `merge_logs`. The shards are written once by the crate's own `eval` (the W9 arithmetic task:
//! a react agent that calls `add` and submits, two scorers, on a scripted model) and kept in
//! `--cache DIR` for later runs (by default a temporary directory, removed at the end).
//!
//! Every measured operation runs in a process of its own (this binary with `--child KIND`),
//! which reports its wall time and its peak RSS (`VmHWM` of `/proc/self/status`) when done:
//! the merge (`merge`), reading one shard whole with `read_eval_log` (`read-one`: the memory
//! of one shard), and reading every shard whole and keeping them (`read-all`: the memory of
//! all shards at once). Each is run `--runs N` times (5; 3 with `--quick`) and its medians are
//! printed as `RESULT {json}` lines, with the merge's peak RSS divided by one shard's.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use actuator_eval::log::merge_logs;
use actuator_eval::{EvalOptions, LogFormat, eval, read_eval_log};
use serde_json::{Value, json};

fn vm_hwm_bytes() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb * 1024.0)
}

fn emit(case: &str, value: f64, unit: &str) {
    let row = json!({"workload": "merge", "case": case, "median": value, "p90": value, "min": value, "runs": 1, "unit": unit});
    println!("RESULT {row}");
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The shard logs in `cache`, written there first when they are not all there yet.
fn shard_logs(cache: &Path, shards: usize, samples: usize) -> Vec<PathBuf> {
    let marker = cache.join("complete");
    let wanted = format!("{shards}x{samples}");
    let listed = |i: usize| -> Option<PathBuf> {
        let dir = cache.join(format!("shard-{i}"));
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "eval"))
    };
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str())
        && let Some(logs) = (0..shards).map(listed).collect::<Option<Vec<_>>>()
    {
        return logs;
    }
    eprintln!(
        "merge: writing {shards} shard logs of {samples} samples in {}",
        cache.display()
    );
    let _ = std::fs::remove_file(&marker);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let whole = common::arithmetic_task(shards * samples);
    let started = Instant::now();
    let mut logs = Vec::new();
    for i in 0..shards {
        let dir = cache.join(format!("shard-{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        let mut part = whole.clone();
        part.dataset = whole.dataset.shard(i, shards);
        let run = runtime
            .block_on(eval(
                &part,
                EvalOptions::new().model("mockllm/model").log_dir(&dir),
            ))
            .unwrap();
        assert_eq!(run.log.status, "success");
        logs.push(run.location.unwrap());
    }
    std::fs::write(&marker, wanted).unwrap();
    eprintln!("merge: written in {:.1} s", started.elapsed().as_secs_f64());
    logs
}

/// The work of one child process; prints its wall time and peak RSS.
fn child(kind: &str, logs: &[PathBuf]) {
    let before = vm_hwm_bytes();
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut size = 0;
    match kind {
        "merge" => {
            merge_logs(logs, out.path(), LogFormat::Eval).unwrap();
            let wall = started.elapsed().as_secs_f64();
            for e in std::fs::read_dir(out.path()).unwrap() {
                size += e.unwrap().metadata().unwrap().len();
            }
            return report(wall, before, size);
        }
        "read-one" => {
            let log = read_eval_log(&logs[0]).unwrap();
            assert!(!log.samples.unwrap().is_empty());
        }
        "read-all" => {
            let all: Vec<_> = logs.iter().map(|l| read_eval_log(l).unwrap()).collect();
            assert_eq!(all.len(), logs.len());
            std::hint::black_box(&all);
        }
        other => panic!("unknown --child {other}"),
    }
    report(started.elapsed().as_secs_f64(), before, size);
}

fn report(wall: f64, before: f64, size: u64) {
    let row = json!({"wall": wall, "peak": vm_hwm_bytes(), "before": before, "size": size});
    println!("CHILD {row}");
}

/// Runs this binary as `--child kind` `runs` times: the medians of its wall time, peak RSS and
/// output size.
fn measure(kind: &str, logs_file: &Path, runs: usize) -> (f64, f64, f64, f64) {
    let exe = std::env::current_exe().unwrap();
    let (mut walls, mut peaks, mut befores, mut sizes) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        let out = Command::new(&exe)
            .args(["--child", kind, "--logs"])
            .arg(logs_file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "--child {kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("CHILD "))
            .unwrap_or_else(|| panic!("--child {kind} printed no CHILD line: {text}"));
        let v: Value = serde_json::from_str(line).unwrap();
        walls.push(v["wall"].as_f64().unwrap());
        peaks.push(v["peak"].as_f64().unwrap());
        befores.push(v["before"].as_f64().unwrap());
        sizes.push(v["size"].as_f64().unwrap());
    }
    (
        median(&mut walls),
        median(&mut peaks),
        median(&mut befores),
        median(&mut sizes),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut shards, mut samples, mut runs) = (64, 1_000, 5);
    let mut cache: Option<PathBuf> = None;
    let mut child_kind: Option<String> = None;
    let mut logs_file: Option<PathBuf> = None;
    while let Some(a) = args.next() {
        let mut number = |n: usize| args.next().and_then(|v| v.parse().ok()).unwrap_or(n);
        match a.as_str() {
            "--quick" => (shards, runs) = (16, 3),
            "--shards" => shards = number(shards),
            "--samples" => samples = number(samples),
            "--runs" => runs = number(runs),
            "--cache" => cache = args.next().map(Into::into),
            "--child" => child_kind = args.next(),
            "--logs" => logs_file = args.next().map(Into::into),
            _ => {}
        }
    }
    if let (Some(kind), Some(file)) = (child_kind, logs_file) {
        let logs: Vec<PathBuf> = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(PathBuf::from)
            .collect();
        return child(&kind, &logs);
    }

    let temp = tempfile::tempdir().unwrap();
    let cache = cache.unwrap_or_else(|| temp.path().join("shards"));
    std::fs::create_dir_all(&cache).unwrap();
    let logs = shard_logs(&cache, shards, samples);
    let shard_size = std::fs::metadata(&logs[0]).map_or(0, |m| m.len());
    let logs_file = temp.path().join("logs.txt");
    let list: Vec<String> = logs.iter().map(|p| p.display().to_string()).collect();
    std::fs::write(&logs_file, list.join("\n")).unwrap();

    let mib = 1048576.0;
    let (merge_wall, merge_peak, before, merged_size) = measure("merge", &logs_file, runs);
    let (one_wall, one_peak, _, _) = measure("read-one", &logs_file, runs);
    let (_, all_peak, _, _) = measure("read-all", &logs_file, runs.min(3));
    eprintln!(
        "merge: {shards} shards x {samples} samples in {merge_wall:.2} s, peak RSS {:.1} MiB \
         (process before it {:.1}); one shard read {one_wall:.3} s, {:.1} MiB; all shards read \
         {:.1} MiB; shard log {:.2} MiB, merged log {:.1} MiB",
        merge_peak / mib,
        before / mib,
        one_peak / mib,
        all_peak / mib,
        shard_size as f64 / mib,
        merged_size / mib
    );
    let n = format!("{shards} shards x {samples} samples");
    emit(&format!("merge {n}: wall"), merge_wall, "s");
    emit(
        &format!("merge {n}: peak RSS (VmHWM)"),
        merge_peak / mib,
        "MiB",
    );
    emit(
        &format!("read one shard of {samples} samples (read_eval_log): peak RSS (VmHWM)"),
        one_peak / mib,
        "MiB",
    );
    emit(
        &format!("read all {shards} shards into memory (read_eval_log): peak RSS (VmHWM)"),
        all_peak / mib,
        "MiB",
    );
    emit(
        &format!("merge {n}: peak RSS / one shard's read"),
        merge_peak / one_peak,
        "x",
    );
    emit(
        &format!("merge {n}: merged log size"),
        merged_size / mib,
        "MiB",
    );
}
