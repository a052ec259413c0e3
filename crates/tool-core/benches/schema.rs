//! W1 of the Python reference (`w1_schema.py`): what a tool's schema costs.
//!
//! Inspect extracts a `ToolInfo` from a function at run time (type hints, signature, docstring,
//! one `json_schema()` per parameter) and caches it per function, handing out deep copies.
//! `#[tool]` reads the types and doc comments at compile time and builds the schema once, on
//! the first call of `NAME_tool()`; afterwards a constructor call is a few `Arc` clones.
//!
//! Measured here (divan): the constructors `add_tool()` and `search_tool()` after their first
//! use, `info_arc()`, a deep copy of the `ToolInfo`, the schema build that the first use runs
//! (the same `ParamsBuilder` chain `#[tool]` expands to, done again each iteration: the
//! analogue of Inspect's cold extraction), the validator compilation, and the schema as a JSON
//! value. Each provider dialect on the `search` tool is `actuator-dialect`'s `dialect` bench.
//!
//! `schema --first-construction` instead measures, in this fresh process, the first
//! `search_tool()` call (schema built) and its first `validate` (validator compiled), prints
//! one `FIRST {json}` line and exits; `cargo xtask bench` runs it in several processes.

#[path = "fixture/mod.rs"]
mod fixture;

use std::time::Instant;

use actuator_tool_core::{ArgumentValidator, ParamsBuilder, ToolInfo};
use divan::{Bencher, black_box};
use fixture::{Mode, add_tool, search_tool};
use serde_json::json;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--first-construction") {
        first_construction();
        return;
    }
    divan::main();
}

/// The first `search_tool()` and first validation of this process, in nanoseconds.
fn first_construction() {
    let t0 = Instant::now();
    let search = search_tool();
    let built = t0.elapsed();
    let args = json!({"query": "rust async", "limit": 10});
    let t1 = Instant::now();
    let valid = search.validate(&args).is_ok();
    let validated = t1.elapsed();
    assert!(valid, "the search arguments should be valid");
    let t2 = Instant::now();
    let add = add_tool();
    let add_built = t2.elapsed();
    black_box((search, add));
    println!(
        "FIRST {}",
        json!({
            "search_tool_ns": built.as_nanos() as u64,
            "first_validate_ns": validated.as_nanos() as u64,
            "add_tool_after_ns": add_built.as_nanos() as u64,
        })
    );
}

/// The 5-parameter schema, built as `#[tool]`'s first use builds it.
fn build_search_info() -> ToolInfo {
    let parameters = ParamsBuilder::new()
        .param::<String>("query", Some("Text to search for."))
        .param::<u32>("limit", Some("Maximum number of hits to return."))
        .param::<Option<f64>>(
            "threshold",
            Some("Minimum relevance score (0-1) for a hit to be included."),
        )
        .param_optional::<Vec<String>>(
            "tags",
            Some("Only return documents carrying all of these tags."),
        )
        .param_with_default::<Mode>("mode", Some("Matching strategy to use."), Mode::Fast)
        .build();
    ToolInfo::new("search", "Search the document index.", parameters)
}

/// `add_tool()` after its first use: the cached spec and the handler, no schema work.
#[divan::bench]
fn add_tool_constructor() -> actuator_tool_core::ToolDef {
    add_tool()
}

/// `search_tool()` after its first use (Inspect: `ToolDef(@tool)`, cached, 80 µs).
#[divan::bench]
fn search_tool_constructor() -> actuator_tool_core::ToolDef {
    search_tool()
}

/// `info_arc()`: the `ToolInfo` a model is offered, shared (Inspect: `parse_tool_info`, cached).
#[divan::bench]
fn search_info_arc(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| black_box(&tool).info_arc());
}

/// A deep copy of the `ToolInfo` (what Inspect's cache hands out on every hit).
#[divan::bench]
fn search_info_deep_clone(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| black_box(&tool).info().clone());
}

/// The schema build `#[tool]` runs on first use, repeated (Inspect: cold extraction).
#[divan::bench]
fn search_schema_build() -> ToolInfo {
    build_search_info()
}

/// Compiling the argument validator, which the first `validate` of a tool does once.
#[divan::bench]
fn search_validator_compile(bencher: Bencher<'_, '_>) {
    let info = build_search_info();
    bencher.bench_local(|| ArgumentValidator::new(&info.name, black_box(&info.parameters)));
}

/// The parameters as a JSON value (Inspect: `ToolParams.model_dump(exclude_none=True)`).
#[divan::bench]
fn search_params_to_value(bencher: Bencher<'_, '_>) {
    let tool = search_tool();
    bencher.bench_local(|| black_box(&tool).parameters().to_value());
}
