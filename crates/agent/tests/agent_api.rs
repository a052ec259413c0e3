//! The agent API a custom agent uses: the generate loop, a conversation that enforces the
//! message limit itself, readable usage, run arguments and span names.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_agent::{
    AgentState, GenerateLoop, RunContext, RunOptions, ToolCalls, agent_fn,
    limits::{LimitKind, message_limit, token_limit},
    react,
    react::{ContinueDecision, OnContinue},
    run,
};
use actuator_events::{Event, EventLog};
use actuator_model::{ChatMessage, GenerateRequest, ScriptedModel};
use actuator_tool_core::{ToolChoice, ToolParams};
use common::{add_tool, call_add, say, with_usage};
use serde_json::json;

fn loop_agent(model: Arc<ScriptedModel>, options: GenerateLoop) -> actuator_agent::FnAgent {
    agent_fn(
        "looper",
        move |mut state: AgentState, cx: RunContext, _a| {
            let model = Arc::clone(&model);
            let options = options.clone();
            async move {
                cx.generate_loop(model.as_ref(), &mut state, &[add_tool()], &options)
                    .await?;
                Ok(state)
            }
        },
    )
}

fn three_turns() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        call_add(1, 2),
        call_add(3, 4),
        say("done"),
    ]))
}

#[tokio::test]
async fn the_generate_loop_runs_calls_as_told() {
    // loop: until a turn makes no calls.
    let model = three_turns();
    let out = run(&loop_agent(model.clone(), GenerateLoop::new()), "q", &[])
        .await
        .unwrap();
    assert_eq!(model.calls(), 3);
    assert_eq!(out.state.messages.len(), 6); // user, (call, result) × 2, answer
    assert_eq!(out.state.output().completion(), "done");
    // The calls that ran are kept as their text alone.
    for a in out
        .state
        .messages
        .iter()
        .filter_map(ChatMessage::as_assistant)
    {
        for call in a.calls() {
            assert!(!call.arguments.keeps_parsed(), "{call:?}");
        }
    }

    // single: one round of calls, then stop.
    let model = three_turns();
    let out = run(
        &loop_agent(
            model.clone(),
            GenerateLoop::new().tool_calls(ToolCalls::Single),
        ),
        "q",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(model.calls(), 1);
    assert_eq!(out.state.messages.last().unwrap().text(), "3");

    // none: generate once, run nothing.
    let model = three_turns();
    let out = run(
        &loop_agent(
            model.clone(),
            GenerateLoop::new().tool_calls(ToolCalls::None),
        ),
        "q",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(model.calls(), 1);
    assert_eq!(out.state.messages.len(), 2);
}

#[tokio::test]
async fn a_forced_tool_choice_becomes_auto_after_its_call() {
    let log = EventLog::new();
    let model = three_turns();
    let options = GenerateLoop::new().tool_choice(ToolChoice::function("add"));
    run(
        &loop_agent(model, options),
        "q",
        RunOptions::new().events(log.clone()),
    )
    .await
    .unwrap();
    let choices: Vec<ToolChoice> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Model(m) => Some(m.tool_choice),
            _ => None,
        })
        .collect();
    assert_eq!(
        choices,
        vec![
            ToolChoice::function("add"),
            ToolChoice::Auto,
            ToolChoice::Auto
        ]
    );
}

#[tokio::test]
async fn a_custom_agent_cannot_push_past_the_message_limit() {
    // The agent pushes two messages per turn and never checks a limit; its next generation
    // is refused, so the model is called once.
    let model = Arc::new(ScriptedModel::new([say("one"), say("two"), say("three")]));
    let m = model.clone();
    let agent = agent_fn(
        "pusher",
        move |mut state: AgentState, cx: RunContext, _a| {
            let model = Arc::clone(&m);
            async move {
                for _ in 0..3 {
                    let out = cx
                        .generate(model.as_ref(), GenerateRequest::new(&state.messages))
                        .await
                        .map_err(|e| e.or_state(&state))?;
                    state.messages.push(ChatMessage::Assistant(Box::new(
                        out.message().cloned().unwrap(),
                    )));
                    state.messages.push(ChatMessage::user("more"));
                }
                Ok(state)
            }
        },
    );
    let log = EventLog::new();
    let out = run(
        &agent,
        "q",
        RunOptions::new()
            .limits([message_limit(2)])
            .events(log.clone()),
    )
    .await
    .unwrap();
    let limit = out.limit.unwrap();
    assert_eq!(limit.kind, LimitKind::Message);
    assert_eq!(limit.message, "Message limit exceeded. count: 3; limit: 2");
    assert_eq!(model.calls(), 1);
    assert_eq!(
        out.state.messages.len(),
        2,
        "the message over the limit was not added"
    );
    let limit_events = log
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::Limit(_)))
        .count();
    assert_eq!(limit_events, 1, "the limit is reported once");
}

#[tokio::test]
async fn a_state_handed_back_by_on_continue_stays_under_the_limit() {
    // on_continue replaces the state with a longer one: the run's message limit still holds.
    let on_continue = OnContinue::Fn(Arc::new(|state: &AgentState| {
        let mut messages = state.messages.to_vec();
        messages.push(ChatMessage::user("keep going"));
        let new_state = AgentState::new(messages);
        Box::pin(async move { ContinueDecision::State(new_state) })
    }));
    let model = Arc::new(ScriptedModel::new((0..20).map(|_| call_add(1, 1))));
    let agent = react()
        .model(model.clone())
        .tools([add_tool()])
        .on_continue(on_continue)
        .build()
        .unwrap();
    let out = run(&agent, "q", &[message_limit(8)]).await.unwrap();
    assert_eq!(out.limit.unwrap().kind, LimitKind::Message);
    assert!(out.state.messages.len() <= 8);
    assert!(model.calls() < 20);
}

#[tokio::test]
async fn usage_is_readable_while_and_after_a_run() {
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let model = Arc::new(ScriptedModel::new([
        with_usage(say("a"), 100, 20),
        with_usage(say("b"), 30, 5),
    ]));
    let agent = agent_fn(
        "counter",
        move |mut state: AgentState, cx: RunContext, _a| {
            let model = Arc::clone(&model);
            let seen = s.clone();
            async move {
                for _ in 0..2 {
                    let out = cx
                        .generate(model.as_ref(), GenerateRequest::new(&state.messages))
                        .await?;
                    state.messages.push(ChatMessage::Assistant(Box::new(
                        out.message().cloned().unwrap(),
                    )));
                    if seen.lock().unwrap().is_none() {
                        *seen.lock().unwrap() = Some(cx.usage());
                    }
                }
                Ok(state)
            }
        },
    );
    let out = run(&agent, "q", &[token_limit(1_000)]).await.unwrap();
    let during = seen.lock().unwrap().unwrap();
    assert_eq!((during.tokens, during.turns), (120, 1));
    assert_eq!((out.usage.tokens, out.usage.turns), (155, 2));
    assert!(out.usage.time >= during.time);
    assert!(out.usage.working_time <= out.usage.time);
}

#[tokio::test]
async fn run_arguments_are_validated_and_the_span_can_be_named() {
    let params = ToolParams::from_value(&json!({
        "properties": {"depth": {"type": "integer", "description": "How deep."}},
        "required": ["depth"]
    }))
    .unwrap();
    let agent = agent_fn("digger", |mut state: AgentState, _cx, args| async move {
        state
            .messages
            .push(ChatMessage::assistant(format!("depth {}", args["depth"])));
        Ok(state)
    })
    .with_parameters(params);

    let log = EventLog::new();
    let out = run(
        &agent,
        "q",
        RunOptions::new()
            .arg("depth", 3)
            .name("dig-1")
            .events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.state.output().completion(), "depth 3");
    match log.events().first() {
        Some(Event::SpanBegin(b)) => {
            assert_eq!((b.kind.as_str(), b.name.as_str()), ("agent", "dig-1"));
        }
        other => panic!("{other:?}"),
    }

    let missing = run(&agent, "q", RunOptions::new()).await.unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("Invalid arguments for agent 'digger': Found 1 validation error"),
        "{missing}"
    );
    assert!(
        missing
            .to_string()
            .contains("'depth' is a required property"),
        "{missing}"
    );
    let unknown = run(
        &agent,
        "q",
        RunOptions::new().arg("depth", 1).arg("width", 2),
    )
    .await
    .unwrap_err();
    assert!(unknown.to_string().contains("'width'"), "{unknown}");
}
