use actuator_tool_macros::tool;

/// Waits.
#[tool(timeout = "30 seconds")]
async fn wait() {}

fn main() {}
