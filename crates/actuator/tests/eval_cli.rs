//! `examples/eval_cli.rs` run as built: its command line lists its tasks, runs one, dumps the
//! log as JSON, says what was wrong on stderr with exit code 2, and on Ctrl-C ends the
//! evaluation `cancelled` with exit code 130. The verbs' work is tested in process in
//! actuator-eval's `cli` test; a Slurm array in the `slurm` test.

#![cfg(all(feature = "cli", feature = "tools", feature = "macros"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

#[allow(dead_code)] // only `needed` is used here
mod cluster;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn example() -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    cluster::needed(
        profile.join("examples/eval_cli"),
        "the built example (cargo test --all-features builds it)",
    )
}

fn run(example: &Path, args: &[&str]) -> Output {
    Command::new(example).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_command_line_lists_runs_dumps_and_says_what_was_wrong() {
    let Some(example) = example() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();

    let list = run(&example, &["list"]);
    assert!(list.status.success());
    let names: Vec<String> = text(&list.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    assert_eq!(names, ["arithmetic", "shell"]);

    let eval = run(
        &example,
        &["eval", "arithmetic", "-T", "samples=6", "--log-dir", d],
    );
    assert!(eval.status.success(), "{eval:?}");
    let summary = text(&eval.stdout);
    assert!(
        summary.contains("eval 'arithmetic' success: 6 of 6 samples completed"),
        "{summary}"
    );
    let log = std::fs::read_dir(d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();

    let dump = run(&example, &["log", "dump", log.to_str().unwrap()]);
    assert!(dump.status.success());
    let json: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    assert_eq!(json["status"], "success");
    assert_eq!(json["samples"].as_array().unwrap().len(), 6);
    assert_eq!(json["eval"]["task_args"]["samples"], "6");

    for (args, says) in [
        (
            &["eval", "arithmetic", "--shard", "4/4"][..],
            "--shard 4/4: expected I/N",
        ),
        (
            &["eval", "arithmetic", "-T", "samples=six"],
            "task 'arithmetic' could not be made",
        ),
        (
            &["eval", "geometry"],
            "there is no task 'geometry'; the tasks are: arithmetic, shell",
        ),
        (&["retry", "/nonexistent.eval"], "/nonexistent.eval"),
        (&["eval"], "Usage:"),
    ] {
        let out = run(&example, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A constructor's error comes with its cause.
    let out = run(&example, &["eval", "arithmetic", "-T", "samples=six"]);
    assert!(
        text(&out.stderr).contains("caused by: -T samples=six: invalid digit"),
        "{out:?}"
    );
}

#[test]
fn ctrl_c_cancels_the_evaluation_and_exits_130() {
    let Some(example) = example() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(&example)
        .args([
            "eval",
            "arithmetic",
            "-T",
            "samples=20000",
            "--max-samples",
            "2",
            "--log-dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once progress shows samples finishing (a line every 5 %): under way.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        match line {
            Ok(line) if line.contains("samples") => break,
            Ok(_) => {}
            Err(e) => panic!("no progress within 60 s: {e}"),
        }
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("still running 60 s after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let dump = run(&example, &["log", "dump", log.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    assert_eq!(json["status"], "cancelled");
}
