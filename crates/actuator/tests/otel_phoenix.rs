//! End to end against a real OpenTelemetry consumer nobody here wrote: Arize Phoenix receives
//! a react run with a sub-agent (`as_tool`) over OTLP/HTTP from `OtelSink`, and the spans are
//! read back through Phoenix's REST API: their names, their parent links, the token counts.
//!
//! Then the trace is opened in Phoenix's own web UI in headless Chromium (Playwright, as
//! crates/eval/tests/viewer.rs does for `inspect view`), which must show the spans; the
//! screenshot is saved as `target/phoenix-trace.png` (`docs/images/phoenix-trace.png` is one).
//!
//! Phoenix and the browser (tests/otel) stay on loopback. Without them the test skips with a
//! printed reason, except when `CI` is set, where their absence is a failure.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod otel;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actuator::agent::{RunOptions, react, run};
use actuator::model::{ModelOutput, ModelUsage, ScriptedModel, ToolCall};
use actuator::multi::as_tool;
use actuator::otel::OtelSink;
use actuator::prelude::*;
use serde_json::{Value, json};

use otel::{Phoenix, attribute, phoenix_venv, screenshot_trace, target_dir};

/// Subtract one number from another.
///
/// # Arguments
/// * `a` - The number to subtract from.
/// * `b` - The number to subtract.
#[tool]
async fn subtract(a: f64, b: f64) -> f64 {
    a - b
}

/// A scripted turn calling `function`, reporting `input`/`output` tokens.
fn turn(id: &str, function: &str, args: Value, tokens: (u64, u64)) -> ModelOutput {
    ModelOutput::for_tool_calls("scripted", "", vec![ToolCall::new(id, function, args)])
        .with_usage(ModelUsage::new(tokens.0, tokens.1))
}

#[test]
fn phoenix_receives_a_react_run_with_a_sub_agent() {
    let Some(venv) = phoenix_venv() else {
        return;
    };
    let phoenix = Phoenix::start(&venv);

    let calculator = react()
        .name("calculator")
        .description("Does arithmetic on request.")
        .tools([subtract_tool()])
        .model(Arc::new(ScriptedModel::named(
            "mockllm/scripted",
            [
                turn("c1", "subtract", json!({"a": 330, "b": 138.5}), (30, 3)),
                turn("c2", "submit", json!({"answer": "191.5"}), (40, 4)),
            ],
        )))
        .build()
        .unwrap();
    let supervisor = react()
        .name("supervisor")
        .tools([as_tool(Arc::new(calculator)).build().unwrap()])
        .model(Arc::new(ScriptedModel::named(
            "mockllm/scripted",
            [
                turn(
                    "s1",
                    "calculator",
                    json!({"input": "330 - 138.5?"}),
                    (100, 10),
                ),
                turn("s2", "submit", json!({"answer": "191.5 m"}), (120, 12)),
            ],
        )))
        .build()
        .unwrap();

    let sink = Arc::new(
        OtelSink::builder()
            .endpoint(phoenix.url("/v1/traces"))
            .service_name("actuator-otel-test")
            .build()
            .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime
        .block_on(run(
            &supervisor,
            "How much taller is the Eiffel Tower than the Great Pyramid?",
            RunOptions::default().events(sink.clone()),
        ))
        .unwrap();
    assert_eq!(result.state.output().completion(), "191.5 m");
    sink.force_flush().unwrap();
    sink.shutdown().unwrap();

    // supervisor: 2 chats, the calculator call (its agent: 2 chats, subtract, submit), submit.
    let spans = phoenix.spans(10, Duration::from_secs(30));
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(spans.len(), 10, "{names:?}\n{}", phoenix.log_tail());
    let by_name =
        |name: &str| -> Vec<&Value> { spans.iter().filter(|s| s["name"] == name).collect() };
    let id = |span: &Value| span["context"]["span_id"].as_str().unwrap().to_owned();
    let parent = |span: &Value| span["parent_id"].as_str().map(str::to_owned);

    let root = by_name("invoke_agent supervisor");
    assert_eq!(root.len(), 1, "{names:?}");
    let root = root[0];
    assert_eq!(parent(root), None);
    let trace = root["context"]["trace_id"].as_str().unwrap();
    assert!(
        spans.iter().all(|s| s["context"]["trace_id"] == trace),
        "one trace per run"
    );
    assert_eq!(
        attribute(root, "gen_ai.operation.name"),
        Some(&json!("invoke_agent"))
    );

    let call = by_name("execute_tool calculator");
    assert_eq!(call.len(), 1, "{names:?}");
    assert_eq!(parent(call[0]), Some(id(root)));
    assert_eq!(
        attribute(call[0], "gen_ai.tool.call.id"),
        Some(&json!("s1"))
    );
    let sub = by_name("invoke_agent calculator");
    assert_eq!(sub.len(), 1, "{names:?}");
    assert_eq!(
        parent(sub[0]),
        Some(id(call[0])),
        "the sub-agent is its call's child"
    );
    let subtract = by_name("execute_tool subtract");
    assert_eq!(subtract.len(), 1, "{names:?}");
    assert_eq!(parent(subtract[0]), Some(id(sub[0])));
    let submits = by_name("execute_tool submit");
    assert_eq!(submits.len(), 2, "{names:?}");
    let mut submit_parents: Vec<_> = submits.iter().map(|s| parent(s)).collect();
    submit_parents.sort();
    let mut want = vec![Some(id(root)), Some(id(sub[0]))];
    want.sort();
    assert_eq!(submit_parents, want);

    // Each chat's tokens, under the agent that made it.
    let chats = by_name("chat scripted");
    assert_eq!(chats.len(), 4, "{names:?}");
    let mut tokens: HashMap<Option<String>, Vec<(i64, i64)>> = HashMap::new();
    for chat in &chats {
        assert_eq!(
            attribute(chat, "gen_ai.provider.name"),
            Some(&json!("mockllm"))
        );
        assert_eq!(
            attribute(chat, "gen_ai.request.model"),
            Some(&json!("scripted"))
        );
        assert_eq!(
            attribute(chat, "gen_ai.response.finish_reasons"),
            Some(&json!(["tool_calls"]))
        );
        let count = |key| attribute(chat, key).and_then(Value::as_i64).unwrap();
        tokens.entry(parent(chat)).or_default().push((
            count("gen_ai.usage.input_tokens"),
            count("gen_ai.usage.output_tokens"),
        ));
    }
    for list in tokens.values_mut() {
        list.sort_unstable();
    }
    assert_eq!(tokens[&Some(id(root))], vec![(100, 10), (120, 12)]);
    assert_eq!(tokens[&Some(id(sub[0]))], vec![(30, 3), (40, 4)]);
    // No message contents unless asked.
    assert!(
        spans
            .iter()
            .all(|s| attribute(s, "gen_ai.input.messages").is_none()),
        "contents are off by default"
    );

    // The same trace in Phoenix's own UI: the tree of agents, the sub-agent's tool and the chats.
    let screenshot = target_dir().join("phoenix-trace.png");
    let shown = screenshot_trace(
        &phoenix,
        trace,
        &screenshot,
        &[
            "invoke_agent supervisor",
            "execute_tool calculator",
            "invoke_agent calculator",
            "execute_tool subtract",
            "chat scripted",
        ],
        // A generation's attributes beside the tree: its model, provider and token counts.
        &["chat scripted", "Attributes"],
    );
    if let Some(text) = shown {
        assert!(text.contains("gen_ai.usage.input_tokens"), "{text}");
        eprintln!("the trace in Phoenix's UI: {}", screenshot.display());
    }
}
