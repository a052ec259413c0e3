//! `AgentRun::end`: how a run ended, one field to match on, so that a limit, a context window
//! overflow or a refusal never reads as an answer.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::{LimitKind, turn_limit};
use actuator_agent::react::{ContinueDecision, OnContinue};
use actuator_agent::{AgentState, RunContext, RunEnd, agent_fn, react, run};
use actuator_model::{ChatMessage, ModelOutput, ScriptedModel, StopReason};
use common::*;

fn scripted(outputs: Vec<ModelOutput>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(outputs))
}

#[tokio::test]
async fn a_submission_is_submitted_with_its_answer() {
    let agent = react()
        .model(scripted(vec![call_add(3, 4), submit("7")]))
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "3 + 4?", [turn_limit(10)]).await.unwrap();
    assert_eq!(out.end, RunEnd::Submitted { answer: "7".into() });
    assert_eq!(out.answer(), Some("7"));
}

#[tokio::test]
async fn a_turn_limit_is_a_limit_not_an_answer() {
    // The model keeps calling tools; the last assistant text must not pass for an answer.
    let outputs = (0..5)
        .map(|i| call("Still working.", "add", serde_json::json!({"x": i, "y": 1})))
        .collect();
    let agent = react()
        .model(scripted(outputs))
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "q", [turn_limit(2)]).await.unwrap();
    match &out.end {
        RunEnd::Limit(limit) => assert_eq!(limit.kind, LimitKind::Turn),
        other => panic!("expected a turn limit, got {other:?}"),
    }
    assert_eq!(out.answer(), None);
    assert!(out.end.to_string().starts_with("a limit stopped the run:"));
}

#[tokio::test]
async fn a_context_window_overflow_is_not_an_answer() {
    // As a provider reports a context-window error: a model_length stop whose text is the
    // provider's message (what the README's real-model run once printed as its answer).
    let message =
        "This model's maximum context length is 2048 tokens. However, you requested 2055 tokens";
    let agent = react()
        .model(scripted(vec![
            call_add(1, 1),
            stopped(message, StopReason::ModelLength),
        ]))
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "q", [turn_limit(10)]).await.unwrap();
    assert_eq!(out.end, RunEnd::ContextWindow);
    assert_eq!(out.state.output().completion(), message);
    assert_eq!(out.answer(), None);
    assert!(out.end.to_string().contains("context window"));
}

#[tokio::test]
async fn three_refusals_are_a_refusal() {
    let refused = || stopped("I can't help with that.", StopReason::ContentFilter);
    let agent = react()
        .model(scripted(vec![refused(), refused(), refused()]))
        .build()
        .unwrap();
    let out = run(&agent, "q", ()).await.unwrap();
    assert_eq!(out.end, RunEnd::Refused);
    assert_eq!(out.answer(), None);
}

#[tokio::test]
async fn without_a_submit_tool_the_final_text_completes_the_run() {
    let agent = react()
        .model(scripted(vec![call_add(1, 1), say("2")]))
        .tools([add_tool()])
        .no_submit()
        .build()
        .unwrap();
    let out = run(&agent, "1 + 1?", ()).await.unwrap();
    assert_eq!(out.end, RunEnd::Completed { answer: "2".into() });
}

#[tokio::test]
async fn stopping_without_a_submission_or_text_is_no_answer() {
    let agent = react()
        .model(scripted(vec![call_add(1, 1)]))
        .tools([add_tool()])
        .on_continue(OnContinue::Fn(Arc::new(|_state: &AgentState| {
            Box::pin(async { ContinueDecision::Stop })
        })))
        .build()
        .unwrap();
    let out = run(&agent, "q", ()).await.unwrap();
    assert_eq!(out.end, RunEnd::NoAnswer);
    assert!(out.answer().is_none());
}

#[tokio::test]
async fn a_nested_submission_is_the_nested_runs_not_the_outer_ones() {
    // The inner react agent submits; the outer agent, which runs it and then returns without
    // submitting, has not: each run has its own end.
    let inner = Arc::new(
        react()
            .model(scripted(vec![submit("inner answer")]))
            .build()
            .unwrap(),
    );
    let outer = agent_fn("outer", move |state: AgentState, cx: RunContext, _args| {
        let inner = Arc::clone(&inner);
        async move {
            let nested = cx.run(&*inner, "sub-question", ()).await?;
            assert_eq!(nested.answer(), Some("inner answer"));
            assert!(matches!(nested.end, RunEnd::Submitted { .. }));
            let mut state = state;
            state
                .messages
                .push(ChatMessage::assistant("outer text, not submitted"));
            Ok(state)
        }
    });
    let out = run(&outer, "q", ()).await.unwrap();
    assert_eq!(
        out.end,
        RunEnd::Completed {
            answer: "outer text, not submitted".into()
        }
    );
}
