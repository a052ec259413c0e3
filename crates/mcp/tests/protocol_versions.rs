//! A server that speaks only an older protocol version still works: the client offers the
//! newest version it knows, the server answers with its own, and the client continues in the
//! server's version (over HTTP, every later request carries it in MCP-Protocol-Version, which
//! such a server checks). Against servers on the official Python SDK pinned to 2025-06-18 and
//! to 2025-11-25, neither of which knows `server/discover` (tests/py/pinned_server.py).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use actuator_mcp::{McpClient, McpServer, mcp_tools};
use actuator_tool_core::source::ToolSource;
use common::{KillOnDrop, exec_one, free_port, py_script, wait_for_port};
use serde_json::json;

const VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];

async fn ask_version(server: McpServer) -> String {
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).tools().await.unwrap();
    let out = exec_one(&tools, "version", json!({})).await;
    client.close().await;
    assert!(out.error.is_none(), "{out:?}");
    out.content.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pinned_to_an_older_version_works_over_stdio() {
    let Some((python, script)) = py_script("pinned_server.py") else {
        return;
    };
    for version in VERSIONS {
        let server = McpServer::stdio(
            python.display().to_string(),
            [script.display().to_string(), version.into(), "stdio".into()],
        )
        .name("pinned");
        let said = ask_version(server).await;
        assert!(
            said.starts_with(&format!("negotiated={version} ")),
            "{said}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pinned_to_an_older_version_works_over_http() {
    let Some((python, script)) = py_script("pinned_server.py") else {
        return;
    };
    for version in VERSIONS {
        let port = free_port();
        let child = std::process::Command::new(&python)
            .arg(&script)
            .args([version, "http", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let _guard = KillOnDrop(child);
        wait_for_port(port, Duration::from_secs(20)).await;
        let server = McpServer::http(format!("http://127.0.0.1:{port}/mcp")).name("pinned");
        let said = ask_version(server).await;
        assert_eq!(said, format!("negotiated={version} header={version}"));
    }
}
