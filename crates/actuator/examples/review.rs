//! Governing what tools do and what they return: a file tool with canonical arguments, an
//! approval policy written for the paths the tool will really open, and a reviewer that reads
//! each result before the model does.
//!
//! The model (scripted) first reads `notes/todo.txt`, then tries `notes/../../etc/passwd`,
//! then reads `keys/id_ed25519`. The traversal is approved or rejected on its canonical form,
//! `/etc/passwd`, which the policy refuses; the key's content is caught by the reviewer, which
//! ends the run before the model sees it. The console transcript shows every decision.
//!
//! Run with `cargo run --example review --features exec`.

use std::sync::Arc;

use actuator::events::ConsoleTranscript;
use actuator::exec::{
    ApprovalDecision, ApprovalPolicy, ExecError, ExecuteOptions, Review, ReviewPolicy,
    ReviewRequest, Reviewer, auto_approver, execute_tools,
};
use actuator::model::{BoxFuture, ChatMessage, ChatMessageAssistant, ToolCall};
use actuator::prelude::*;
use serde_json::{Map, Value, json};

/// `path` resolved against the workspace `/work`, as `read_file` opens it: `..` and `.`
/// segments removed, so policies see where a path really leads.
fn resolve(path: &str) -> Result<String, ToolError> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        vec!["work"]
    };
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts
                    .pop()
                    .ok_or_else(|| ToolError::new(format!("Invalid path: {path} escapes /")))?;
            }
            p => parts.push(p),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

/// `read_file`'s canonical arguments: its `path`, resolved.
fn canonical_path(args: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    let mut canonical = args.clone();
    if let Some(Value::String(path)) = args.get("path") {
        canonical.insert("path".into(), resolve(path)?.into());
    }
    Ok(canonical)
}

/// Read a file.
///
/// # Arguments
/// * `path` - The file, relative to the workspace.
#[tool(canonical = canonical_path)]
fn read_file(path: String) -> String {
    // The tool receives the path that was approved: canonical, never the model's spelling.
    match path.as_str() {
        "/work/notes/todo.txt" => "buy milk".into(),
        "/work/keys/id_ed25519" => "-----BEGIN OPENSSH PRIVATE KEY-----\n…".into(),
        other => format!("no such file: {other}"),
    }
}

/// Ends the run when a result holds a private key.
struct SecretMonitor;

impl Reviewer for SecretMonitor {
    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        // The untruncated output: a secret past the model's output limit is still a secret.
        let leaked = request.output.text().contains("PRIVATE KEY");
        Box::pin(async move {
            if leaked {
                Review::terminate().with_explanation("a private key in the output")
            } else {
                Review::proceed()
            }
        })
    }

    fn name(&self) -> &str {
        "secret_monitor"
    }
}

fn turn(id: &str, path: &str) -> ChatMessage {
    let mut assistant = ChatMessageAssistant::new(format!("Reading {path}."));
    assistant.tool_calls = Some(vec![ToolCall::new(id, "read_file", json!({"path": path}))]);
    ChatMessage::Assistant(Box::new(assistant))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = [read_file_tool()];
    let options = ExecuteOptions::default()
        .events(Arc::new(ConsoleTranscript::new()))
        // Matched on the canonical call: `notes/../../etc/passwd` is `/etc/passwd` here.
        .approval(ApprovalPolicy::new(
            auto_approver(ApprovalDecision::Reject),
            ["read_file(path='/etc/*"],
        )?)
        .approval(ApprovalPolicy::new(
            auto_approver(ApprovalDecision::Approve),
            ["*"],
        )?)
        .review(ReviewPolicy::new(Arc::new(SecretMonitor), ["read_file"])?);

    let mut messages = vec![ChatMessage::user("Tidy up my notes.")];
    for (id, path) in [
        ("call_1", "notes/todo.txt"),
        ("call_2", "notes/../../etc/passwd"),
        ("call_3", "keys/id_ed25519"),
    ] {
        messages.push(turn(id, path));
        match execute_tools(&messages, &tools, &options).await {
            Ok(out) => messages.extend(out.messages),
            Err(err @ ExecError::ReviewTerminated { .. }) => {
                println!("run ended: {err}");
                return Ok(());
            }
            Err(other) => return Err(other.into()),
        }
    }
    Err("the reviewer should have ended the run".into())
}
