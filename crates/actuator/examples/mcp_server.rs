//! The quickstart's tools (`add`, `multiply`) served over MCP on stdin/stdout, for any MCP
//! client (Claude Desktop, an IDE, the MCP Inspector, another agent framework).
//!
//! Build it once, then register the binary in the client's configuration:
//!
//! ```text
//! cargo build --example mcp_server --features mcp
//! # "mcpServers": {"actuator": {"command": "/path/to/target/debug/examples/mcp_server"}}
//! ```
//!
//! Or run it directly with `cargo run --example mcp_server --features mcp` (it waits for a
//! client on stdin). Logs go to stderr; stdout is the protocol.

use actuator::mcp::{ServeOptions, ToolServer, serve_stdio};
use actuator::prelude::*;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Multiply two integers.
///
/// # Arguments
/// * `x` - First factor.
/// * `y` - Second factor.
#[tool]
async fn multiply(x: i64, y: i64) -> Result<i64, ToolError> {
    x.checked_mul(y)
        .ok_or_else(|| ToolError::new("The product does not fit in 64 bits."))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = ToolServer::new(
        [add_tool(), multiply_tool()],
        ServeOptions::default().name("actuator-quickstart"),
    )?;
    serve_stdio(server).await?;
    Ok(())
}
