//! Benchmarks for [`truncate_tool_output`]: its cost must follow the limit, not the size
//! of the output.

use actuator_tool_core::{DEFAULT_MAX_TOOL_OUTPUT, truncate_tool_output};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// The size of the benchmarked outputs: 1 MiB.
const INPUT_BYTES: usize = 1 << 20;

/// Repeats `unit` until the text is at least `bytes` long.
fn build(unit: &str, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + unit.len());
    while s.len() < bytes {
        s.push_str(unit);
    }
    s
}

/// 1 MiB of ASCII text truncated to 16 KiB.
#[divan::bench]
fn ascii_1mib_to_16kib(bencher: Bencher<'_, '_>) {
    let input = build("the quick brown fox jumps over the lazy dog\n", INPUT_BYTES);
    bencher.bench(|| {
        truncate_tool_output(
            black_box("read_file"),
            black_box(input.as_str()),
            black_box(DEFAULT_MAX_TOOL_OUTPUT),
        )
    });
}

/// 1 MiB of mixed Cyrillic, CJK and emoji text truncated to 16 KiB, so both cuts land
/// inside multi-byte characters.
#[divan::bench]
fn non_ascii_1mib_to_16kib(bencher: Bencher<'_, '_>) {
    // Cyrillic letters are 2 bytes, ☕ 3 and 🥐 4: with this unit both cuts fall inside a
    // character (checked below), so both are moved to a boundary.
    let input = build(
        "Съешь же ещё этих мягких французских булок 🥐☕ ",
        INPUT_BYTES,
    );
    assert!(!input.is_char_boundary(DEFAULT_MAX_TOOL_OUTPUT / 2));
    assert!(!input.is_char_boundary(input.len() - DEFAULT_MAX_TOOL_OUTPUT / 2));
    bencher.bench(|| {
        truncate_tool_output(
            black_box("read_file"),
            black_box(input.as_str()),
            black_box(DEFAULT_MAX_TOOL_OUTPUT),
        )
    });
}
