//! W7: one `bash("echo hi")` call end to end (executor, sandbox spawn, output) in a confined
//! `LocalSandbox`, and 100 parallel `bash` calls in one turn (wall time and peak processes).
//!
//! Plain timed loops on a current-thread runtime (one thread, like Inspect's event loop),
//! printing `RESULT {json}` lines like the Python reference (`bench/python-reference/w7_sandbox.py`);
//! `--quick` runs a fifth of the samples. `--unconfined` measures the unconfined mode too;
//! `--breakdown` instead times the sandbox's `exec` alone for `true`, `bash -c` and
//! `bash --login -c` (where the time of one call goes).
//!
//! Without bubblewrap it says so on stderr and exits with status 3, which `cargo xtask bench`
//! reads as "skip W7" unless W7 was asked for by name or `CI` is set.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_sandbox::{ExecRequest, LocalSandbox, LocalSandboxBuilder, Sandbox, SandboxHandle};
use actuator_tools::{BashOptions, bash};
use support::batch;

fn emit(case: &str, samples: &[f64], unit: &str) {
    support::emit("W7", case, samples, unit);
}

/// The number of this process's descendants, from `/proc`.
fn descendants(me: u32) -> usize {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parent.insert(pid, ppid);
        }
    }
    parent
        .keys()
        .filter(|&&pid| {
            let mut p = pid;
            for _ in 0..64 {
                match parent.get(&p) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .count()
}

fn run(label: &str, builder: LocalSandboxBuilder, quick: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = build(builder);
    let handle = SandboxHandle::new(sandbox);
    let mut options = ExecuteOptions::default();
    options.extensions.insert(handle);
    let tools = [bash(BashOptions::new()).unwrap()];
    let runs = |n: usize| if quick { (n / 5).max(3) } else { n };

    let one = batch(1);
    let check = rt.block_on(execute_tools(&one, &tools, &options)).unwrap();
    assert_eq!(check.messages[0].text(), "hi\n");
    let walls: Vec<f64> = (0..runs(100))
        .map(|_| {
            let start = Instant::now();
            rt.block_on(execute_tools(&one, &tools, &options)).unwrap();
            start.elapsed().as_secs_f64()
        })
        .collect();
    emit(
        &format!("bash('echo hi') end to end, {label}"),
        &walls,
        "ms",
    );

    let hundred = batch(100);
    let check = rt
        .block_on(execute_tools(&hundred, &tools, &options))
        .unwrap();
    assert!(check.messages.iter().all(|m| m.text() == "hi\n"));
    let mut walls = Vec::new();
    let mut peaks = Vec::new();
    for _ in 0..runs(10) {
        let done = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(0));
        let sampler = {
            let (done, peak) = (done.clone(), peak.clone());
            std::thread::spawn(move || {
                let me = std::process::id();
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(descendants(me), Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            })
        };
        let start = Instant::now();
        rt.block_on(execute_tools(&hundred, &tools, &options))
            .unwrap();
        walls.push(start.elapsed().as_secs_f64());
        done.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        peaks.push(peak.load(Ordering::Relaxed) as f64);
    }
    emit(
        &format!("100 parallel bash calls: wall, {label}"),
        &walls,
        "ms",
    );
    emit(
        &format!("100 parallel bash calls: peak processes, {label}"),
        &peaks,
        "count",
    );
}

/// Where the time of one call goes: the same sandbox's `exec` alone (no executor, no tool)
/// of `true`, `bash -c 'echo hi'` and the tool's `bash --login -c 'echo hi'`.
fn breakdown(label: &str, builder: LocalSandboxBuilder, quick: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = build(builder);
    let runs = if quick { 20 } else { 100 };
    let cases: [(&str, &[&str]); 3] = [
        ("true", &["true"]),
        ("bash -c 'echo hi'", &["bash", "-c", "echo hi"]),
        (
            "bash --login -c 'echo hi'",
            &["bash", "--login", "-c", "echo hi"],
        ),
    ];
    for (name, argv) in cases {
        let request = ExecRequest::new(argv.iter().copied());
        rt.block_on(sandbox.exec(request.clone())).unwrap();
        let walls: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                rt.block_on(sandbox.exec(request.clone())).unwrap();
                start.elapsed().as_secs_f64()
            })
            .collect();
        emit(&format!("exec {name} alone, {label}"), &walls, "ms");
    }
}

/// The exit status for "a component W7 needs is missing" (`xtask`'s `MISSING_COMPONENT`).
const MISSING_COMPONENT: i32 = 3;

/// The sandbox, or the process ends with [`MISSING_COMPONENT`] and the reason.
fn build(builder: LocalSandboxBuilder) -> LocalSandbox {
    builder.build().unwrap_or_else(|e| {
        eprintln!("W7 needs a sandbox: {e}");
        std::process::exit(MISSING_COMPONENT)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    if args.iter().any(|a| a == "--breakdown") {
        breakdown("LocalSandbox (bubblewrap)", LocalSandbox::builder(), quick);
        breakdown(
            "LocalSandbox unconfined",
            LocalSandbox::builder().unconfined(),
            quick,
        );
        return;
    }
    run("LocalSandbox (bubblewrap)", LocalSandbox::builder(), quick);
    if args.iter().any(|a| a == "--unconfined") {
        run(
            "LocalSandbox unconfined",
            LocalSandbox::builder().unconfined(),
            quick,
        );
    }
}
