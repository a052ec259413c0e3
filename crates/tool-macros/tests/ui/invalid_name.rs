use actuator_tool_macros::tool;

/// Reads a file.
#[tool(name = "read file")]
async fn read() -> String {
    String::new()
}

fn main() {}
