//! rig-core 0.44 with its default features alone (its derive macros; no HTTP transport, so
//! no provider client can send), built by `cargo xtask bench --only build`: the figure
//! issue 39 quotes. Its tool is the first app's.
use rig_core::rig_tool;

#[rig_tool(
    description = "Add two integers",
    params(x = "First addend", y = "Second addend"),
    required(x, y)
)]
fn add(x: i64, y: i64) -> Result<i64, rig_core::tool::ToolExecutionError> {
    Ok(x + y)
}

fn main() {
    println!("{:?}", add(3, 4).ok());
}
