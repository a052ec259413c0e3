//! W8, our client's side: the median wall time of one `tools/call` round trip from our client
//! (`McpClient`, a `ToolDef` call) to an MCP server started as a command, e.g.
//! server-everything's `echo`.
//!
//! `cargo run --release -p actuator-mcp --example w8_client -- N TOOL ARGS_JSON COMMAND [ARGS...]`
//! prints `median_us=… p10_us=… p90_us=…` (after 20 warm-up calls).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::print_stderr)]

use std::time::Instant;

use actuator_mcp::{McpClient, McpServer, mcp_tools};
use actuator_tool_core::ToolContext;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut argv = std::env::args().skip(1);
    let usage = "usage: w8_client N TOOL ARGS_JSON COMMAND [ARGS...]";
    let n: usize = argv.next().expect(usage).parse().expect(usage);
    let tool = argv.next().expect(usage);
    let args: serde_json::Value = serde_json::from_str(&argv.next().expect(usage)).expect(usage);
    let command = argv.next().expect(usage);
    let rest: Vec<String> = argv.collect();
    let client = McpClient::new(McpServer::stdio(command, rest).name("bench"));
    let tools = mcp_tools(&client).list().await.unwrap();
    let def = tools
        .iter()
        .find(|t| t.name() == tool)
        .expect("the tool is listed");
    let call = || def.call(args.clone(), ToolContext::new("c", tool.as_str()));
    for _ in 0..20 {
        call().await.unwrap();
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        call().await.unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    println!(
        "median_us={:.1} p10_us={:.1} p90_us={:.1}",
        at(0.5),
        at(0.1),
        at(0.9)
    );
    client.close().await;
}
