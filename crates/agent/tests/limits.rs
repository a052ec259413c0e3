//! Limits of each kind, scoped and outer, through `run` and react; the state and run API.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::{
    AgentError, AgentErrorKind, AgentInput, AgentState, RunContext, agent_fn,
    limits::{
        LimitKind, cost_limit, message_limit, time_limit, token_limit, turn_limit, working_limit,
    },
    react, run,
};
use actuator_model::{
    ChatMessage, FunctionModel, MessageSource, ModelOutput, ModelUsage, ScriptedModel,
};
use common::*;

fn looping_model() -> Arc<FunctionModel> {
    // Calls add forever, reporting 10 tokens and $0.01 per turn.
    Arc::new(FunctionModel::new("loop", |_input, _tools| {
        Ok(call_add(1, 1).with_usage(ModelUsage {
            total_cost: Some(0.01),
            ..ModelUsage::new(6, 4)
        }))
    }))
}

fn looping_agent() -> actuator_agent::react::ReactAgent {
    react()
        .model(looping_model())
        .no_prompt()
        .tools([add_tool()])
        .build()
        .unwrap()
}

#[tokio::test]
async fn message_limit_keeps_the_partial_state() {
    let out = run(&looping_agent(), "q", &[message_limit(5)])
        .await
        .unwrap();
    let limit = out.limit.unwrap();
    assert_eq!(limit.kind, LimitKind::Message);
    // user, (assistant, tool) × 2 = 5 messages: reached before the third generation.
    assert_eq!(limit.message, "Message limit reached. count: 5; limit: 5");
    assert_eq!(out.state.messages.len(), 5);
    assert_paired(&out.state.messages);

    let out = run(&looping_agent(), "q", &[message_limit(4)])
        .await
        .unwrap();
    assert_eq!(
        out.limit.unwrap().message,
        "Message limit exceeded. count: 5; limit: 4"
    );
}

#[tokio::test]
async fn token_turn_and_cost_limits() {
    let out = run(&looping_agent(), "q", &[token_limit(25)])
        .await
        .unwrap();
    let l = out.limit.unwrap();
    assert_eq!(
        (l.kind, l.message.as_str()),
        (
            LimitKind::Token,
            "Token limit exceeded. value: 30; limit: 25"
        )
    );
    // The generation that went over is not appended.
    assert_eq!(out.state.messages.len(), 5);

    let out = run(&looping_agent(), "q", &[turn_limit(2)]).await.unwrap();
    let l = out.limit.unwrap();
    assert_eq!(
        (l.kind, l.message.as_str()),
        (LimitKind::Turn, "Turn limit exceeded. value: 3; limit: 2")
    );

    let out = run(&looping_agent(), "q", &[cost_limit(0.025)])
        .await
        .unwrap();
    let l = out.limit.unwrap();
    assert_eq!(l.kind, LimitKind::Cost);
    assert_eq!(
        l.message,
        "Cost limit exceeded. value: $0.0300; limit: $0.0250"
    );
    assert_eq!(l.limit_str(), "0.03");
}

#[tokio::test(start_paused = true)]
async fn time_limit_cancels_a_slow_generation_and_keeps_the_state() {
    struct Slow;
    impl actuator_model::Model for Slow {
        fn name(&self) -> &str {
            "slow"
        }
        fn generate<'a>(
            &'a self,
            _request: actuator_model::GenerateRequest<'a>,
        ) -> actuator_model::BoxFuture<'a, Result<ModelOutput, actuator_model::ModelError>>
        {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(25)).await;
                Ok(call_add(1, 1))
            })
        }
    }
    let agent = react()
        .model(Arc::new(Slow))
        .no_prompt()
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "q", &[time_limit(Duration::from_secs(60))])
        .await
        .unwrap();
    let l = out.limit.unwrap();
    assert_eq!(
        (l.kind, l.message.as_str()),
        (LimitKind::Time, "Time limit exceeded. limit: 60 seconds")
    );
    assert_eq!(l.limit_str(), "60.00");
    // Two turns fit in 60 s; the third was cancelled.
    assert_eq!(out.state.messages.len(), 5);

    let out = run(&agent, "q", &[working_limit(Duration::from_secs(30))])
        .await
        .unwrap();
    let l = out.limit.unwrap();
    assert_eq!(
        (l.kind, l.message.as_str()),
        (
            LimitKind::Working,
            "Working time limit exceeded. limit: 30 seconds"
        )
    );

    // An agent that does not cooperate is cut off at the deadline; its input state comes back.
    let stubborn = agent_fn("stubborn", |_s: AgentState, _cx, _a| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(AgentState::default())
    });
    let out = run(&stubborn, "q", &[time_limit(Duration::from_millis(1500))])
        .await
        .unwrap();
    assert_eq!(
        out.limit.unwrap().message,
        "Time limit exceeded. limit: 1.5 seconds"
    );
    assert_eq!(out.state.messages.len(), 1);
}

#[tokio::test]
async fn a_scope_catches_its_own_limit_and_outer_limits_propagate() {
    // Inner limits are caught by the inner run; the outer agent goes on.
    let outer = agent_fn(
        "outer",
        |mut state: AgentState, cx: RunContext, _a| async move {
            let inner = looping_agent();
            let res = cx
                .run(&inner, state.messages.clone(), &[turn_limit(1)])
                .await?;
            assert_eq!(res.limit.as_ref().unwrap().kind, LimitKind::Turn);
            state.messages.push(ChatMessage::assistant(format!(
                "inner stopped: {}",
                res.limit.unwrap()
            )));
            Ok(state)
        },
    );
    let out = run(&outer, "q", &[token_limit(1000)]).await.unwrap();
    assert!(out.limit.is_none());
    assert_eq!(
        out.state.output().completion(),
        "inner stopped: Turn limit exceeded. value: 2; limit: 1"
    );

    // An outer limit hit inside an inner scope propagates through it (D9) to the outer run.
    let outer = agent_fn(
        "outer",
        |state: AgentState, cx: RunContext, _a| async move {
            let inner = looping_agent();
            cx.run(&inner, state.messages.clone(), &[token_limit(100)])
                .await?;
            panic!("the inner run should have propagated the outer limit");
        },
    );
    let out = run(&outer, "q", &[token_limit(10)]).await.unwrap();
    let l = out.limit.unwrap();
    assert_eq!(l.message, "Token limit exceeded. value: 20; limit: 10");
    // Without a scope of its own, `run` lets the error through.
    let err: AgentError = RunContext::new()
        .scoped(&[token_limit(10)])
        .run(&looping_agent(), "q", ())
        .await
        .unwrap_err();
    assert!(matches!(err.kind, AgentErrorKind::Limit(_)));
    assert!(err.state.is_some());
}

#[tokio::test]
async fn input_forms_and_sources() {
    let echo = agent_fn("echo", |mut s: AgentState, _cx, _a| async move {
        s.messages.push(ChatMessage::assistant("ok"));
        Ok(s)
    });
    let mut explicit = AgentState::new(vec![ChatMessage::user("a"), ChatMessage::assistant("b")]);
    explicit.set_output(ModelOutput::from_content("m", "stale"));
    for input in [
        AgentInput::from("a"),
        AgentInput::from(vec![ChatMessage::user("a")]),
        AgentInput::from(explicit.clone()),
    ] {
        let out = run(&echo, input, &[]).await.unwrap();
        assert!(
            out.state.messages[..out.state.messages.len() - 1]
                .iter()
                .all(|m| m.source() == Some(MessageSource::Input))
        );
        // A state's explicit output is not carried over.
        assert_eq!(out.state.output().completion(), "ok");
    }
    // The caller's state is not changed.
    assert_eq!(explicit.messages.len(), 2);
    assert_eq!(explicit.explicit_output().unwrap().completion(), "stale");
}

#[test]
fn agent_state_derives_its_output_and_round_trips() {
    let mut state = AgentState::new(vec![ChatMessage::user("q")]);
    assert!(state.output().is_empty());
    state.messages.push(ChatMessage::assistant("one"));
    assert_eq!(state.output().completion(), "one");
    state.messages.push(ChatMessage::assistant("two"));
    assert_eq!(
        state.output().completion(),
        "two",
        "derived output went stale"
    );
    let json = serde_json::to_string(&state).unwrap();
    assert!(!json.contains("\"output\""));
    let back: AgentState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, state);
    state.set_output(ModelOutput::from_content("m", "explicit"));
    state.messages.push(ChatMessage::assistant("three"));
    assert_eq!(state.output().completion(), "explicit");
    let back: AgentState = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    assert_eq!(back, state);
    state.clear_output();
    assert_eq!(state.output().completion(), "three");
    let _ = ScriptedModel::new([]);
}
