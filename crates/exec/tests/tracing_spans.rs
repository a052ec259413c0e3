//! The tracing span of each call. A test binary of its own: tracing caches a callsite's
//! interest process-wide, so calls from tests running in parallel without a subscriber would
//! make this one flaky.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_tool_core::{ToolError, ToolOutput};
use common::{conversation, tool};
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
fn each_call_runs_in_a_tracing_span_naming_tool_and_call() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let bad = tool("bad", false, |_a, _c| async {
                tracing::info!("inside the tool");
                Err::<ToolOutput, _>(ToolError::new("broken").into())
            });
            execute_tools(
                &conversation(&[("bad", json!({}))]),
                &[bad],
                &ExecuteOptions::default(),
            )
            .await
            .unwrap();
        });
    });
    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        out.contains("tool_call{tool=bad call_id=call_0}: "),
        "{out}"
    );
    assert!(out.contains("inside the tool"), "{out}");
}
