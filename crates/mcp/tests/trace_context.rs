//! The run's W3C trace context travels with each MCP call (`_meta.traceparent` and
//! `tracestate`, SEP-414) and reaches the served tool's `ToolContext`, so a traced run links
//! to the server's work; an invalid one sent to our server is ignored, not an error.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_mcp::{
    HttpOptions, McpClient, McpServer, ServeOptions, ToolServer, mcp_tools, serve_http,
};
use actuator_tool_core::{Content, ToolContext, ToolDef, TraceContext};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A server whose one tool answers with the trace context its call arrived with.
fn server() -> ToolServer {
    let tool = ToolDef::builder("which_trace")
        .description("Says which trace the call belongs to.")
        .handler(|_args, ctx: ToolContext| async move {
            let seen = match ctx.extensions.get::<TraceContext>() {
                Some(trace) => format!(
                    "{} {}",
                    trace.traceparent(),
                    trace.tracestate().unwrap_or("-")
                ),
                None => "none".to_owned(),
            };
            Ok(vec![Content::text(seen)])
        })
        .build()
        .unwrap();
    ToolServer::new([tool], ServeOptions::default().name("traced")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calls_trace_context_reaches_the_served_tool() {
    let http = serve_http(server(), HttpOptions::default()).await.unwrap();
    let client = McpClient::new(McpServer::http(http.url()).name("traced"));
    let tools = mcp_tools(&client).list().await.unwrap();
    let which = tools.iter().find(|t| t.name() == "which_trace").unwrap();

    let trace = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .unwrap()
        .with_tracestate("congo=t61rcWkgMzE");
    let mut ctx = ToolContext::new("call_1", "which_trace");
    ctx.extensions.insert(trace.clone());
    let output = which.call(json!({}), ctx).await.unwrap();
    assert_eq!(
        output.text(),
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 congo=t61rcWkgMzE"
    );

    // Without one, nothing is sent and the tool sees none.
    let output = which
        .call(json!({}), ToolContext::new("call_2", "which_trace"))
        .await
        .unwrap();
    assert_eq!(output.text(), "none");
    client.close().await;
    http.shutdown().await;
}

#[tokio::test]
async fn an_invalid_traceparent_sent_to_our_server_is_ignored() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (their_read, their_write) = tokio::io::split(theirs);
    let serving = tokio::spawn(server().serve_io(their_read, their_write));
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |message: Value| {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    for (id, traceparent) in [
        (
            1,
            json!("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
        ),
        (2, json!("not a traceparent at all")),
        (3, json!(42)),
        (4, json!("x".repeat(100_000))),
    ] {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "which_trace", "arguments": {},
            "_meta": {"traceparent": traceparent, "tracestate": "a=b"}}}),
        )
        .await;
    }
    let mut answered = 0;
    let wait = async {
        while answered < 4 {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server answers");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"].as_i64().is_some_and(|id| id >= 1) {
                assert_eq!(message["result"]["content"][0]["text"], "none", "{message}");
                answered += 1;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), wait)
        .await
        .expect("every call is answered");
    serving.abort();
}
