use actuator_tool_macros::tool;

/// Adds a pair.
#[tool]
async fn add(
    /// The pair.
    (x, y): (i64, i64),
) -> i64 {
    x + y
}

fn main() {}
