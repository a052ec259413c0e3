//! `examples/review.rs`, run as built: the traversal is refused on its canonical path, the
//! private key is caught by the reviewer and the run ends before the model reads it, and the
//! transcript shows each decision. `cargo test` builds the examples before running tests
//! (missing: skipped with a reason, a failure under CI).

#![cfg(all(feature = "macros", feature = "exec"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod support;

#[test]
fn the_review_example_refuses_the_traversal_and_stops_at_the_key() {
    let Some(text) = support::run_example("review") else {
        return;
    };
    assert!(text.contains("tool read_file → buy milk"), "{text}");
    assert!(
        text.contains("tool read_file failed (approval): Automatic decision."),
        "{text}"
    );
    assert!(
        text.contains(
            "review secret_monitor on read_file: terminate (a private key in the output)"
        ),
        "{text}"
    );
    assert!(
        text.contains("run ended: Tool result reviewer requested termination."),
        "{text}"
    );
    assert!(!text.contains("no such file"), "{text}");
}
