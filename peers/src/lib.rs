//! The same `add(x, y)` tool in Actuator and in two Rust peers, rig and rmcp, each dispatched
//! in process the way its own runtime dispatches a model's tool call, for W2 of the
//! benchmarks (`benches/peers.rs`, run by `cargo xtask bench --peers`).
//!
//! - [`ours`]: `execute_tools` on a conversation whose last assistant message calls `add`,
//!   events on, as the W2 bench of `crates/exec` (validation, the call, the tool message and
//!   the tool event);
//! - [`rig`]: rig-agent's `ToolSet::execute` (name and raw argument text in, a `ToolResult`
//!   out), the dispatch rig's agent loop calls for each tool call;
//! - [`mcp`]: rmcp's `ToolRouter::call` on a `#[tool_router]` server (a `ToolCallContext` in,
//!   a `CallToolResponse` out), which its `ServerHandler::call_tool` forwards to.
//!
//! [`behaviour`] puts the same three argument texts through each: a valid call, a wrongly
//! typed argument (`{"x": "three", "y": 2}`) and an unknown key (`{"x": 1, "y": 2, "z": 3}`).

pub mod behaviour;
pub mod mcp;
pub mod ours;
pub mod rig;

/// The arguments of the valid call: `add(1, 2)`, answer `3`.
pub const VALID: &str = r#"{"x": 1, "y": 2}"#;
/// A wrongly typed argument.
pub const INVALID_ARGUMENT: &str = r#"{"x": "three", "y": 2}"#;
/// A key the tool does not declare.
pub const UNKNOWN_KEY: &str = r#"{"x": 1, "y": 2, "z": 3}"#;

/// A current-thread Tokio runtime, as the W2 bench uses (one thread, like the Python loop).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// What a framework made of one call, as the model would see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The call was answered as an error (the model is told it failed).
    pub is_error: bool,
    /// The text the model is shown: the result, or the error message.
    pub text: String,
}
