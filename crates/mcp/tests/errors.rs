//! Setting and serving errors keep their causes as `source()`, each text said once down the
//! chain; and the tools a server lists are the MCP dialect's rendering, computed without it.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "common/served.rs"]
mod served;

use std::error::Error;
use std::sync::Arc;

use actuator_mcp::{
    HttpOptions, McpClient, McpError, McpServer, ServeOptions, ToolServer, mcp_tools, serve_http,
};
use actuator_tool_core::ToolDefError;

/// Checks that no error in the chain repeats its source's text in its own message.
fn said_once(err: &McpError) {
    let mut current: &dyn Error = err;
    while let Some(source) = current.source() {
        assert!(
            !current.to_string().contains(&source.to_string()),
            "'{current}' repeats its source '{source}'"
        );
        current = source;
    }
}

#[test]
fn an_invalid_filter_keeps_the_glob_error() {
    let client = McpClient::new(McpServer::stdio("true", Vec::<String>::new()));
    let err = mcp_tools(&client).filter(["[unclosed"]).unwrap_err();
    assert!(matches!(err, McpError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("'[unclosed'"), "{err}");
    assert!(
        err.source()
            .and_then(|s| s.downcast_ref::<glob::PatternError>())
            .is_some(),
        "{err:?}"
    );
    said_once(&err);
}

#[test]
fn duplicate_tools_to_serve_keep_the_definition_error() {
    let err = ToolServer::new(
        [
            served::slow_tool(Arc::default()),
            served::slow_tool(Arc::default()),
        ],
        ServeOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, McpError::Config { .. }), "{err:?}");
    let source = err
        .source()
        .and_then(|s| s.downcast_ref::<ToolDefError>())
        .unwrap();
    assert!(
        matches!(source, ToolDefError::DuplicateName { name } if name == "slow"),
        "{source:?}"
    );
    said_once(&err);
}

#[tokio::test]
async fn a_taken_port_keeps_the_io_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = ToolServer::new(served::tools(Arc::default()), ServeOptions::default()).unwrap();
    let err = serve_http(
        server,
        HttpOptions::default().bind(taken.local_addr().unwrap()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Serve { .. }), "{err:?}");
    let io = err
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse);
    said_once(&err);
}

#[tokio::test]
async fn an_invalid_header_keeps_the_http_error() {
    let client = McpClient::new(
        McpServer::http("http://127.0.0.1:9/mcp")
            .name("headers")
            .header("bad header", "x"),
    );
    let err = client.connect().await.unwrap_err();
    assert!(matches!(err, McpError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("'bad header'"), "{err}");
    assert!(err.source().is_some(), "{err:?}");
    said_once(&err);
}

#[test]
fn listed_tools_are_the_mcp_dialect_rendering() {
    let tools = served::tools(Arc::default());
    let server = ToolServer::new(tools.clone(), ServeOptions::default()).unwrap();
    assert_eq!(server.listed_tools().len(), tools.len());
    for (listed, tool) in server.listed_tools().iter().zip(&tools) {
        assert_eq!(
            serde_json::to_value(listed).unwrap(),
            actuator_dialect::mcp(tool.info()).tool,
            "{}",
            tool.name()
        );
    }
}
