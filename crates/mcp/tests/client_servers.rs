//! Our client against MCP servers nobody here wrote: server-everything (content types, long
//! operations), server-filesystem (on a temp directory) and mcp-server-time.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use actuator_mcp::{McpClient, mcp_tools};
use actuator_model::MessageContent;
use actuator_tool_core::{Content, ToolErrorKind};
use common::exec_one;
use serde_json::json;

fn names(tools: &[actuator_tool_core::ToolDef]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_lists_tools_with_schemas_prefix_and_filter() {
    let Some(server) = common::everything() else {
        return;
    };
    let client = McpClient::new(server);
    let all = mcp_tools(&client).list().await.unwrap();
    let all_names = names(&all);
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(all_names.contains(&expected.to_owned()), "{all_names:?}");
    }
    let echo = all.iter().find(|t| t.name() == "echo").unwrap();
    assert_eq!(echo.parameters().required, ["message"]);
    assert_eq!(echo.parameters().properties["message"]["type"], "string");
    assert!(echo.parallel());

    let some = mcp_tools(&client).prefix("ev_").filter(["get-*"]).unwrap();
    let some = some.list().await.unwrap();
    let some_names = names(&some);
    assert!(
        some_names.contains(&"ev_get-sum".to_owned()),
        "{some_names:?}"
    );
    assert!(
        some_names.iter().all(|n| n.starts_with("ev_get-")),
        "{some_names:?}"
    );
    // The prefixed tool calls the server's tool by its own name.
    let sum = exec_one(&some, "ev_get-sum", json!({"a": 2, "b": 5})).await;
    assert_eq!(sum.error, None);
    assert!(sum.content.text().contains('7'), "{}", sum.content.text());
    // One connection served both listings and the call.
    assert_eq!(client.connections_made(), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_results_map_to_content() {
    let Some(server) = common::everything() else {
        return;
    };
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).list().await.unwrap();

    let echo = exec_one(&tools, "echo", json!({"message": "hello"})).await;
    assert_eq!(echo.error, None);
    assert_eq!(echo.content, MessageContent::Text("Echo: hello".into()));

    let image = exec_one(&tools, "get-tiny-image", json!({})).await;
    let MessageContent::Parts(parts) = &image.content else {
        panic!("content parts, got {:?}", image.content);
    };
    assert!(
        parts
            .iter()
            .any(|p| matches!(p, Content::Image(m) if m.media_type == "image/png")),
        "{parts:?}"
    );
    assert!(parts.iter().any(|p| p.as_text().is_some()));

    let structured = exec_one(
        &tools,
        "get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert_eq!(structured.error, None);
    assert!(
        structured.content.text().contains("36"),
        "{}",
        structured.content.text()
    );

    let links = exec_one(&tools, "get-resource-links", json!({"count": 2})).await;
    assert_eq!(links.error, None);
    assert!(
        links.content.text().contains("(demo://resource/"),
        "{}",
        links.content.text()
    );

    // Our validator refuses a wrong argument before the server sees it, with the exec text.
    let bad = exec_one(&tools, "get-sum", json!({"a": "two", "b": 5})).await;
    let error = bad.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::Parsing);
    assert!(
        error.message.contains("'two' is not of type 'number'"),
        "{}",
        error.message
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_operation_times_out_is_cancelled_and_the_server_goes_on() {
    let Some(server) = common::everything() else {
        return;
    };
    let client = McpClient::new(server.timeout(Duration::from_millis(1500)));
    let tools = mcp_tools(&client).list().await.unwrap();
    assert_eq!(tools[0].timeout(), Some(Duration::from_millis(1500)));
    let started = Instant::now();
    let slow = exec_one(
        &tools,
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let error = slow.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::Timeout);
    assert_eq!(error.message, "Command timed out before completing.");
    // The connection is still good.
    let echo = exec_one(&tools, "echo", json!({"message": "after"})).await;
    assert_eq!(echo.content.text(), "Echo: after");
    assert_eq!(client.connections_made(), 1);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_reads_writes_and_refuses_paths_outside_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.txt"), "first line\n").unwrap();
    let Some(server) = common::filesystem(&root) else {
        return;
    };
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).prefix("fs_").list().await.unwrap();
    let all = names(&tools);
    assert!(all.contains(&"fs_read_text_file".to_owned()), "{all:?}");

    let path = root.join("notes.txt").display().to_string();
    let read = exec_one(&tools, "fs_read_text_file", json!({"path": path})).await;
    assert_eq!(read.error, None, "{:?}", read.content);
    assert!(read.content.text().contains("first line"));

    let new = root.join("new.txt").display().to_string();
    let write = exec_one(
        &tools,
        "fs_write_file",
        json!({"path": new, "content": "written"}),
    )
    .await;
    assert_eq!(write.error, None, "{:?}", write.content);
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "written"
    );

    // The server refuses a path outside its directory with isError: a recoverable error.
    let outside = exec_one(
        &tools,
        "fs_read_text_file",
        json!({"path": "/etc/hostname"}),
    )
    .await;
    let error = outside.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::Unknown);
    assert!(
        error.message.contains("outside allowed directories"),
        "{}",
        error.message
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_server_tools_run() {
    let Some(server) = common::time_server() else {
        return;
    };
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).list().await.unwrap();
    assert_eq!(names(&tools), ["get_current_time", "convert_time"]);
    let now = exec_one(
        &tools,
        "get_current_time",
        json!({"timezone": "Europe/Paris"}),
    )
    .await;
    assert_eq!(now.error, None, "{:?}", now.content);
    assert!(
        now.content.text().contains("Europe/Paris"),
        "{}",
        now.content.text()
    );
    let converted = exec_one(
        &tools,
        "convert_time",
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    )
    .await;
    assert_eq!(converted.error, None, "{:?}", converted.content);
    assert!(
        converted.content.text().contains("21:00"),
        "{}",
        converted.content.text()
    );
    // A bad timezone is the server's error, recoverable.
    let bad = exec_one(
        &tools,
        "get_current_time",
        json!({"timezone": "Mars/Olympus"}),
    )
    .await;
    assert!(bad.error.is_some(), "{:?}", bad.content);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let Some((_server, url)) = common::everything_http().await else {
        return;
    };
    let client = McpClient::new(
        actuator_mcp::McpServer::http(url)
            .name("everything-http")
            .header("X-Test", "yes"),
    );
    let tools = mcp_tools(&client)
        .filter(["echo"])
        .unwrap()
        .list()
        .await
        .unwrap();
    assert_eq!(names(&tools), ["echo"]);
    let echo = exec_one(&tools, "echo", json!({"message": "over http"})).await;
    assert_eq!(echo.content.text(), "Echo: over http");
    client.close().await;
}

/// Runs server-everything's long operation (5 steps in 1 s) and returns the progress seen.
async fn long_operation_progress(
    server: actuator_mcp::McpServer,
) -> Vec<actuator_mcp::McpProgress> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let client = McpClient::new(server.on_progress(move |p| sink.lock().unwrap().push(p.clone())));
    let tools = mcp_tools(&client)
        .prefix("ev_")
        .filter(["trigger-long-running-operation"])
        .unwrap()
        .list()
        .await
        .unwrap();
    let done = exec_one(
        &tools,
        "ev_trigger-long-running-operation",
        json!({"duration": 1, "steps": 5}),
    )
    .await;
    assert_eq!(done.error, None, "{:?}", done.content);
    assert!(
        done.content.text().contains("Steps: 5"),
        "{}",
        done.content.text()
    );
    client.close().await;
    // Every notification was passed on before the call's result.
    seen.lock().unwrap().clone()
}

fn assert_five_steps(seen: &[actuator_mcp::McpProgress], server: &str) {
    let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(
        steps,
        (1..=5)
            .map(|i| (f64::from(i), Some(5.0)))
            .collect::<Vec<_>>()
    );
    for p in seen {
        assert_eq!(p.server, server);
        assert_eq!(p.tool, "trigger-long-running-operation");
        assert_eq!(p.call_id, "call_1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_a_long_operation_arrives_in_order() {
    let Some(server) = common::everything() else {
        return;
    };
    let seen = long_operation_progress(server).await;
    assert_five_steps(&seen, "everything");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_of_a_long_operation_arrives_in_order_over_http() {
    let Some((_server, url)) = common::everything_http().await else {
        return;
    };
    let seen =
        long_operation_progress(actuator_mcp::McpServer::http(url).name("everything-http")).await;
    assert_five_steps(&seen, "everything-http");
}
