//! Our log in the reference's viewer, in a real browser: `inspect view` serves a folder with
//! one of our logs, headless Chromium (Playwright) opens it, and the page shows the task, the
//! score, the messages and the tool call with its result. The screenshot is saved under
//! `target/` (`docs/images/inspect-view.png` is one such).

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use actuator_eval::{EvalOptions, eval};

/// Kills the server when the test ends, however it ends.
struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("ACTUATOR_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "Chromium is missing at {}: run scripts/setup-test-env",
        path.display()
    );
    eprintln!(
        "skipping: Chromium is missing at {} (run scripts/setup-test-env)",
        path.display()
    );
    None
}

fn wait_for(port: u16, server: &mut Server, within: Duration) {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("inspect view exited early with {status}");
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("inspect view did not listen on port {port} within {within:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_viewer_shows_our_log() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &common::arithmetic_task(1),
        EvalOptions::new()
            .model("mockllm/model")
            .log_dir(dir.path()),
    )
    .await
    .unwrap();
    let log = run.location.unwrap();
    let name = log.file_name().unwrap().to_string_lossy().into_owned();

    let port = free_port();
    let inspect = python.with_file_name("inspect");
    let mut server = Server(
        Command::new(&inspect)
            .args(["view", "--log-dir"])
            .arg(dir.path())
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("INSPECT_DISPLAY", "plain")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, &mut server, Duration::from_secs(60));

    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    let screenshot = target.join("inspect-view.png");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/view_log.py");
    let url = format!("http://127.0.0.1:{port}/#/logs/{name}");
    let out = Command::new(&python)
        .arg(script)
        .arg(&url)
        .arg(&screenshot)
        .arg(&chromium)
        .arg("Messages")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the browser failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "arithmetic",
        "What is 1 + 2?",
        "Use add, then submit.",
        "Let me add.",
        "add",
        "submit",
    ] {
        assert!(
            text.contains(expected),
            "the page does not show {expected:?}:\n{text}"
        );
    }
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
    drop(server);
}
