//! Client behaviours the reference servers cannot show, against a server on the official
//! Python SDK (tests/py/quirky_server.py): list-changed, a dead server and the reconnect, a
//! schema our validator cannot compile, isError, and cancellation reaching the server.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actuator_mcp::{McpClient, McpServer, mcp_tools};
use actuator_tool_core::ToolErrorKind;
use actuator_tool_core::source::{ToolSet, ToolSource};
use common::exec_one;
use serde_json::json;

fn quirky(marker_dir: &std::path::Path) -> Option<McpServer> {
    let (python, script) = common::py_script("quirky_server.py")?;
    Some(
        McpServer::stdio(
            python.display().to_string(),
            [
                script.display().to_string(),
                marker_dir.display().to_string(),
            ],
        )
        .name("quirky"),
    )
}

fn names(tools: &[actuator_tool_core::ToolDef]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_is_honoured_on_the_next_listing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    let source = mcp_tools(&client);
    let first = source.tools().await.unwrap();
    assert!(!names(&first).contains(&"added_1".to_owned()));
    // Without a notification the cached list is served again.
    assert_eq!(names(&source.tools().await.unwrap()), names(&first));

    let grown = exec_one(&first, "grow", json!({})).await;
    assert_eq!(grown.content.text(), "grown");
    // The notification is sent before the result, but let it land.
    let deadline = Instant::now() + Duration::from_secs(5);
    let listed = loop {
        let listed = source.tools().await.unwrap();
        if names(&listed).contains(&"added_1".to_owned()) || Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        names(&listed).contains(&"added_1".to_owned()),
        "{:?}",
        names(&listed)
    );
    let ran = exec_one(&listed, "added_1", json!({})).await;
    assert_eq!(ran.content.text(), "added_1 ran");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_server_is_a_tool_error_and_the_next_turn_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    let set = ToolSet::new().source(Arc::new(mcp_tools(&client)));
    let tools = set.resolve().await.unwrap();
    let crashed = exec_one(&tools, "crash", json!({})).await;
    let error = crashed.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::Unknown);
    assert!(
        error
            .message
            .contains("The MCP server 'quirky' is not running"),
        "{}",
        error.message
    );
    // Calls on the old tools fail the same way, clearly.
    let again = exec_one(&tools, "fail", json!({})).await;
    assert!(again.error.unwrap().message.contains("is not running"));
    // The next turn's listing connects again and the tools work.
    let tools = set.resolve().await.unwrap();
    assert_eq!(client.connections_made(), 2);
    let failed = exec_one(&tools, "fail", json!({})).await;
    assert_eq!(failed.error.unwrap().message, "the disk is full");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncompilable_schema_is_reported_once_and_the_tool_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    let source = mcp_tools(&client);
    let tools = source.tools().await.unwrap();
    let bad = tools.iter().find(|t| t.name() == "bad_pattern").unwrap();
    // The model still sees the server's schema.
    assert_eq!(bad.parameters().properties["q"]["pattern"], "(?<!x");
    assert!(bad.check().is_ok());
    let ran = exec_one(&tools, "bad_pattern", json!({"q": "hi"})).await;
    assert_eq!(ran.error, None);
    assert_eq!(ran.content.text(), "q='hi'");
    // Listing again (and after a list change) does not report it again.
    exec_one(&tools, "grow", json!({})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    source.tools().await.unwrap();
    source.tools().await.unwrap();
    let reports = client.reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].contains("'bad_pattern'"), "{}", reports[0]);
    assert!(reports[0].contains("cannot compile"), "{}", reports[0]);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server.timeout(Duration::from_millis(700)));
    let tools = mcp_tools(&client).list().await.unwrap();
    let slow = exec_one(&tools, "slow", json!({})).await;
    assert_eq!(slow.error.unwrap().kind, ToolErrorKind::Timeout);
    // The server got notifications/cancelled and cancelled its handler.
    let marker = dir.path().join("cancelled");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(marker.exists(), "the server's handler was not cancelled");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_a_clear_source_error() {
    let client = McpClient::new(
        McpServer::stdio("/nonexistent/mcp-server", Vec::<String>::new()).name("missing"),
    );
    let err = mcp_tools(&client).tools().await.unwrap_err();
    assert!(
        err.message()
            .contains("Could not start or reach MCP server 'missing'"),
        "{}",
        err.message()
    );
}

fn server_pid(dir: &std::path::Path) -> u32 {
    std::fs::read_to_string(dir.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

async fn wait_gone(pid: u32) {
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while proc.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!proc.exists(), "the server process {pid} is still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_process_ends_with_the_client() {
    // Closed explicitly.
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    client.connect().await.unwrap();
    let pid = server_pid(dir.path());
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    client.close().await;
    wait_gone(pid).await;

    // Dropped, with tools made from it dropped too.
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).list().await.unwrap();
    let pid = server_pid(dir.path());
    drop(tools);
    drop(client);
    wait_gone(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_schema_passes_through_as_it_came() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = quirky(dir.path()) else {
        return;
    };
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).tools().await.unwrap();
    let dated = tools.iter().find(|t| t.name() == "dated").unwrap();
    // $schema and title kept, no additionalProperties added: the schema the server sent.
    assert_eq!(
        dated.info().parameters_schema(),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Dated",
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        })
    );
    // Re-served over MCP, the schema is the same.
    assert_eq!(
        actuator_dialect::mcp(dated.info()).tool["inputSchema"],
        dated.info().parameters_schema()
    );
    // The schema leaves other properties open, so our validation lets them through.
    let out = exec_one(&tools, "dated", json!({"q": "hi", "lang": "en"})).await;
    assert_eq!(out.content.text(), "q='hi' extra=['lang']");
    client.close().await;
}
