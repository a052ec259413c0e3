//! `examples/live_stream.rs`, run as built: the streamed text of each agent, the sub-agent
//! indented under the call that started it. `cargo test` builds the examples before running
//! tests (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "macros", feature = "multi"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::path::Path;

#[test]
fn the_live_view_shows_each_agents_streamed_text_where_it_ran() {
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/live_stream");
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
    let lines: Vec<&str> = text.lines().collect();
    let at = |line: &str| {
        lines
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("no line {line:?} in:\n{text}"))
    };
    let lead = at("lead: I will ask the researcher what a delta is.");
    let nested = at("    ── researcher (for call_1) ──");
    let researcher = at("    researcher: Let me check the glossary.");
    let result = at(
        "  ↳ researcher({\"input\":\"What is a delta?\"}) → A delta is a small piece of a stream.",
    );
    assert!(
        lead < nested && nested < researcher && researcher < result,
        "{text}"
    );
    assert!(!text.contains("fell behind"), "{text}");
}
