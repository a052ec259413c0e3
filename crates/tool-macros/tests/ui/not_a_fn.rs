use actuator_tool_macros::tool;

/// A struct.
#[tool]
struct Search {
    query: String,
}

fn main() {
    let _ = Search { query: String::new() }.query;
}
