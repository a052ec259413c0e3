use actuator_tool_macros::tool;

/// Reads a file.
#[tool(name = "read", parallel, name = "read_file")]
async fn read() -> String {
    String::new()
}

fn main() {}
