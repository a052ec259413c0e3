use actuator_tool_macros::tool;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

fn main() {}
