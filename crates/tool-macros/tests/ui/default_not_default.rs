use actuator_tool_macros::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Mode {
    fast: bool,
}

/// Runs.
///
/// # Arguments
/// * `mode` - How to run.
#[tool]
async fn run(#[tool(default)] mode: Mode) -> bool {
    mode.fast
}

fn main() {}
