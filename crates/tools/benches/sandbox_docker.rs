//! W7 in Docker (issue 34 §3): the built-in `bash` tool in a `DockerSandbox` on the
//! reference's default compose file (`aisiuk/inspect-tool-support`, no network), beside
//! Inspect's own docker sandbox on the same file (`bench/python-reference/w7d_docker.py`).
//!
//! Cases, each the median of plain timed loops on a current-thread runtime (one thread, like
//! Inspect's event loop), printed as `RESULT {json}` lines:
//! - one `bash("echo hi")` call through `execute_tools`, end to end, in a running sandbox;
//! - 100 such calls in one assistant message (wall);
//! - a sample's sandbox: set-up (`build`: `compose up --wait`, the containers found), its
//!   first call (which also starts the container's command supervisor), tear-down
//!   (`cleanup`: `compose down`), and set-up + tear-down.
//!
//! `--quick` runs fewer samples. Without Docker, its Compose plugin or the default image
//! (never pulled) it says so on stderr and exits with status 3, which `cargo xtask bench`
//! reads as "skip W7d" unless W7d was asked for by name or `CI` is set.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod support;

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_sandbox::docker::{ComposeConfig, ComposeOptions, DEFAULT_IMAGE, DockerSandbox};
use actuator_sandbox::{Sandbox, SandboxHandle};
use actuator_tools::{BashOptions, bash};
use support::batch;

/// The exit status for "a component W7d needs is missing" (`xtask`'s `MISSING_COMPONENT`).
const MISSING_COMPONENT: i32 = 3;

fn emit(case: &str, samples: &[f64]) {
    support::emit("W7d", case, samples, "ms");
}

/// What is missing for a Docker sandbox of the default compose file, if anything: the CLI,
/// a daemon that answers, the Compose plugin, the image (the bench never pulls).
fn missing() -> Option<String> {
    let checks: [(&[&str], &str); 2] = [
        (&["compose", "version"], "the Docker Compose v2 plugin"),
        (&["image", "inspect", DEFAULT_IMAGE], "the default image"),
    ];
    for (args, what) in checks {
        match Command::new("docker").args(args).output() {
            Err(e) => return Some(format!("the docker CLI cannot run: {e}")),
            Ok(out) if !out.status.success() => {
                return Some(format!(
                    "{what} ({}): {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Ok(_) => {}
        }
    }
    None
}

/// Holds the Docker tests' lock shared (see `crates/sandbox/tests/docker_support`), so the
/// test that takes down every `actuator-` project does not run during the bench.
fn docker_tests_lock() -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("actuator-docker-tests.lock"))
        .unwrap();
    file.lock_shared().unwrap();
    file
}

async fn new_sandbox() -> Arc<DockerSandbox> {
    DockerSandbox::builder(ComposeConfig::generic())
        .options(ComposeOptions::new("w7"))
        .build()
        .await
        .map(Arc::new)
        .unwrap()
}

fn options(sandbox: Arc<DockerSandbox>) -> ExecuteOptions {
    let mut options = ExecuteOptions::default();
    options
        .extensions
        .insert(SandboxHandle::from_arc(sandbox as Arc<dyn Sandbox>));
    options
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    if let Some(problem) = missing() {
        eprintln!("W7d needs Docker: {problem} (run scripts/setup-test-env)");
        std::process::exit(MISSING_COMPONENT);
    }
    let _lock = docker_tests_lock();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tools = [bash(BashOptions::new()).unwrap()];
    let (one, hundred) = (batch(1), batch(100));
    let (calls, turns, lives) = if quick { (20, 3, 3) } else { (100, 10, 10) };

    // A running sandbox: one call, then 100 in one turn.
    let sandbox = rt.block_on(new_sandbox());
    let opts = options(sandbox.clone());
    let check = rt.block_on(execute_tools(&one, &tools, &opts)).unwrap();
    assert_eq!(check.messages[0].text(), "hi\n");
    let walls: Vec<f64> = (0..calls)
        .map(|_| {
            let start = Instant::now();
            rt.block_on(execute_tools(&one, &tools, &opts)).unwrap();
            start.elapsed().as_secs_f64()
        })
        .collect();
    emit("bash('echo hi') end to end, docker sandbox", &walls);

    let check = rt.block_on(execute_tools(&hundred, &tools, &opts)).unwrap();
    assert!(check.messages.iter().all(|m| m.text() == "hi\n"));
    let walls: Vec<f64> = (0..turns)
        .map(|_| {
            let start = Instant::now();
            rt.block_on(execute_tools(&hundred, &tools, &opts)).unwrap();
            start.elapsed().as_secs_f64()
        })
        .collect();
    emit("100 parallel bash calls: wall, docker sandbox", &walls);
    drop(opts);
    rt.block_on(sandbox.cleanup()).unwrap();
    drop(sandbox);

    // A sample's sandbox, from nothing to nothing (after one warm-up life).
    let (mut ups, mut firsts, mut downs, mut both) = (vec![], vec![], vec![], vec![]);
    for i in 0..=lives {
        let t0 = Instant::now();
        let sandbox = rt.block_on(new_sandbox());
        let t1 = Instant::now();
        let opts = options(sandbox.clone());
        let out = rt.block_on(execute_tools(&one, &tools, &opts)).unwrap();
        let t2 = Instant::now();
        assert_eq!(out.messages[0].text(), "hi\n");
        rt.block_on(sandbox.cleanup()).unwrap();
        let t3 = Instant::now();
        if i > 0 {
            ups.push((t1 - t0).as_secs_f64());
            firsts.push((t2 - t1).as_secs_f64());
            downs.push((t3 - t2).as_secs_f64());
            both.push(((t1 - t0) + (t3 - t2)).as_secs_f64());
        }
    }
    emit("sample sandbox set-up, docker", &ups);
    emit("first bash('echo hi') in a new docker sandbox", &firsts);
    emit("sample sandbox tear-down, docker", &downs);
    emit("sample sandbox set-up + tear-down, docker", &both);
}
