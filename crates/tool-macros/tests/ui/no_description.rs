use actuator_tool_macros::tool;

#[tool]
async fn add(
    /// First addend.
    x: i64,
) -> i64 {
    x
}

fn main() {}
