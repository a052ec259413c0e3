//! `examples/quickstart.rs`, the README's first command, run as built: its transcript shows each
//! call once, with its result, and the answer. `cargo test` builds the examples before running
//! tests (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "macros", feature = "agent"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::path::Path;

#[test]
fn the_quickstart_transcript_shows_each_call_once_with_its_result() {
    // The test binary is target/<profile>/deps/<name>; the example is built beside deps.
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/quickstart");
    if !example.exists() {
        let reason = format!("the built example is missing at {}", example.display());
        assert!(std::env::var_os("CI").is_none(), "{reason} (CI is set)");
        eprintln!("skipped: {reason}");
        return;
    }
    let out = std::process::Command::new(&example)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let tools: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tool "))
        .collect();
    // One line per call (the pending event a call emits when it starts is not a result).
    assert_eq!(
        tools,
        [
            "tool add → 7",
            "tool multiply failed (parsing): Found 1 validation error parsing tool input arguments:",
            "tool multiply → 35",
            "tool submit → 35",
        ],
        "{text}"
    );
    assert!(text.contains("answer: 35"), "{text}");
}
