//! An operator cancels one running call of an agent run: the model is told the reference's
//! cancelled text and the run goes on to its answer.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::{RunOptions, react, run};
use actuator_exec::{CANCELLED_BY_OPERATOR, ToolCallCanceller};
use actuator_model::{ModelOutput, ScriptedModel, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use common::{submit, transcript};
use serde_json::json;

fn sleeper() -> ToolDef {
    ToolDef::builder("wait")
        .description("Waits.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {"ms": {"type": "integer", "description": "How long."}},
                "required": ["ms"]
            }))
            .unwrap(),
        )
        .parallel(true)
        .handler(|mut a: ToolArgs, _c: ToolContext| async move {
            let ms: u64 = a.required("ms")?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, ToolFailure>(format!("waited {ms}"))
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_cancelled_by_an_operator_leaves_the_run_going() {
    let agent = react()
        .no_prompt()
        .tools([sleeper()])
        .model(Arc::new(ScriptedModel::new([
            ModelOutput::for_tool_calls(
                "",
                "",
                vec![
                    ToolCall::new("slow", "wait", json!({"ms": 60_000})),
                    ToolCall::new("fast", "wait", json!({"ms": 5})),
                ],
            ),
            submit("finished anyway"),
        ])))
        .build()
        .unwrap();
    let canceller = ToolCallCanceller::new();
    let operator = {
        let canceller = canceller.clone();
        tokio::spawn(async move {
            for _ in 0..1000 {
                if canceller.cancel("slow") {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            false
        })
    };
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(&agent, "Go.", RunOptions::new().resource(canceller)),
    )
    .await
    .expect("the cancelled call did not hold up the run")
    .unwrap();
    assert!(operator.await.unwrap());
    assert_eq!(out.state.output().completion(), "finished anyway");
    let t = transcript(&out.state.messages);
    assert!(
        t.contains(&format!(
            "tool wait: error timeout: {CANCELLED_BY_OPERATOR}"
        )),
        "{t:?}"
    );
    assert!(t.contains(&"tool wait: waited 5".to_owned()), "{t:?}");
}
