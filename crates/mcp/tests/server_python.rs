//! Our server with the official MCP Python SDK as its client, over stdio and streamable HTTP:
//! list, call, a validation error with the executor's exact text, structured content, and a
//! cancelled slow call.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/served.rs"]
mod served;

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_mcp::{HttpOptions, ServeOptions, ToolServer, serve_http};
use serde_json::{Value, json};

/// The text the executor gives a model for `add(x="seven", y=4)`.
async fn expected_validation_text() -> String {
    let message = common::exec_one(
        &served::tools(Arc::default()),
        "add",
        json!({"x": "seven", "y": 4}),
    )
    .await;
    message.error.unwrap().message
}

async fn check_seen(seen: &Value) {
    let tools = seen["tools"].as_object().unwrap();
    let mut names: Vec<&String> = tools.keys().collect();
    names.sort();
    assert_eq!(names, ["add", "count", "explode", "point", "slow"]);
    // The schema the client sees is the MCP dialect's rendering.
    let add_info = served::tools(Arc::default())[0].info().clone();
    assert_eq!(
        tools["add"],
        actuator_dialect::mcp(&add_info).tool["inputSchema"]
    );
    // A #[tool] returning a struct with a schema declares it as its output schema, and the
    // SDK client accepted the structured result against it; `add` (an integer) declares none.
    let output_schemas = seen["output_schemas"].as_object().unwrap();
    assert_eq!(output_schemas.keys().collect::<Vec<_>>(), ["point"]);
    assert_eq!(output_schemas["point"]["type"], "object");
    assert_eq!(output_schemas["point"]["required"], json!(["x", "y"]));
    // The tool's progress reached the client as notifications/progress, in order, before
    // the result.
    assert_eq!(
        seen["count"],
        json!({"text": ["counted"], "progress": [
            [1.0, 3.0, "step 1"], [2.0, 3.0, "step 2"], [3.0, 3.0, "step 3"]
        ]})
    );
    assert_eq!(seen["add"], json!({"is_error": false, "text": ["7"]}));
    assert_eq!(seen["bad"]["is_error"], true);
    assert_eq!(
        seen["bad"]["text"],
        json!([expected_validation_text().await])
    );
    assert_eq!(seen["point"]["text"], json!([r#"{"x":1,"y":1}"#]));
    assert_eq!(seen["point"]["structured"], json!({"x": 1, "y": 1}));
    assert_eq!(seen["slow"], "abandoned");
    assert_eq!(seen["after"], json!(["2"]));
}

async fn wait_cancelled(flag: &AtomicBool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        flag.load(Ordering::SeqCst),
        "the slow call was not cancelled on our side"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_over_stdio() {
    let Some((python, script)) = common::py_script("sdk_client.py") else {
        return;
    };
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = tokio::process::Command::new(python)
        .arg(&script)
        .arg(out.path())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let cancelled = Arc::new(AtomicBool::new(false));
    let server =
        ToolServer::new(served::tools(cancelled.clone()), ServeOptions::default()).unwrap();
    let serving = tokio::spawn(server.serve_io(stdout, stdin));
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the Python client finished within 60 s")
        .unwrap();
    assert!(status.success(), "the Python client failed: {status}");
    serving.abort();
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    check_seen(&seen).await;
    wait_cancelled(&cancelled).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_over_http_with_a_bearer_token() {
    let Some((python, script)) = common::py_script("sdk_client.py") else {
        return;
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    let server =
        ToolServer::new(served::tools(cancelled.clone()), ServeOptions::default()).unwrap();
    let http = serve_http(server, HttpOptions::default().bearer_token("s3cret"))
        .await
        .unwrap();
    assert!(http.local_addr().ip().is_loopback());
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = tokio::process::Command::new(python)
        .arg(&script)
        .arg(out.path())
        .arg("http")
        .arg(http.url())
        .arg("s3cret")
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the Python client finished within 60 s")
        .unwrap();
    assert!(status.success(), "the Python client failed: {status}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    check_seen(&seen).await;
    wait_cancelled(&cancelled).await;
    http.shutdown().await;
}
