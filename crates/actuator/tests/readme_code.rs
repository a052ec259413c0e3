//! The README's code compiles: each of its ```rust blocks appears, line for line (indentation
//! aside), in `examples/readme.rs`, which `cargo test` and clippy build.

#![allow(clippy::unwrap_used, clippy::panic)]

/// The lines of `text` without leading whitespace, blank lines dropped.
fn lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn every_readme_code_block_is_in_the_compiled_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/readme.rs"))
            .unwrap();
    let example = lines(&example);
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start()) {
            (None, l) if l.starts_with("```rust") => current = Some(String::new()),
            (Some(_), l) if l.starts_with("```") => blocks.push(current.take().unwrap()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(blocks.len() >= 4, "the README's rust blocks were not found");
    for block in &blocks {
        let wanted = lines(block);
        let found = example
            .windows(wanted.len())
            .any(|w| w == wanted.as_slice());
        assert!(
            found,
            "this README block is not in examples/readme.rs, so nothing checks it compiles:\n{block}"
        );
    }
}
