//! A burst of connections on our streamable-HTTP server: 1,000 clients connect at once, each
//! on its own TCP connection, and every `tools/call` is answered. With Tokio's default listen
//! backlog of 128, a burst like this overflowed the accept queue and calls got resets.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actuator_mcp::{HttpOptions, ServeOptions, ToolServer, serve_http};
use actuator_tool_core::{ParamsBuilder, ToolArgs, ToolContext, ToolDef, ToolFailure};
use serde_json::{Value, json};
use tokio::sync::Barrier;

const CONNECTIONS: usize = 1_000;
const ACCEPT: &str = "application/json, text/event-stream";

/// Makes sure this process may open a socket per connection on both sides (and some to
/// spare): raises the soft open-file limit when it is lower (up to the hard limit).
fn enough_files(wanted: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|soft| soft < wanted) {
        let raised = limit.maximum.map_or(wanted, |hard| hard.min(wanted));
        let mut new = limit;
        new.current = Some(raised);
        setrlimit(Resource::Nofile, new).unwrap();
    }
}

/// `gather`: returns its `n` once all the burst's calls are running at the same time (so
/// every connection is open at once), or fails after a minute.
fn gather_tool(barrier: Arc<Barrier>) -> ToolDef {
    ToolDef::builder("gather")
        .description("Waits for the whole burst.")
        .parameters(
            ParamsBuilder::new()
                .param::<i64>("n", Some("The call's number."))
                .build(),
        )
        .handler(move |mut args: ToolArgs, _ctx: ToolContext| {
            let barrier = Arc::clone(&barrier);
            async move {
                let n: i64 = args.required("n")?;
                tokio::time::timeout(Duration::from_secs(60), barrier.wait())
                    .await
                    .map_err(|_| {
                        ToolFailure::from(actuator_tool_core::ToolError::new(
                            "the burst never gathered",
                        ))
                    })?;
                Ok::<_, ToolFailure>(n.to_string())
            }
        })
        .build()
        .unwrap()
}

/// The kernel's count of connections dropped because a listen queue was full
/// (`TcpExt: ListenOverflows` in `/proc/net/netstat`, for this network namespace).
fn listen_overflows() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut rows = text.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (rows.next()?, rows.next()?);
    let at = names
        .split_whitespace()
        .position(|n| n == "ListenOverflows")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// The listen backlog the kernel holds for the socket listening on `port` (the `Send-Q` that
/// `ss` shows for a listening socket), when `ss` is there to ask.
fn listen_backlog(port: u16) -> Option<u64> {
    let out = std::process::Command::new("ss")
        .args(["-Hltn", &format!("sport = :{port}")])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(2)?.parse().ok()
}

/// The text of the `data:` event answering request `id` in a response body.
fn answer(body: &str, id: usize) -> Option<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m["id"] == json!(id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_connections_are_all_answered() {
    enough_files(4 * CONNECTIONS as u64 + 1_024);
    let barrier = Arc::new(Barrier::new(CONNECTIONS));
    let server = ToolServer::new([gather_tool(barrier)], ServeOptions::default()).unwrap();
    let http = serve_http(server, HttpOptions::default()).await.unwrap();
    let url = http.url();
    let client = common::raw_http();

    // One session, initialized.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "burst", "version": "0"}}});
    let response = client
        .post(&url)
        .header("Accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = response.bytes().await.unwrap();
    let initialized = client
        .post(&url)
        .header("Accept", ACCEPT)
        .header("Mcp-Session-Id", &session)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert_eq!(initialized.status(), 202);

    // The burst: every call on its own connection (none can finish before all have arrived,
    // so none is reused), all started at once.
    let overflows_before = listen_overflows();
    let started = Instant::now();
    let calls = (1..=CONNECTIONS).map(|n| {
        let client = client.clone();
        let (url, session) = (url.clone(), session.clone());
        tokio::spawn(async move {
            let call = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "gather", "arguments": {"n": n}}});
            let response = client
                .post(&url)
                .header("Accept", ACCEPT)
                .header("Mcp-Session-Id", &session)
                .header("Mcp-Protocol-Version", "2025-06-18")
                .json(&call)
                .send()
                .await
                .map_err(|e| format!("call {n}: {e:?}"))?;
            let status = response.status();
            let body = response
                .text()
                .await
                .map_err(|e| format!("call {n}: {e:?}"))?;
            let message =
                answer(&body, n).ok_or(format!("call {n}: {status}, no answer in {body}"))?;
            let text = &message["result"]["content"][0]["text"];
            if message["result"]["isError"] == json!(true) || *text != json!(n.to_string()) {
                return Err(format!("call {n}: wrong answer {message}"));
            }
            Ok(())
        })
    });
    let calls: Vec<_> = calls.collect();
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        futures_util::future::join_all(calls),
    )
    .await
    .expect("the burst is answered within two minutes");
    let failures: Vec<String> = outcome
        .into_iter()
        .filter_map(|joined| joined.unwrap().err())
        .collect();
    let took = started.elapsed();
    let overflows = listen_overflows()
        .zip(overflows_before)
        .map(|(after, before)| after.saturating_sub(before));
    let backlog = listen_backlog(http.local_addr().port());
    tokio::time::timeout(Duration::from_secs(30), http.shutdown())
        .await
        .expect("the server stops");
    assert!(
        failures.is_empty(),
        "{} of {CONNECTIONS} calls failed (in {took:?}); first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    eprintln!(
        "{CONNECTIONS} concurrent calls answered in {took:?}; listen backlog {backlog:?}, \
         listen-queue overflows during the burst (whole namespace) {overflows:?}"
    );
    // The kernel caps the backlog at net.core.somaxconn.
    let somaxconn: u64 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096);
    match backlog {
        Some(backlog) => assert!(
            backlog >= somaxconn.min(CONNECTIONS as u64),
            "the listen backlog is {backlog}: a burst of {CONNECTIONS} connections overflows it"
        ),
        None => eprintln!("not checked: `ss` could not report the listen backlog"),
    }
}
