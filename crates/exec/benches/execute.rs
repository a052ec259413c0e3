//! W2 and W4 of the Python reference (`w2_single_call.py`, `w4_truncation.py`): one tool call
//! through the real executor, its parts, and a large result cut to 16 KiB.
//!
//! W2: `execute_tools` on a conversation whose last assistant message holds one call of `add`
//! or of the 5-parameter `search`, with events on (a fresh [`EventLog`] per sample, built
//! outside the timed region, as Inspect installs a fresh transcript), and the invalid-arguments
//! path. Then the parts, each on its own: schema validation (`ToolDef::validate`),
//! deserialization (`ToolArgs`), `ToolDef::call` (deserialization, the handler and the output
//! conversion), building the tool message and the tool event, and a hand-written floor
//! (`serde_json::from_str` into a struct and a direct call of the function).
//!
//! W4: `execute_tools` with a tool that returns 1 MiB of ASCII or of non-ASCII text (cut to the
//! default 16 KiB), a 1 KiB result as the reference, and the parts: `truncate_tool_output` alone
//! on the same two texts, and the copy of the 1 MiB `String` the tool body makes.
//!
//! The executor runs on a current-thread Tokio runtime, entered once per iteration with
//! `block_on`: one thread, like the Python event loop. `add_1_call_awaited` instead awaits
//! the call inside the entered runtime, as the Python script awaits inside its running loop,
//! so that the runtime's own entry is not counted.

#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::SystemTime;

use actuator_events::{EventLog, ToolEvent, unix_seconds};
use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, MessageContent, ToolCall};
use actuator_tool_core::{
    DEFAULT_MAX_TOOL_OUTPUT, ToolArgs, ToolContext, ToolDef, ToolErrorKind, truncate_tool_output,
};
use divan::{Bencher, black_box};
use fixture::{
    BIG_ASCII, BIG_UTF8, Mode, add, add_tool, big_ascii_tool, big_utf8_tool, search_tool,
    small_1k_tool,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

fn main() {
    divan::main();
}

/// The runtime the executor benchmarks run on.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// `[system, user, assistant(text, calls)]`, as the Python script builds it.
fn conversation(text: &str, calls: Vec<ToolCall>) -> Vec<ChatMessage> {
    let mut assistant = ChatMessageAssistant::new(text);
    assistant.tool_calls = Some(calls);
    vec![
        ChatMessage::system("You are a helpful assistant."),
        ChatMessage::user("What is 1 + 2?"),
        ChatMessage::Assistant(Box::new(assistant)),
    ]
}

/// Options with a fresh recording event sink.
fn options_with_events() -> ExecuteOptions {
    ExecuteOptions::default().events(EventLog::new())
}

/// The `search` arguments of the Python script.
fn search_args() -> Value {
    json!({"query": "rust async", "limit": 10, "threshold": 0.5,
           "tags": ["lang", "perf", "tokio"], "mode": "exact"})
}

/// Runs `execute_tools` once and returns the text of its single tool message.
fn run_one(rt: &Runtime, messages: &[ChatMessage], tools: &[ToolDef]) -> ChatMessage {
    let log = EventLog::new();
    let options = ExecuteOptions::default().events(log.clone());
    let mut result = rt
        .block_on(execute_tools(messages, tools, &options))
        .expect("execute_tools");
    assert_eq!(result.messages.len(), 1);
    assert_eq!(log.tool_events().len(), 1, "one tool event is recorded");
    result.messages.remove(0)
}

/// Polls a future that completes without waiting, once.
fn poll_ready<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut cx) {
        Poll::Ready(out) => out,
        Poll::Pending => unreachable!("the future was expected to complete at once"),
    }
}

/// W2: one call through `execute_tools`, events recorded.
mod w2_execute_tools {
    use super::*;

    /// The `add` call's tool and conversation, run once through `execute_tools` and checked.
    fn checked_add_call(rt: &Runtime) -> ([ToolDef; 1], Vec<ChatMessage>) {
        let tools = [add_tool()];
        let messages = conversation(
            "Let me add those.",
            vec![ToolCall::new("call_1", "add", json!({"x": 1, "y": 2}))],
        );
        assert_eq!(run_one(rt, &messages, &tools).text(), "3");
        (tools, messages)
    }

    /// `add(x=1, y=2)` (Inspect: 492 µs).
    #[divan::bench]
    fn add_1_call(bencher: Bencher<'_, '_>) {
        let rt = runtime();
        let (tools, messages) = checked_add_call(&rt);
        bencher
            .with_inputs(options_with_events)
            .bench_local_refs(|options| rt.block_on(execute_tools(&messages, &tools, options)));
    }

    /// The same call awaited inside the running runtime, as the Python script awaits it
    /// inside its running event loop: without the entry into the runtime that `block_on`
    /// costs per iteration above. The runtime is entered once, and each call's future is
    /// polled as an `.await` in a running task polls it (it completes at its first poll).
    #[divan::bench]
    fn add_1_call_awaited(bencher: Bencher<'_, '_>) {
        let rt = runtime();
        let (tools, messages) = checked_add_call(&rt);
        let _entered = rt.enter();
        bencher
            .with_inputs(options_with_events)
            .bench_local_refs(|options| poll_ready(execute_tools(&messages, &tools, options)));
    }

    /// `search` with all five parameters (Inspect: 662 µs).
    #[divan::bench]
    fn search_1_call(bencher: Bencher<'_, '_>) {
        let rt = runtime();
        let tools = [search_tool()];
        let messages = conversation(
            "Let me search.",
            vec![ToolCall::new("call_2", "search", search_args())],
        );
        let message = run_one(&rt, &messages, &tools);
        assert_eq!(message.text(), "rust async:10:0.5:3:exact");
        bencher
            .with_inputs(options_with_events)
            .bench_local_refs(|options| rt.block_on(execute_tools(&messages, &tools, options)));
    }

    /// `add(x="one", y=2)`: a `parsing` error message (Inspect: 443 µs).
    #[divan::bench]
    fn add_invalid_args(bencher: Bencher<'_, '_>) {
        let rt = runtime();
        let tools = [add_tool()];
        let messages = conversation(
            "Let me add those.",
            vec![ToolCall::new("call_3", "add", json!({"x": "one", "y": 2}))],
        );
        let message = run_one(&rt, &messages, &tools);
        let error = message.as_tool().and_then(|t| t.error.clone());
        assert_eq!(error.map(|e| e.kind), Some(ToolErrorKind::Parsing));
        bencher
            .with_inputs(options_with_events)
            .bench_local_refs(|options| rt.block_on(execute_tools(&messages, &tools, options)));
    }
}

/// The arguments of `add`, for the hand-written floor.
#[derive(Deserialize)]
struct AddArgs {
    x: i64,
    y: i64,
}

/// W2: the parts of one call, each alone.
mod w2_parts {
    use super::*;

    /// `ToolDef::validate` for `add` (Inspect: `validate_tool_input`, 21 µs).
    #[divan::bench]
    fn validate_add(bencher: Bencher<'_, '_>) {
        let tool = add_tool();
        let args = json!({"x": 1, "y": 2});
        tool.validate(&args).expect("valid");
        bencher.bench_local(|| black_box(&tool).validate(black_box(&args)));
    }

    /// `ToolDef::validate` for `search`, five parameters (Inspect: 62 µs).
    #[divan::bench]
    fn validate_search(bencher: Bencher<'_, '_>) {
        let tool = search_tool();
        let args = search_args();
        tool.validate(&args).expect("valid");
        bencher.bench_local(|| black_box(&tool).validate(black_box(&args)));
    }

    /// `ToolArgs` deserialization of `add`'s two parameters (Inspect: `tool_params`, 15 µs).
    #[divan::bench]
    fn deserialize_add(bencher: Bencher<'_, '_>) {
        let args = json!({"x": 1, "y": 2});
        bencher
            .with_inputs(|| args.clone())
            .bench_local_values(|value| -> Result<(i64, i64), _> {
                let mut args = ToolArgs::from_value(value)?;
                Ok::<_, actuator_tool_core::ToolError>((args.required("x")?, args.required("y")?))
            });
    }

    /// `ToolArgs` deserialization of `search`'s five parameters (Inspect: 34 µs).
    #[divan::bench]
    fn deserialize_search(bencher: Bencher<'_, '_>) {
        type Search = (String, u32, Option<f64>, Vec<String>, Mode);
        let args = search_args();
        bencher.with_inputs(|| args.clone()).bench_local_values(
            |value| -> Result<Search, actuator_tool_core::ToolError> {
                let mut args = ToolArgs::from_value(value)?;
                Ok((
                    args.required("query")?,
                    args.required("limit")?,
                    args.required("threshold")?,
                    args.or_default("tags")?,
                    args.or_else("mode", || Mode::Fast)?,
                ))
            },
        );
    }

    /// `ToolDef::call` of `add`: deserialization, the handler and the output conversion.
    #[divan::bench]
    fn call_add(bencher: Bencher<'_, '_>) {
        let tool = add_tool();
        let args = json!({"x": 1, "y": 2});
        bencher
            .with_inputs(|| (args.clone(), ToolContext::new("call_1", "add")))
            .bench_local_values(|(args, ctx)| poll_ready(tool.call(args, ctx)));
    }

    /// The tool message of a result (Inspect: `ChatMessageTool(...)`, 7.3 µs).
    #[divan::bench]
    fn tool_message() -> ChatMessage {
        ChatMessage::tool(black_box("3"), "call_1", "add", None)
    }

    /// The tool event of a result, with its timestamps (Inspect: `ToolEvent(...)`, 12 µs).
    #[divan::bench]
    fn tool_event(bencher: Bencher<'_, '_>) {
        let arguments = json!({"x": 1, "y": 2});
        bencher.bench_local(|| {
            let now = unix_seconds(SystemTime::now());
            let mut event = ToolEvent::pending("call_1", "add", black_box(&arguments).clone(), now);
            event.pending = None;
            event.result = MessageContent::Text("3".into());
            event.completed_at = Some(unix_seconds(SystemTime::now()));
            event.working_time = Some(0.0);
            event
        });
    }

    /// The floor: `serde_json::from_str` into a struct and a direct call of `add`.
    #[divan::bench]
    fn handwritten_floor(bencher: Bencher<'_, '_>) {
        let raw = r#"{"x": 1, "y": 2}"#;
        bencher.bench_local(|| {
            let args: AddArgs = serde_json::from_str(black_box(raw)).expect("valid JSON");
            poll_ready(add(args.x, args.y))
        });
    }

    /// The function alone: `add(1, 2).await` (Inspect: 0.12 µs).
    #[divan::bench]
    fn raw_add() -> i64 {
        poll_ready(add(black_box(1), black_box(2)))
    }
}

/// W4: a 1 MiB result cut to 16 KiB by `execute_tools`.
mod w4_truncation {
    use super::*;

    fn one_call(function: &str) -> Vec<ChatMessage> {
        let mut assistant = ChatMessageAssistant::new("");
        assistant.tool_calls = Some(vec![ToolCall::new("c1", function, json!({}))]);
        vec![
            ChatMessage::user("go"),
            ChatMessage::Assistant(Box::new(assistant)),
        ]
    }

    fn end_to_end(bencher: Bencher<'_, '_>, tool: ToolDef, truncated: bool) {
        let rt = runtime();
        let messages = one_call(tool.name());
        let tools = [tool];
        let text = run_one(&rt, &messages, &tools).text();
        if truncated {
            assert!(
                text.contains("too long") && text.len() < 17 * 1024,
                "{}",
                text.len()
            );
        } else {
            assert_eq!(text.len(), 1024);
        }
        bencher
            .with_inputs(options_with_events)
            .bench_local_refs(|options| rt.block_on(execute_tools(&messages, &tools, options)));
    }

    /// 1 MiB of ASCII (Inspect: 545 µs).
    #[divan::bench]
    fn big_ascii_1mib(bencher: Bencher<'_, '_>) {
        end_to_end(bencher, big_ascii_tool(), true);
    }

    /// About 1 MiB of non-ASCII text (Inspect: 2,704 µs).
    #[divan::bench]
    fn big_utf8_1mib(bencher: Bencher<'_, '_>) {
        end_to_end(bencher, big_utf8_tool(), true);
    }

    /// 1 KiB, not truncated: the reference (Inspect: 583 µs).
    #[divan::bench]
    fn small_1kib(bencher: Bencher<'_, '_>) {
        end_to_end(bencher, small_1k_tool(), false);
    }
}

/// W4: the parts.
mod w4_parts {
    use super::*;

    /// `truncate_tool_output` on the 1 MiB ASCII text (Inspect: 15 µs).
    #[divan::bench]
    fn truncate_ascii(bencher: Bencher<'_, '_>) {
        let text = BIG_ASCII.as_str();
        bencher.bench_local(|| {
            truncate_tool_output("big_ascii", black_box(text), DEFAULT_MAX_TOOL_OUTPUT)
        });
    }

    /// `truncate_tool_output` on the 1 MiB non-ASCII text (Inspect: 969 µs).
    #[divan::bench]
    fn truncate_utf8(bencher: Bencher<'_, '_>) {
        let text = BIG_UTF8.as_str();
        bencher.bench_local(|| {
            truncate_tool_output("big_utf8", black_box(text), DEFAULT_MAX_TOOL_OUTPUT)
        });
    }

    /// The tool body's copy of the pre-built 1 MiB `String` (Python returns the same `str`).
    #[divan::bench]
    fn clone_1mib_string(bencher: Bencher<'_, '_>) {
        let text = &*BIG_ASCII;
        bencher.bench_local(|| black_box(text).clone());
    }
}
