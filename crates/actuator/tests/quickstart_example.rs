//! `examples/quickstart.rs`, the README's first command, run as built: its transcript shows each
//! call once, with its result, and the answer. `cargo test` builds the examples before running
//! tests (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "macros", feature = "agent"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod support;

#[test]
fn the_quickstart_transcript_shows_each_call_once_with_its_result() {
    let Some(text) = support::run_example("quickstart") else {
        return;
    };
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
