use actuator_tool_macros::tool;

fn view(call: &str) -> String {
    call.to_owned()
}

/// Lists.
#[tool(viewer = view)]
async fn list() -> u32 {
    1
}

fn main() {}
