use actuator_tool_macros::tool;

/// Reads a file.
#[tool(paralel)]
async fn read() -> String {
    String::new()
}

fn main() {}
