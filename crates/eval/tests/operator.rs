//! An operator steps into one sample of an evaluation: a long tool call interrupted, the agent
//! redirected, all of it in a log the reference reads.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::AgentChannel;
use actuator_eval::{EvalOptions, SampleId, eval, read_eval_log};
use actuator_model::{ChatMessage, FunctionModel, ModelOutput, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use serde_json::json;

/// `add` that takes a minute when asked to add 1 and 2 (sample 1), and says when it starts.
fn slow_add(started: Arc<tokio::sync::Notify>) -> ToolDef {
    ToolDef::builder("add")
        .description("Add two integers.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {
                    "x": {"type": "integer", "description": "First addend."},
                    "y": {"type": "integer", "description": "Second addend."}
                },
                "required": ["x", "y"]
            }))
            .unwrap(),
        )
        .handler(move |mut a: ToolArgs, _c: ToolContext| {
            let started = started.clone();
            async move {
                let x: i64 = a.required("x")?;
                let y: i64 = a.required("y")?;
                if x == 1 {
                    started.notify_one();
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                Ok::<_, ToolFailure>(x + y)
            }
        })
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_interrupts_and_redirects_one_sample_of_an_evaluation() {
    let started = Arc::new(tokio::sync::Notify::new());
    // After the operator's message, the model submits the number it was told.
    let model = FunctionModel::new("mockllm/model", |messages: &[ChatMessage], _tools| {
        let told = messages.iter().rev().find_map(|m| match m {
            ChatMessage::User(u) if u.source == Some(actuator_model::MessageSource::Operator) => {
                Some(u.content.text())
            }
            _ => None,
        });
        Ok(match told {
            Some(text) => ModelOutput::for_tool_calls(
                "mockllm/model",
                "",
                vec![ToolCall::new(
                    format!("s{}", messages.len()),
                    "submit",
                    json!({"answer": text.trim_start_matches("Submit ")}),
                )],
            ),
            None => common::arithmetic_reply(messages),
        })
    });
    let task = common::arithmetic_task_with(2, model, slow_add(started.clone()));
    let channel = AgentChannel::new();
    let operator = {
        let channel = channel.clone();
        tokio::spawn(async move {
            started.notified().await;
            channel.interrupt();
            channel.post("Submit 3").unwrap();
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let options = EvalOptions::new().log_dir(dir.path()).operator({
        let channel = channel.clone();
        move |id: &SampleId, _epoch| (*id == SampleId::Int(1)).then(|| channel.clone())
    });
    let run = tokio::time::timeout(Duration::from_secs(30), eval(&task, options))
        .await
        .expect("the interrupt did not cut the minute-long call short")
        .unwrap();
    operator.await.unwrap();
    assert_eq!(run.log.status, "success", "{run}");
    assert_eq!(run.score("match").unwrap().metric("accuracy"), Some(1.0));

    let path = run.location.unwrap();
    let log = read_eval_log(&path).unwrap();
    let samples = log.samples.unwrap();
    let first = &samples[0];
    let kinds: Vec<&str> = first
        .events
        .iter()
        .filter_map(|e| e["event"].as_str())
        .collect();
    assert!(kinds.contains(&"interrupt"), "{kinds:?}");
    assert!(
        first
            .messages
            .iter()
            .any(|m| m["source"] == "operator" && m["content"] == "Submit 3")
    );
    // The other sample had no operator.
    assert!(!samples[1].events.iter().any(|e| e["event"] == "interrupt"));

    if let Some(read) = common::reference_read(&path) {
        let events = read["samples"][0]["events"].as_array().unwrap();
        let interrupt = events.iter().find(|e| e["event"] == "interrupt").unwrap();
        assert_eq!(interrupt["source"], "user_cancel");
        assert_eq!(interrupt["interrupted"], "tool_call");
        let messages = read["samples"][0]["messages"].as_array().unwrap();
        assert!(messages.iter().any(|m| m["source"] == "operator"));
    }
}
