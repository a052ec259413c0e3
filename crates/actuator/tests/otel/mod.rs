#![allow(dead_code)] // each test file uses part of it
//! Arize Phoenix for the OTLP tests: `phoenix serve` offline on loopback, its REST API, and its
//! web UI in headless Chromium (`phoenix_view.py`).
//!
//! Phoenix comes from `scripts/setup-test-env` (target/test-env/venv-phoenix), Playwright from
//! its venv-inspect and Chromium from Debian. Phoenix runs on free loopback ports, with its own
//! working directory (SQLite storage) and its telemetry and external resources off; the browser
//! may ask for nothing but loopback: nothing leaves the machine. Without these a test skips
//! with a printed reason, except when `CI` is set, where their absence is a failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `target/`: the test binary is `target/<profile>/deps/<name>`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// `None` after printing why the test is skipped; under `CI` a missing component fails it.
pub fn missing(reason: &str) -> Option<PathBuf> {
    if std::env::var_os("CI").is_some() {
        panic!("CI is set and {reason}");
    }
    eprintln!("skipped: {reason}");
    None
}

pub fn phoenix_venv() -> Option<PathBuf> {
    let dir = target_dir().join("test-env/venv-phoenix");
    if dir.join(".actuator-complete").exists() {
        return Some(dir);
    }
    missing(&format!(
        "{} is missing: run scripts/setup-test-env to install Arize Phoenix",
        dir.display()
    ))
}

/// The Python with Playwright (the reference's venv, `ACTUATOR_INSPECT_PYTHON` to point
/// elsewhere) and Debian's Chromium (`ACTUATOR_CHROMIUM`), as crates/eval's viewer test.
pub fn browser() -> Option<(PathBuf, PathBuf)> {
    let python = std::env::var_os("ACTUATOR_INSPECT_PYTHON").map_or_else(
        || target_dir().join("test-env/venv-inspect/bin/python"),
        PathBuf::from,
    );
    if !python.exists() {
        missing(&format!(
            "{} is missing: run scripts/setup-test-env to install Playwright",
            python.display()
        ))?;
    }
    let chromium = std::env::var_os("ACTUATOR_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.exists() {
        missing(&format!(
            "Chromium is missing at {}: run scripts/setup-test-env",
            chromium.display()
        ))?;
    }
    Some((python, chromium))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `phoenix serve`, killed on drop (also when the test panics).
pub struct Phoenix {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Phoenix {
    pub fn start(venv: &std::path::Path) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let port = free_port();
        let child = Command::new(venv.join("bin/phoenix"))
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            // Offline: no usage reports, no fonts or scripts from elsewhere, none of the
            // features that reach out (the assistant, the MCP server, Prometheus).
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_ENABLE_MCP_SERVER", "false")
            .env("PHOENIX_ENABLE_PROMETHEUS", "false")
            .env("DO_NOT_TRACK", "1")
            .env_remove("PHOENIX_COLLECTOR_ENDPOINT")
            .env_remove("PHOENIX_SQL_DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start phoenix: {e}"));
        let mut phoenix = Phoenix { child, port, dir };
        phoenix.wait_ready(Duration::from_secs(120));
        phoenix
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("phoenix.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    fn wait_ready(&mut self, limit: Duration) {
        let started = Instant::now();
        let client = client();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("phoenix exited with {status}:\n{}", self.log_tail());
            }
            let health = client
                .get(self.url("/healthz"))
                .timeout(Duration::from_secs(5))
                .send();
            if health.is_ok_and(|r| r.status().is_success()) {
                eprintln!("phoenix ready after {:.1?}", started.elapsed());
                return;
            }
            assert!(
                started.elapsed() < limit,
                "phoenix was not ready after {limit:?}:\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The spans of the default project, read until `want` are there (Phoenix stores what it
    /// receives asynchronously), at most `limit`.
    pub fn spans(&self, want: usize, limit: Duration) -> Vec<Value> {
        let started = Instant::now();
        let client = client();
        loop {
            let body: Value = client
                .get(self.url("/v1/projects/default/spans?limit=1000"))
                .timeout(Duration::from_secs(10))
                .send()
                .and_then(reqwest::blocking::Response::json)
                .unwrap_or(Value::Null);
            let spans = body["data"].as_array().cloned().unwrap_or_default();
            if spans.len() >= want || started.elapsed() > limit {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Opens `trace` in Phoenix's web UI in headless Chromium (tests/otel/phoenix_view.py), waits
/// for the page to show every `expected` text (a minute at most), clicks each of `clicks` in
/// turn (a span of the tree, a tab of its details), saves a screenshot of the trace's panel at
/// `screenshot` and returns the page's text; fails the test when the browser fails or the page
/// lacks one of `expected`. `None` (skipped, printing why) without Playwright or Chromium outside CI.
pub fn screenshot_trace(
    phoenix: &Phoenix,
    trace: &str,
    screenshot: &Path,
    expected: &[&str],
    clicks: &[&str],
) -> Option<String> {
    const SECONDS: u64 = 60;
    let (python, chromium) = browser()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otel/phoenix_view.py");
    // Phoenix's UI resolves a trace's OpenTelemetry id to its project's trace page.
    let url = phoenix.url(&format!("/redirects/traces/{trace}"));
    let output = phoenix.dir.path().join("phoenix-view.out");
    // Not last run's picture.
    let _ = std::fs::remove_file(screenshot);
    let mut child = Command::new(&python)
        .arg(script)
        .args(clicks.iter().map(|text| format!("--click={text}")))
        .arg(&url)
        .arg(screenshot)
        .arg(&chromium)
        .arg(SECONDS.to_string())
        .args(expected)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(std::fs::File::create(output.with_extension("err")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
    // The script bounds itself; this bounds a browser that hangs anyway.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(SECONDS + 60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the browser did not finish within {}s", SECONDS + 60);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let text = std::fs::read_to_string(&output).unwrap_or_default();
    let errors = std::fs::read_to_string(output.with_extension("err")).unwrap_or_default();
    assert!(status.success(), "the browser failed ({status}): {errors}");
    if !errors.trim().is_empty() {
        // Requests refused for leaving loopback, Playwright's warnings.
        eprintln!("the browser said: {errors}");
    }
    for want in expected {
        assert!(
            text.contains(want),
            "Phoenix's trace page does not show {want:?}:\n{text}\n{errors}"
        );
    }
    assert!(
        screenshot.exists(),
        "no screenshot at {}",
        screenshot.display()
    );
    Some(text)
}

/// A plain-HTTP client: reqwest's `rustls-no-provider` (the providers' feature) wants a TLS
/// set-up even for `http://`, and this is the one the workspace's clients share.
pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .tls_backend_preconfigured(actuator_model::tls::client_config(false, Vec::new()).unwrap())
        .build()
        .unwrap()
}

/// An attribute of a span as Phoenix returns it: flat (`"a.b": 1`) or nested (`{"a":{"b":1}}`).
pub fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    let attributes = &span["attributes"];
    attributes
        .get(key)
        .or_else(|| key.split('.').try_fold(attributes, |v, part| v.get(part)))
}
