//! Spans of a run appear in `tracing` too: the agent span, and a `model` span per generation
//! inside it. A test binary of its own, since tracing caches callsite interest process-wide.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_agent::{react, run};
use actuator_model::FunctionModel;
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
use common::{call, submit};
use serde_json::json;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);
impl std::io::Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_agent_span_and_each_generation_are_tracing_spans() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let model = FunctionModel::new("m", |input, _tools| {
                tracing::info!("generating");
                Ok(if input.len() < 3 {
                    call("", "note", json!({}))
                } else {
                    submit("42")
                })
            });
            let note = ToolDef::builder("note")
                .description("Logs a note.")
                .handler(|_a: ToolArgs, _c: ToolContext| async {
                    tracing::info!("noted");
                    Ok::<_, ToolFailure>("")
                })
                .build()
                .unwrap();
            let agent = react()
                .name("solver")
                .model(Arc::new(model))
                .tools([note])
                .build()
                .unwrap();
            let out = run(&agent, "q", &[]).await.unwrap();
            assert_eq!(out.state.output().completion(), "42");
        });
    });
    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    // The agent span is opened by RunContext::span; each generation runs in a `model` span
    // inside it (RunContext::generate), and each call in its `tool_call` span.
    assert!(out.contains("agent{name=solver}:model{model=m}: "), "{out}");
    assert!(out.matches("generating").count() == 2, "{out}");
    assert!(
        out.contains("agent{name=solver}:tool_call{tool=note call_id=note_call}: "),
        "{out}"
    );
}
