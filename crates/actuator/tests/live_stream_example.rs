//! `examples/live_stream.rs`, run as built: the streamed text of each agent, the sub-agent
//! indented under the call that started it. `cargo test` builds the examples before running
//! tests (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "macros", feature = "multi"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod support;

#[test]
fn the_live_view_shows_each_agents_streamed_text_where_it_ran() {
    let Some(text) = support::run_example("live_stream") else {
        return;
    };
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
