//! Shared by the tool tests: a confined sandbox (or a skip, or a CI failure) and calls.

#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use actuator_sandbox::{LocalSandbox, SandboxHandle, testing};
use actuator_tool_core::{ToolContext, ToolDef, ToolError, ToolFailure};
use serde_json::Value;

/// A confined sandbox, `None` (skip) without bubblewrap outside CI; fails under CI.
pub fn handle() -> Option<(SandboxHandle, std::path::PathBuf)> {
    let sandbox = testing::confined(LocalSandbox::builder()).unwrap_or_else(|e| panic!("{e}"))?;
    let workdir = sandbox.host_workdir().to_path_buf();
    Some((SandboxHandle::new(sandbox), workdir))
}

pub fn ctx(handle: &SandboxHandle, tool: &ToolDef) -> ToolContext {
    let mut ctx = ToolContext::new("call_1", tool.name());
    ctx.extensions.insert(handle.clone());
    ctx
}

/// Validates and calls; the text on success, the recoverable error otherwise.
pub async fn call(
    handle: &SandboxHandle,
    tool: &ToolDef,
    args: Value,
) -> Result<String, ToolError> {
    tool.validate(&args)?;
    match tool.call(args, ctx(handle, tool)).await {
        Ok(out) => Ok(out.text()),
        Err(ToolFailure::Recoverable(e)) => Err(e),
        Err(other) => panic!("fatal failure: {other:?}"),
    }
}

pub async fn ok(handle: &SandboxHandle, tool: &ToolDef, args: Value) -> String {
    call(handle, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{}: {}", e.kind(), e.message()))
}

pub async fn err(handle: &SandboxHandle, tool: &ToolDef, args: Value) -> ToolError {
    match call(handle, tool, args).await {
        Ok(text) => panic!("expected an error, got {text:?}"),
        Err(e) => e,
    }
}
