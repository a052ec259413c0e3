//! Our server over streamable HTTP when its client goes away mid-call: the call is cancelled
//! (the tool's future dropped) once the grace period for resuming the stream has passed, or at
//! once when the client ends its session; a client that resumes in time gets its answer.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "common/served.rs"]
mod served;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_mcp::{HttpOptions, ServeOptions, ToolServer, serve_http};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";

/// A raw streamable-HTTP session: initialized, its id known.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn open(url: String) -> Session {
        let http = common::raw_http();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let response = http
            .post(&url)
            .header("Accept", ACCEPT)
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = response.bytes().await.unwrap();
        let session = Session { http, url, id };
        let initialized = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(initialized.status(), 202);
        session
    }

    async fn post(&self, message: &Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("Accept", ACCEPT)
            .header("Mcp-Session-Id", &self.id)
            .header("Mcp-Protocol-Version", "2025-06-18")
            .json(message)
            .send()
            .await
            .unwrap()
    }
}

async fn wait_for(flag: &AtomicBool, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while !flag.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    flag.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_drops_the_connection_mid_call_cancels_it() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let server =
        ToolServer::new(served::tools(cancelled.clone()), ServeOptions::default()).unwrap();
    let options = HttpOptions::default().disconnect_grace(Duration::from_millis(500));
    let http = serve_http(server, options).await.unwrap();
    let session = Session::open(http.url()).await;
    let call = session
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}}}))
        .await;
    assert_eq!(call.status(), 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!cancelled.load(Ordering::SeqCst));
    // The client goes away: the call's stream and every connection are dropped, no DELETE.
    drop(call);
    drop(session);
    let dropped = std::time::Instant::now();
    assert!(
        wait_for(&cancelled, Duration::from_secs(15)).await,
        "the call was not cancelled"
    );
    // Not before the grace period.
    assert!(
        dropped.elapsed() >= Duration::from_millis(400),
        "{:?}",
        dropped.elapsed()
    );
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_ends_its_session_mid_call_cancels_it() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let server =
        ToolServer::new(served::tools(cancelled.clone()), ServeOptions::default()).unwrap();
    // A grace period longer than the test: only the end of the session can cancel in time.
    let options = HttpOptions::default().disconnect_grace(Duration::from_secs(600));
    let http = serve_http(server, options).await.unwrap();
    let session = Session::open(http.url()).await;
    let call = session
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}}}))
        .await;
    assert_eq!(call.status(), 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let deleted = session
        .http
        .delete(&session.url)
        .header("Mcp-Session-Id", &session.id)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    // At once, not after rmcp's 5 s for in-flight requests of a closed session.
    assert!(
        wait_for(&cancelled, Duration::from_secs(2)).await,
        "the call was not cancelled"
    );
    drop(call);
    http.shutdown().await;
}

/// `nap`: sleeps 1.5 s, then answers `rested`; `cancelled` is set if dropped before that.
fn nap_tool(cancelled: Arc<AtomicBool>) -> ToolDef {
    struct Guard(Arc<AtomicBool>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    ToolDef::builder("nap")
        .description("Sleeps a little.")
        .handler(move |_args: ToolArgs, _ctx: ToolContext| {
            let guard = Guard(Arc::clone(&cancelled));
            async move {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                std::mem::forget(guard);
                Ok::<_, ToolFailure>("rested")
            }
        })
        .build()
        .unwrap()
}

/// The `id:` of the first SSE event in `text`.
fn first_event_id(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_resumes_the_stream_in_time_gets_the_answer() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let server = ToolServer::new([nap_tool(cancelled.clone())], ServeOptions::default()).unwrap();
    // Shorter than the nap: only the resume keeps the call alive.
    let options = HttpOptions::default().disconnect_grace(Duration::from_millis(500));
    let http = serve_http(server, options).await.unwrap();
    let session = Session::open(http.url()).await;
    let mut call = session
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "nap", "arguments": {}}}))
        .await;
    assert_eq!(call.status(), 200);
    // The priming event names the stream; then the connection drops.
    let mut seen = String::new();
    let event_id = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(5), call.chunk())
            .await
            .unwrap()
            .unwrap()
            .expect("an event before the stream ends");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(id) = first_event_id(&seen) {
            break id;
        }
    };
    drop(call);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resumed = session
        .http
        .get(&session.url)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session.id)
        .header("Mcp-Protocol-Version", "2025-06-18")
        .header("Last-Event-ID", &event_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let body = tokio::time::timeout(Duration::from_secs(10), resumed.text())
        .await
        .unwrap()
        .unwrap();
    assert!(body.contains("rested"), "{body}");
    // Well past the grace period of the drop: the resumed call was never cancelled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!cancelled.load(Ordering::SeqCst));
    http.shutdown().await;
}
