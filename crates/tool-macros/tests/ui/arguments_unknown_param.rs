use actuator_tool_macros::tool;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `z` - Second addend.
#[tool]
async fn add(x: i64) -> i64 {
    x
}

fn main() {}
