//! One way to run an agent (`run` and, inside a run, `RunContext::run`), react's tool choice,
//! and a conversation that cannot grow past its run's message limit.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::{
    AgentInput, AgentState, MessageList, RunContext, RunOptions, agent_fn,
    limits::{Limit, LimitKind, message_limit, turn_limit},
    react,
    react::ReactToolChoice,
    run,
};
use actuator_events::{Event, EventLog};
use actuator_model::{ChatMessage, MessageSource, ScriptedModel};
use actuator_tool_core::{ToolChoice, ToolParams};
use common::{add_tool, call_add, submit};
use serde_json::json;

/// An agent that asks for one more turn forever (one message per turn).
fn echo() -> impl actuator_agent::Agent {
    agent_fn(
        "echo",
        |state: AgentState, _cx, _args| async move { Ok(state) },
    )
}

#[tokio::test]
async fn options_are_nothing_limits_alone_or_run_options() {
    let agent = echo();
    // Each form compiles and runs: nothing, an empty slice, limits alone, one limit, a vector.
    for out in [
        run(&agent, "hi", ()).await.unwrap(),
        run(&agent, "hi", &[]).await.unwrap(),
        run(&agent, "hi", &[turn_limit(2), message_limit(5)])
            .await
            .unwrap(),
        run(&agent, "hi", turn_limit(2)).await.unwrap(),
        run(&agent, "hi", vec![turn_limit(2)]).await.unwrap(),
        run(&agent, "hi", RunOptions::new().name("named"))
            .await
            .unwrap(),
    ] {
        assert_eq!(out.state.messages.len(), 1);
        assert!(out.limit.is_none());
    }
}

#[tokio::test]
async fn limits_given_alone_are_the_runs_own() {
    let chatty = agent_fn("chatty", |mut state: AgentState, _cx, _args| async move {
        for i in 0..10 {
            state.messages.push(ChatMessage::assistant(format!("{i}")));
        }
        Ok(state)
    });
    let limits: &[Limit] = &[message_limit(3)];
    let out = run(&chatty, "go", limits).await.unwrap();
    assert_eq!(out.limit.unwrap().kind, LimitKind::Message);
    assert_eq!(out.state.messages.len(), 3);
}

fn repeat_agent() -> impl actuator_agent::Agent {
    let params = ToolParams::from_value(&json!({
        "properties": {"times": {"type": "integer", "description": "How often."}},
        "required": ["times"]
    }))
    .unwrap();
    agent_fn("repeat", |mut state: AgentState, _cx, args| async move {
        let times = args["times"].as_u64().unwrap_or(0) as usize;
        state
            .messages
            .push(ChatMessage::assistant("echo ".repeat(times)));
        Ok(state)
    })
    .with_parameters(params)
}

#[tokio::test]
async fn a_nested_run_validates_its_arguments_like_a_root_run() {
    let repeat = repeat_agent();
    let cx = RunContext::new().scoped(&[turn_limit(5)]);
    let ok = cx
        .run(&repeat, "hi", RunOptions::new().arg("times", 2))
        .await
        .unwrap();
    assert_eq!(ok.state.output().completion(), "echo echo ");
    let err = cx
        .run(&repeat, "hi", RunOptions::new().arg("times", "two"))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("'two' is not of type 'integer'"),
        "{err}"
    );
    let missing = cx.run(&repeat, "hi", ()).await.unwrap_err();
    assert!(missing.to_string().contains("times"), "{missing}");
}

#[tokio::test]
async fn a_nested_run_sends_events_to_its_own_sink_and_reaches_its_resources() {
    #[derive(Debug)]
    struct Greeting(&'static str);
    let greeter = agent_fn("greeter", |mut state: AgentState, cx, _args| async move {
        let text = cx.resource::<Greeting>().map_or("?", |g| g.0);
        state.messages.push(ChatMessage::assistant(text));
        Ok(state)
    });
    let log = EventLog::new();
    let outer = RunContext::new();
    let out = outer
        .run(
            &greeter,
            "hi",
            RunOptions::new()
                .events(log.clone())
                .resource(Greeting("hello"))
                .name("nested"),
        )
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "hello");
    let begin = log
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::SpanBegin(b) => Some(b),
            _ => None,
        })
        .unwrap();
    assert_eq!(begin.name, "nested");
}

#[tokio::test]
async fn a_continued_conversation_keeps_its_sources_and_other_inputs_are_marked_input() {
    let echo = echo();
    let mut state = AgentState::new(vec![ChatMessage::user("earlier")]);
    state.messages[0].set_source(Some(MessageSource::Generate));
    let continued = run(&echo, AgentInput::continued(state.clone()), ())
        .await
        .unwrap();
    assert_eq!(
        continued.state.messages[0].source(),
        Some(MessageSource::Generate)
    );
    let fresh = run(&echo, state, ()).await.unwrap();
    assert_eq!(fresh.state.messages[0].source(), Some(MessageSource::Input));
}

fn tool_choices(log: &EventLog) -> Vec<ToolChoice> {
    log.events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Model(m) => Some(m.tool_choice.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn react_offers_a_fixed_tool_choice_every_turn() {
    let model = ScriptedModel::new([call_add(1, 2), submit("3")]);
    let agent = react()
        .tools([add_tool()])
        .model(Arc::new(model))
        .tool_choice(ToolChoice::Any)
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = run(&agent, "1 + 2?", RunOptions::new().events(log.clone()))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "3");
    assert_eq!(tool_choices(&log), [ToolChoice::Any, ToolChoice::Any]);
}

#[tokio::test]
async fn react_chooses_the_tool_choice_per_turn() {
    let model = ScriptedModel::new([call_add(1, 2), submit("3")]);
    let agent = react()
        .tools([add_tool()])
        .model(Arc::new(model))
        .tool_choice(ReactToolChoice::per_turn(|turn, state| {
            // The state so far reaches the function: the first turn sees the input alone.
            if turn == 1 {
                assert_eq!(state.messages.len(), 2, "system message and input");
                ToolChoice::function("add")
            } else {
                ToolChoice::Auto
            }
        }))
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = run(&agent, "1 + 2?", RunOptions::new().events(log.clone()))
        .await
        .unwrap();
    assert_eq!(out.state.output().completion(), "3");
    assert_eq!(
        tool_choices(&log),
        [ToolChoice::function("add"), ToolChoice::Auto]
    );
    // The forced turn offered that tool alone.
    let first = log
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::Model(m) => Some(m),
            _ => None,
        })
        .unwrap();
    let offered: Vec<&str> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered, ["add"]);
}

#[test]
fn removing_messages_out_of_range_never_panics() {
    let mut list: MessageList = (0..3).map(|i| ChatMessage::user(format!("{i}"))).collect();
    assert!(list.remove(7).is_none());
    assert_eq!(list.drain(2..9).len(), 1);
    assert_eq!(list.drain(5..).len(), 0);
    assert_eq!(list.remove(0).map(|m| m.text()), Some("0".into()));
    list.retain(|m| m.text() != "1");
    assert!(list.is_empty());
    assert!(list.pop().is_none());
}

#[tokio::test]
async fn editing_in_place_is_allowed_but_growing_goes_through_the_limit() {
    let editor = agent_fn("editor", |mut state: AgentState, _cx, _args| async move {
        // In place, through the slice: allowed.
        if let Some(first) = state.messages.first_mut() {
            first.set_source(Some(MessageSource::Generate));
        }
        // Every addition is checked, `set` included.
        let mut longer = state.messages.to_vec();
        longer.extend((0..5).map(|i| ChatMessage::assistant(format!("{i}"))));
        state.messages.set(longer);
        Ok(state)
    });
    let out = run(&editor, "hi", &[message_limit(3)]).await.unwrap();
    assert_eq!(out.limit.unwrap().kind, LimitKind::Message);
    assert_eq!(out.state.messages.len(), 1);
}
