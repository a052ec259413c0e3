//! Our server's resources, prompts, completions, logging levels, sampling and elicitation,
//! driven by the official MCP Python SDK's client (`tests/py/sdk_features_client.py`) over
//! streamable HTTP.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/conformance.rs"]
mod conformance;

use std::process::Stdio;
use std::time::Duration;

use actuator_mcp::{HttpOptions, serve_http};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_reaches_every_server_feature() {
    let Some((python, script)) = common::py_script("sdk_features_client.py") else {
        return;
    };
    let server = conformance::conformance_server();
    let http = serve_http(server.clone(), HttpOptions::default())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seen.json");
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .arg(&out)
        .arg(http.url())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let subscribed = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the client subscribes within a minute")
        .unwrap();
    assert_eq!(subscribed.as_deref(), Some("subscribed"));
    // The subscribed session hears of the change; nobody else is subscribed.
    assert_eq!(server.resource_updated("test://watched-resource").await, 1);
    assert_eq!(server.resource_updated("test://static-text").await, 0);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the client finishes")
        .unwrap();
    assert!(status.success());
    http.shutdown().await;

    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        seen["resources"],
        json!([
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ])
    );
    assert_eq!(seen["templates"], json!(["test://template/{id}/data"]));
    assert_eq!(
        seen["static_text"],
        "This is the content of the static text resource."
    );
    assert_eq!(seen["templated"]["id"], "7");
    assert!(
        seen["missing"]
            .as_str()
            .unwrap()
            .contains("Resource test://nowhere not found"),
        "{}",
        seen["missing"]
    );
    assert_eq!(seen["prompt"], "Prompt with arguments: arg1='a', arg2='b'");
    assert!(
        seen["prompt_missing_arg"]
            .as_str()
            .unwrap()
            .contains("needs the argument 'arg2' (it takes: arg1, arg2)"),
        "{}",
        seen["prompt_missing_arg"]
    );
    assert_eq!(seen["completion"], json!(["paris", "park", "party"]));
    assert_eq!(seen["logs_at_warning"], 0, "info entries are below warning");
    assert_eq!(
        seen["logs_at_debug"],
        json!([
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ])
    );
    assert_eq!(seen["sampling"], json!(["LLM response: echo hello"]));
    assert_eq!(
        seen["elicitation"],
        json!([
            r#"User response: action=accept, content={"username":"ada","email":"ada@example.com"}"#
        ])
    );
    assert_eq!(seen["elicitation_bad"]["is_error"], true);
    assert!(
        seen["elicitation_bad"]["text"][0]
            .as_str()
            .unwrap()
            .contains("does not match the requested schema"),
        "{}",
        seen["elicitation_bad"]
    );
    assert_eq!(seen["updated"], "test://watched-resource");
}
