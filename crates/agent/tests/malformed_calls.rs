//! A model whose tool calls are malformed turn after turn is told so a bounded number of times
//! in a row, then the run stops with an error that says why, rather than looping until a limit
//! hides the cause (issue 38 §5). A well-formed call starts the count again; `None` keeps the
//! reference's unbounded re-asking.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::turn_limit;
use actuator_agent::react::DEFAULT_MALFORMED_CALL_RETRIES;
use actuator_agent::{AgentErrorKind, RunOptions, react, run};
use actuator_model::{ModelOutput, ScriptedModel, ToolCall};
use common::{add_tool, call_add, submit};
use serde_json::json;

/// A turn whose one call's arguments were not JSON (as the providers parse them).
fn garbled() -> ModelOutput {
    let mut call = ToolCall::new("c", "add", json!({}));
    call.parse_error = Some("Error parsing the following tool call arguments:\n\n{\"x\": 1,\n\nError details: EOF while parsing an object".into());
    ModelOutput::for_tool_calls("scripted", "", vec![call])
}

/// A turn that calls a tool the agent does not have.
fn unknown_tool() -> ModelOutput {
    ModelOutput::for_tool_call("scripted", "multiply", json!({"x": 1, "y": 2}))
}

fn agent(
    outputs: Vec<ModelOutput>,
    retries: Option<Option<u32>>,
) -> actuator_agent::react::ReactAgent {
    let builder = react()
        .tools([add_tool()])
        .model(Arc::new(ScriptedModel::new(outputs)));
    match retries {
        Some(retries) => builder.malformed_call_retries(retries),
        None => builder,
    }
    .build()
    .unwrap()
}

#[tokio::test]
async fn the_default_bound_stops_the_fourth_malformed_turn_in_a_row_with_a_clear_error() {
    assert_eq!(DEFAULT_MALFORMED_CALL_RETRIES, 3);
    let outputs = vec![
        garbled(),
        unknown_tool(),
        garbled(),
        unknown_tool(),
        submit("never reached"),
    ];
    let error = run(
        &agent(outputs, None),
        "What is 1 + 2?",
        RunOptions::new().limits([turn_limit(10)]),
    )
    .await
    .unwrap_err();
    let AgentErrorKind::MalformedCalls { turns, last } = &error.kind else {
        panic!("expected MalformedCalls, got {error}");
    };
    assert_eq!(*turns, 4);
    assert_eq!(last, "Tool multiply not found");
    let text = error.to_string();
    assert!(text.contains("malformed 4 turns in a row"), "{text}");
    assert!(text.contains("malformed_call_retries"), "{text}");
    // Nothing done is lost: the state holds the four turns and the errors the model read.
    let state = error.state.as_deref().unwrap();
    let told = state
        .messages
        .iter()
        .filter_map(|m| m.as_tool())
        .filter(|t| t.error.is_some())
        .count();
    assert_eq!(told, 4);
}

#[tokio::test]
async fn a_well_formed_call_starts_the_count_again() {
    let outputs = vec![
        garbled(),
        garbled(),
        garbled(),
        call_add(1, 2),
        garbled(),
        garbled(),
        garbled(),
        submit("3"),
    ];
    let out = run(
        &agent(outputs, None),
        "What is 1 + 2?",
        RunOptions::new().limits([turn_limit(10)]),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("3"));
}

#[tokio::test]
async fn a_bound_of_zero_stops_at_the_first_malformed_turn_and_none_never_stops() {
    let error = run(
        &agent(vec![garbled(), submit("3")], Some(Some(0))),
        "What is 1 + 2?",
        RunOptions::new().limits([turn_limit(10)]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error.kind, AgentErrorKind::MalformedCalls { turns: 1, .. }),
        "{error}"
    );

    let mut outputs: Vec<ModelOutput> = (0..6).map(|_| garbled()).collect();
    outputs.push(submit("3"));
    let out = run(
        &agent(outputs, Some(None)),
        "What is 1 + 2?",
        RunOptions::new().limits([turn_limit(10)]),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("3"));
}
