use actuator_tool_macros::tool;

/// Lists.
///
/// # Arguments
/// * `limit` How many.
#[tool]
async fn list(limit: u32) -> u32 {
    limit
}

fn main() {}
