//! Our server on its own terms: our client against it (names, schemas and error texts
//! preserved), raw JSON-RPC (malformed input, unknown methods and tools, panics), HTTP
//! protections (bearer token, Origin, body size), and a client that disconnects mid-call.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/served.rs"]
mod served;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_mcp::{
    HttpOptions, McpClient, McpServer, Resource, ServeOptions, ToolServer, mcp_tools, serve_http,
};
use actuator_tool_core::{
    LogEntry, LogLevel, ToolArgs, ToolContext, ToolDef, ToolErrorKind, ToolFailure,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server(cancelled: Arc<AtomicBool>) -> ToolServer {
    ToolServer::new(
        served::tools(cancelled),
        ServeOptions::default().name("served"),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_our_server_round_trip() {
    let originals = served::tools(Arc::default());
    let http = serve_http(
        server(Arc::default()),
        HttpOptions::default().bearer_token("t0k"),
    )
    .await
    .unwrap();
    let client = McpClient::new(McpServer::http(http.url()).name("ours").bearer_token("t0k"));
    let tools = mcp_tools(&client).list().await.unwrap();
    // Names, descriptions and schemas survive the trip.
    assert_eq!(tools.len(), originals.len());
    for (got, original) in tools.iter().zip(&originals) {
        assert_eq!(got.name(), original.name());
        assert_eq!(got.description(), original.description());
        assert_eq!(got.parameters(), original.parameters());
    }
    let add = common::exec_one(&tools, "add", json!({"x": 3, "y": 4})).await;
    assert_eq!(add.content.text(), "7");
    // The server's validation error arrives with the executor's exact text (sent past our
    // client's own validation with ToolDef::call).
    let expected = common::exec_one(&originals, "add", json!({"x": "seven", "y": 4}))
        .await
        .error
        .unwrap()
        .message;
    let add_def = tools.iter().find(|t| t.name() == "add").unwrap();
    let err = add_def
        .call(json!({"x": "seven", "y": 4}), ToolContext::new("c", "add"))
        .await
        .unwrap_err();
    match err {
        actuator_tool_core::ToolFailure::Recoverable(e) => assert_eq!(e.message(), expected),
        other => panic!("expected a recoverable error, got {other:?}"),
    }
    // A panicking tool is a JSON-RPC error for that call; the server goes on.
    let boom = common::exec_one(&tools, "explode", json!({})).await;
    let error = boom.error.unwrap();
    assert_eq!(error.kind, ToolErrorKind::Unknown);
    assert!(
        error.message.contains("panicked: boom"),
        "{}",
        error.message
    );
    let again = common::exec_one(&tools, "add", json!({"x": 1, "y": 1})).await;
    assert_eq!(again.content.text(), "2");
    client.close().await;

    // Headers reach the server: the token as a plain header works too, a wrong one is a
    // clear connection error.
    let by_header =
        McpClient::new(McpServer::http(http.url()).header("Authorization", "Bearer t0k"));
    assert_eq!(
        mcp_tools(&by_header).list().await.unwrap().len(),
        originals.len()
    );
    by_header.close().await;
    let wrong = McpClient::new(
        McpServer::http(http.url())
            .name("ours")
            .bearer_token("nope"),
    );
    let err = mcp_tools(&wrong).list().await.unwrap_err();
    assert!(err.to_string().contains("MCP server 'ours'"), "{err}");
    http.shutdown().await;
}

/// A raw JSON-RPC session over an in-memory pipe.
struct Raw {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Raw {
    async fn start(server: ToolServer) -> (Raw, tokio::task::JoinHandle<()>) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (their_read, their_write) = tokio::io::split(theirs);
        let task = tokio::spawn(async move {
            let _ = server.serve_io(their_read, their_write).await;
        });
        let (read, write) = tokio::io::split(ours);
        let mut raw = Raw {
            write,
            lines: BufReader::new(read).lines(),
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
        let init = raw.response(0).await;
        assert_eq!(init["result"]["serverInfo"]["name"], "served");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (raw, task)
    }

    async fn send_line(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// The next message the server writes (bounded wait).
    async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("the server closed the pipe");
        serde_json::from_str(&line).unwrap()
    }

    /// The messages before the answer with this id, and the answer (bounded wait).
    async fn until(&mut self, id: i64) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let message = self.next_message().await;
            if message["id"] == id {
                return (before, message);
            }
            before.push(message);
        }
    }

    /// The next message with this id (bounded wait).
    async fn response(&mut self, id: i64) -> Value {
        self.until(id).await.1
    }

    /// The next notification with this method (bounded wait).
    async fn notification(&mut self, method: &str) -> Value {
        loop {
            let message = self.next_message().await;
            if message["method"] == method && message.get("id").is_none() {
                return message;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_never_crash_the_server() {
    let (mut raw, _task) = Raw::start(server(Arc::default())).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "no/such_method"}))
        .await;
    assert_eq!(raw.response(1).await["error"]["code"], -32601);

    raw.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "nope", "arguments": {}}}))
        .await;
    let unknown = raw.response(2).await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(unknown["error"]["message"], "Tool nope not found");

    raw.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "explode", "arguments": {}}}))
        .await;
    let boom = raw.response(3).await;
    assert_eq!(boom["error"]["code"], -32603);
    assert!(
        boom["error"]["message"]
            .as_str()
            .unwrap()
            .contains("panicked: boom")
    );

    raw.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": "seven", "y": 4}}}))
        .await;
    let invalid = raw.response(4).await;
    assert_eq!(invalid["result"]["isError"], true);

    // Malformed input: the line is not JSON-RPC. The server answers or drops it, and lives.
    raw.send_line("{this is not json").await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 2, "y": 2}}}))
        .await;
    let ok = raw.response(5).await;
    assert_eq!(ok["result"]["content"][0]["text"], "4", "{ok}");
}

/// A client that floods requests the server answers itself (invalid params) and never reads
/// the answers is no longer read once a few answers wait: the server's memory stays bounded.
/// When the client reads again, every request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_flooding_bad_requests_without_reading_is_paused_not_buffered() {
    const FLOOD: usize = 20_000;
    let (ours, theirs) = tokio::io::duplex(4096);
    let (their_read, their_write) = tokio::io::split(theirs);
    let serving = tokio::spawn(server(Arc::default()).serve_io(their_read, their_write));
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "0"}}});
    write
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    assert!(
        lines
            .next_line()
            .await
            .unwrap()
            .unwrap()
            .contains("serverInfo")
    );
    let mut flood = String::new();
    for id in 1..=FLOOD {
        flood.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":[]}}\n"
        ));
    }
    let writing = tokio::spawn(async move {
        write.write_all(flood.as_bytes()).await.unwrap();
        write
    });
    // Nobody reads the answers: the server stops reading long before the flood is in.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !writing.is_finished(),
        "the server read the whole flood with nobody reading its answers"
    );
    // Reading again, every request gets its answer.
    let mut answered = 0;
    let drain = async {
        while answered < FLOOD {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server answers");
            let answer: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            answered += 1;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), drain)
        .await
        .expect("every request is answered once the client reads");
    let _write = writing.await.unwrap();
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_of_the_wrong_shape_are_invalid_params_not_an_unknown_method() {
    let (mut raw, _task) = Raw::start(server(Arc::default())).await;
    // A known method whose params do not fit it: -32602, naming the method and serde's reason.
    let wrong = [
        (10, "tools/call", json!({"name": 5})),
        (11, "resources/read", json!([])),
        (12, "logging/setLevel", json!({"level": 3})),
        (13, "prompts/get", json!("greeting")),
        (14, "tools/list", json!(7)),
    ];
    for (id, method, params) in wrong {
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = raw.response(id).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        let prefix = format!("invalid params for {method}: ");
        assert!(
            message.starts_with(&prefix) && message.len() > prefix.len(),
            "{method}: {message}"
        );
    }
    // A method that does not exist is still -32601, with or without params.
    raw.send(&json!({"jsonrpc": "2.0", "id": 15, "method": "no/such_method", "params": {"a": 1}}))
        .await;
    assert_eq!(raw.response(15).await["error"]["code"], -32601);
    // And the server goes on.
    raw.send(&json!({"jsonrpc": "2.0", "id": 16, "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 2, "y": 3}}}))
        .await;
    assert_eq!(raw.response(16).await["result"]["content"][0]["text"], "5");
}

/// `note`: logs one line at info level.
fn note_tool() -> ToolDef {
    ToolDef::builder("note")
        .description("Logs one line at info level.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            ctx.log(LogEntry::new(LogLevel::Info, "noted"));
            Ok::<_, ToolFailure>("noted")
        })
        .build()
        .unwrap()
}

/// Whether any of `messages` is a notification with this method.
fn has_notification(messages: &[Value], method: &str) -> bool {
    messages.iter().any(|m| m["method"] == method)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_served_from_clones_keep_their_own_subscriptions() {
    let server = ToolServer::new([note_tool()], ServeOptions::default().name("served"))
        .unwrap()
        .with_resources([
            Resource::text("test://a", "a", "text/plain", "A"),
            Resource::text("test://b", "b", "text/plain", "B"),
        ])
        .unwrap();
    // Two connections, each served by a clone of one server (as a stdio server that accepts
    // several pipes would).
    let (mut a, _a_task) = Raw::start(server.clone()).await;
    let (mut b, _b_task) = Raw::start(server.clone()).await;
    a.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "test://a"}}),
    )
    .await;
    assert!(a.response(1).await["result"].is_object());
    b.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "test://b"}}),
    )
    .await;
    assert!(b.response(1).await["result"].is_object());

    // A change to A's resource reaches A, and only A.
    assert_eq!(server.resource_updated("test://a").await, 1);
    let updated = a.notification("notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "test://a");
    b.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let (before, _) = b.until(2).await;
    assert!(
        !has_notification(&before, "notifications/resources/updated"),
        "B heard of A's resource: {before:?}"
    );
    // Unsubscribing on B leaves A's subscription alone.
    b.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe",
        "params": {"uri": "test://a"}}),
    )
    .await;
    assert!(b.response(3).await["result"].is_object());
    assert_eq!(server.resource_updated("test://a").await, 1);
    let updated = a.notification("notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "test://a");

    // A asks for errors only; B keeps the default (info) and still hears the tool's log.
    a.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel",
        "params": {"level": "error"}}),
    )
    .await;
    assert!(a.response(4).await["result"].is_object());
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "note", "arguments": {}}});
    a.send(&call).await;
    let (before, answer) = a.until(5).await;
    assert_eq!(answer["result"]["content"][0]["text"], "noted");
    assert!(
        !has_notification(&before, "notifications/message"),
        "A asked for errors only: {before:?}"
    );
    b.send(&call).await;
    let (before, answer) = b.until(5).await;
    assert_eq!(answer["result"]["content"][0]["text"], "noted");
    assert!(
        has_notification(&before, "notifications/message"),
        "B's level is its own (info): {before:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_notification_cancels_the_call() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let (mut raw, _task) = Raw::start(server(cancelled.clone())).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!cancelled.load(Ordering::SeqCst));
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "changed my mind"}}),
    )
    .await;
    wait_for(&cancelled).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_mid_call_cancels_it() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let (mut raw, task) = Raw::start(server(cancelled.clone())).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(raw);
    wait_for(&cancelled).await;
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the server ended")
        .unwrap();
}

async fn wait_for(flag: &AtomicBool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(flag.load(Ordering::SeqCst), "the call was not cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_checks_the_token_the_origin_and_the_body_size() {
    let options = HttpOptions::default()
        .bearer_token("t0k")
        .max_body_bytes(64 * 1024);
    let http = serve_http(server(Arc::default()), options).await.unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let post = |token: Option<&str>, origin: Option<&str>, body: String| {
        let client = common::raw_http();
        let mut request = client
            .post(http.url())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body);
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        if let Some(o) = origin {
            request = request.header("Origin", o);
        }
        request.send()
    };
    let none = post(None, None, init.to_string()).await.unwrap();
    assert_eq!(none.status(), 401);
    assert_eq!(none.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        post(Some("wrong"), None, init.to_string())
            .await
            .unwrap()
            .status(),
        401
    );
    let evil = post(Some("t0k"), Some("http://evil.example"), init.to_string())
        .await
        .unwrap();
    assert_eq!(evil.status(), 403);
    let local = post(Some("t0k"), Some("http://localhost:3000"), init.to_string())
        .await
        .unwrap();
    assert_eq!(local.status(), 200);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(100 * 1024)
    );
    assert_eq!(post(Some("t0k"), None, big).await.unwrap().status(), 413);
    let garbage = post(Some("t0k"), None, "{not json".into()).await.unwrap();
    assert!(garbage.status().is_client_error(), "{}", garbage.status());
    // Still serving.
    assert_eq!(
        post(Some("t0k"), None, init.to_string())
            .await
            .unwrap()
            .status(),
        200
    );
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_timeout_applies_on_the_server() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let slow = served::slow_tool(cancelled.clone()).with_timeout(Some(Duration::from_millis(200)));
    let server = ToolServer::new([slow], ServeOptions::default().name("served")).unwrap();
    let (mut raw, _task) = Raw::start(server).await;
    raw.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}))
        .await;
    let timed_out = raw.response(9).await;
    assert_eq!(timed_out["result"]["isError"], true);
    assert_eq!(
        timed_out["result"]["content"][0]["text"],
        "Command timed out before completing."
    );
    assert!(cancelled.load(Ordering::SeqCst));
}

#[test]
fn listed_schemas_snapshot() {
    let server = server(Arc::default());
    let listed = serde_json::to_value(server.listed_tools()).unwrap();
    insta::assert_json_snapshot!("served_tools", listed);
}

#[test]
fn duplicate_names_are_refused() {
    let err = ToolServer::new(
        [
            served::slow_tool(Arc::default()),
            served::slow_tool(Arc::default()),
        ],
        ServeOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("slow"), "{err}");
}
