//! W8, Actuator's two sides of one `tools/call` round trip over stdio (run by `cargo xtask
//! bench --only w8`, beside the Python SDK in `bench/mcp/w8.py`):
//!
//! - `w8 serve`: our server (`ToolServer` over stdin/stdout, the `mcp_server` example's
//!   `add` tool, a current-thread runtime as there) for the Python SDK's client to time,
//!   with a resource (`bench://note`, for a `resources/read` round trip) and a tool `ask`
//!   that asks the client's model (`sampling/createMessage`: server → client → back);
//! - `w8 client [--runs N] COMMAND [ARGS...]`: our client (`McpClient`, each call a
//!   `ToolDef::call`) timing N calls of server-everything's `echo` on the server that
//!   `COMMAND` starts, after 20 warm-up calls; prints a `RESULT {json}` line (median, p10,
//!   p90, microseconds).

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

use std::time::Instant;

use actuator_mcp::{
    McpClient, McpServer, Resource, ServeOptions, ToolServer, mcp_tools, serve_stdio,
};
use actuator_tool_core::{
    SamplingMessage, SamplingRequest, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure,
};
use actuator_tool_macros::tool;
use serde_json::json;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

const USAGE: &str = "usage: w8 serve | w8 client [--runs N] COMMAND [ARGS...]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; it is not an argument of ours.
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--bench")
        .collect();
    match args.as_slice() {
        ["serve"] => serve(),
        ["client", rest @ ..] => client(rest),
        _ => panic!("{USAGE}"),
    }
}

fn serve() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ask = ToolDef::builder("ask")
            .description("Asks the client's model.")
            .handler(|_args: ToolArgs, ctx: ToolContext| async move {
                let answer = ctx
                    .sample(SamplingRequest::new([SamplingMessage::user("Say hi.")], 10))
                    .await
                    .map_err(|e| ToolFailure::from(ToolError::new(e.to_string())))?;
                Ok::<_, ToolFailure>(answer.text())
            })
            .build()
            .unwrap();
        let note = Resource::text("bench://note", "note", "text/plain", "A short note.");
        let server = ToolServer::new(
            [add_tool(), ask],
            ServeOptions::default().name("w8-actuator"),
        )
        .and_then(|s| s.with_resources([note]))
        .unwrap();
        serve_stdio(server).await.unwrap();
    });
}

fn client(args: &[&str]) {
    let (runs, command) = match args {
        ["--runs", n, command @ ..] => (n.parse::<usize>().expect(USAGE), command),
        command => (1000, command),
    };
    let [program, rest @ ..] = command else {
        panic!("{USAGE}");
    };
    // Multi-thread, as an agent's runtime would be (the connection's tasks run beside the
    // caller's).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = McpClient::new(McpServer::stdio(*program, rest.to_vec()).name("w8"));
        let tools = mcp_tools(&client).list().await.unwrap();
        let echo = tools
            .iter()
            .find(|t| t.name() == "echo")
            .expect("the server lists `echo`");
        let args = json!({"message": "hi"});
        let call = || echo.call(args.clone(), ToolContext::new("c", "echo"));
        let first = call().await.unwrap();
        assert_eq!(first.text(), "Echo: hi");
        for _ in 0..19 {
            call().await.unwrap();
        }
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            call().await.unwrap();
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
        client.close().await;
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        let row = json!({
            "workload": "W8", "case": "actuator client -> server-everything echo",
            "median": at(0.5), "p10": at(0.1), "p90": at(0.9), "runs": runs, "unit": "us",
        });
        println!("RESULT {row}");
    });
}
