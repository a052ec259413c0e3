//! `examples/mcp_server.rs` as an MCP client starts it: the official Python SDK runs the
//! built example as a command over stdio, lists the quickstart's tools and calls them.
//! `cargo test` builds the examples before running tests; the venv comes from
//! `scripts/setup-test-env` (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "mcp", feature = "macros"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Duration;

fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}

fn needed(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let reason = format!("{what} is missing at {}", path.display());
    if std::env::var_os("CI").is_some() {
        panic!("{reason} (CI is set, so this is a failure)");
    }
    eprintln!("skipped: {reason}");
    None
}

#[test]
fn the_python_sdk_runs_the_example_server_over_stdio() {
    // The test binary is target/<profile>/deps/<name>; the example is built beside deps.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let Some(example) = needed(
        profile_dir.join("examples/mcp_server"),
        "the built example (cargo test --all-features builds it)",
    ) else {
        return;
    };
    let Some(python) = needed(
        target_dir().join("test-env/venv-mcp/bin/python"),
        "the MCP Python SDK venv (run scripts/setup-test-env)",
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/py/sdk_stdio_client.py");
    let out = std::env::temp_dir().join(format!("mcp_example_{}.json", std::process::id()));
    let mut child = std::process::Command::new(python)
        .arg(script)
        .arg(&out)
        .arg(example)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the Python client did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the Python client failed: {status}");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(seen["tools"], serde_json::json!(["add", "multiply"]));
    assert_eq!(seen["add"], serde_json::json!(["7"]));
    assert_eq!(seen["bad"]["is_error"], true);
    assert_eq!(
        seen["bad"]["text"][0],
        "Found 1 validation error parsing tool input arguments:\n- x: 'seven' is not of type 'integer'"
    );
}
