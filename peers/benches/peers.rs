//! W2 peers: one `add(1, 2)` call through Actuator's `execute_tools` (events on, as W2 in
//! `crates/exec/benches/execute.rs`), rig-agent's `ToolSet::execute` and rmcp's `ToolRouter`,
//! in one binary, each on a current-thread Tokio runtime entered with `block_on` per
//! iteration; and the same three awaited inside the entered runtime (`*_awaited`: each
//! call's future polled as an `.await` in a running task polls it; all three complete at
//! their first poll), which leaves the runtime's entry out of all three alike.
//!
//! What is outside the timed region is what the layer before the dispatch hands over: our
//! conversation (borrowed; `execute_tools` copies the call's arguments itself) and a fresh
//! event log per sample; rig's raw argument text as an owned `String` (its agent moves the
//! model's text in); rmcp's decoded `CallToolRequestParams` (its transport decodes the
//! request). Inside: everything each does per call, including rmcp's `RequestContext` and
//! `ToolCallContext`, and rig's `ToolContext`.
//!
//! The `*_events_off` rows run ours with no event sink (nothing recorded), as rmcp's router
//! records nothing; the `*_results_only` rows record each call's completed event only, as an
//! evaluation's log does (the rows without a suffix also record the event a call emits when
//! it starts, which a live view wants).
//!
//! `peers --behaviour` instead prints one `BEHAVIOUR {json}` line per framework and case
//! (valid, wrongly typed argument, unknown key) and exits.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use actuator_model::ChatMessage;
use actuator_peers::{VALID, behaviour, mcp, ours, rig, runtime};
use actuator_tool_core::ToolDef;
use divan::Bencher;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--behaviour") {
        let rt = runtime().expect("a current-thread runtime");
        for row in rt.block_on(behaviour::all()) {
            println!("BEHAVIOUR {}", row.to_json());
        }
        return;
    }
    divan::main();
}

/// Our tools and the conversation whose last message calls `add(1, 2)`.
fn ours_call() -> ([ToolDef; 1], Vec<ChatMessage>) {
    let arguments = serde_json::from_str(VALID).expect("valid JSON");
    (ours::tools(), ours::conversation(arguments))
}

/// Actuator: `execute_tools`, one `add` call, events on (the W2 row).
#[divan::bench]
fn actuator_execute_tools(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let (tools, messages) = ours_call();
    assert_eq!(rt.block_on(ours::outcome(VALID)).text, "3");
    bencher
        .with_inputs(ours::options_with_events)
        .bench_local_refs(|options| {
            rt.block_on(actuator_exec::execute_tools(&messages, &tools, options))
        });
}

/// Actuator: `execute_tools`, one `add` call, no event sink (validation, the call and the
/// tool message, nothing recorded).
#[divan::bench]
fn actuator_execute_tools_events_off(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let (tools, messages) = ours_call();
    let options = ours::options_without_events();
    assert_eq!(rt.block_on(ours::outcome(VALID)).text, "3");
    bencher.bench_local(|| rt.block_on(actuator_exec::execute_tools(&messages, &tools, &options)));
}

/// Actuator: `execute_tools`, one `add` call, into a log of completed calls only (as an
/// evaluation records them: the pending event declined).
#[divan::bench]
fn actuator_execute_tools_results_only(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let (tools, messages) = ours_call();
    assert_eq!(rt.block_on(ours::outcome(VALID)).text, "3");
    bencher
        .with_inputs(ours::options_with_results_only)
        .bench_local_refs(|options| {
            rt.block_on(actuator_exec::execute_tools(&messages, &tools, options))
        });
}

/// rig: `ToolSet::execute("add", text, &mut ToolContext)`.
#[divan::bench]
fn rig_toolset_execute(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let tools = rig::toolset();
    let check = rt.block_on(rig::call(&tools, VALID.to_owned()));
    assert!(check.is_success(), "{check:?}");
    assert_eq!(check.output().render(), "3");
    bencher
        .with_inputs(|| VALID.to_owned())
        .bench_local_values(|arguments| rt.block_on(rig::call(&tools, arguments)));
}

/// rmcp: `ToolRouter::call` on the router the server keeps.
#[divan::bench]
fn rmcp_tool_router_call(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let harness = rt.block_on(async { mcp::Harness::start() });
    let check = rt.block_on(mcp::outcome(&harness, VALID));
    assert_eq!(check.text, "3", "{check:?}");
    bencher
        .with_inputs(|| mcp::params(VALID).expect("a JSON object"))
        .bench_local_values(|params| rt.block_on(harness.call(params)));
}

/// rmcp: `ServerHandler::call_tool` as `#[tool_router(server_handler)]` generates it (the
/// router is built again per call).
#[divan::bench]
fn rmcp_call_tool_default_handler(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let harness = rt.block_on(async { mcp::Harness::start() });
    let check = rt
        .block_on(harness.call_tool(mcp::params(VALID).expect("a JSON object")))
        .expect("call_tool");
    assert!(matches!(check, rmcp::model::CallToolResponse::Complete(_)));
    bencher
        .with_inputs(|| mcp::params(VALID).expect("a JSON object"))
        .bench_local_values(|params| rt.block_on(harness.call_tool(params)));
}

/// Polls a future that completes without waiting, once, as an `.await` inside a running
/// task would.
fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => unreachable!("the call was expected to complete at its first poll"),
    }
}

/// Actuator, awaited inside the entered runtime.
#[divan::bench]
fn actuator_execute_tools_awaited(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let _entered = rt.enter();
    let (tools, messages) = ours_call();
    assert_eq!(poll_ready(ours::outcome(VALID)).text, "3");
    bencher
        .with_inputs(ours::options_with_events)
        .bench_local_refs(|options| {
            poll_ready(actuator_exec::execute_tools(&messages, &tools, options))
        });
}

/// Actuator without an event sink, awaited inside the entered runtime.
#[divan::bench]
fn actuator_execute_tools_events_off_awaited(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let _entered = rt.enter();
    let (tools, messages) = ours_call();
    let options = ours::options_without_events();
    assert_eq!(poll_ready(ours::outcome(VALID)).text, "3");
    bencher.bench_local(|| poll_ready(actuator_exec::execute_tools(&messages, &tools, &options)));
}

/// Actuator into a log of completed calls only, awaited inside the entered runtime.
#[divan::bench]
fn actuator_execute_tools_results_only_awaited(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let _entered = rt.enter();
    let (tools, messages) = ours_call();
    assert_eq!(poll_ready(ours::outcome(VALID)).text, "3");
    bencher
        .with_inputs(ours::options_with_results_only)
        .bench_local_refs(|options| {
            poll_ready(actuator_exec::execute_tools(&messages, &tools, options))
        });
}

/// rig, awaited inside the entered runtime.
#[divan::bench]
fn rig_toolset_execute_awaited(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let _entered = rt.enter();
    let tools = rig::toolset();
    let check = poll_ready(rig::call(&tools, VALID.to_owned()));
    assert!(check.is_success(), "{check:?}");
    bencher
        .with_inputs(|| VALID.to_owned())
        .bench_local_values(|arguments| poll_ready(rig::call(&tools, arguments)));
}

/// rmcp's `ToolRouter::call`, awaited inside the entered runtime.
#[divan::bench]
fn rmcp_tool_router_call_awaited(bencher: Bencher<'_, '_>) {
    let rt = runtime().expect("a current-thread runtime");
    let _entered = rt.enter();
    let harness = mcp::Harness::start();
    let check = poll_ready(mcp::outcome(&harness, VALID));
    assert_eq!(check.text, "3", "{check:?}");
    bencher
        .with_inputs(|| mcp::params(VALID).expect("a JSON object"))
        .bench_local_values(|params| poll_ready(harness.call(params)));
}
