//! W1 of the Python reference (`w1_schema.py`), the provider side: each dialect rendering the
//! 5-parameter `search` tool (divan). The rest of W1 is tool-core's `schema` bench.

#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;

use divan::{Bencher, black_box};
use fixture::search_tool;

fn main() {
    divan::main();
}

/// MCP: the schema as is.
#[divan::bench]
fn mcp(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| actuator_dialect::mcp(black_box(tool.info())));
}

/// OpenAI strict mode: closed objects, optional made nullable, unsupported keywords moved.
#[divan::bench]
fn openai_strict(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| actuator_dialect::openai_strict(black_box(tool.info())));
}

/// Anthropic: `input_schema`.
#[divan::bench]
fn anthropic(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| actuator_dialect::anthropic(black_box(tool.info())));
}

/// Gemini: an OpenAPI 3.0 subset.
#[divan::bench]
fn gemini(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| actuator_dialect::gemini(black_box(tool.info())));
}
