//! Tool sources: resolved once per turn by react and generate_loop, D7 on the result, a
//! failing source is an error for the turn.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actuator_agent::{AgentErrorKind, AgentState, GenerateLoop, RunContext, react, run};
use actuator_model::{BoxFuture, ChatMessage, FunctionModel, ModelOutput, ToolCall};
use actuator_tool_core::source::{ToolSet, ToolSetError, ToolSource, ToolSourceError};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
use serde_json::json;

fn echo(name: &str) -> ToolDef {
    let reply = format!("{name} ran");
    ToolDef::builder(name)
        .description("Says it ran.")
        .handler(move |_a: ToolArgs, _c: ToolContext| {
            let reply = reply.clone();
            async move { Ok::<_, ToolFailure>(reply) }
        })
        .build()
        .expect("valid tool")
}

/// Lists `tool_{n}` for n = 1..=k on its k-th listing, and counts listings.
struct Growing {
    listed: AtomicUsize,
    fail_on: Option<usize>,
    duplicate_of: Option<&'static str>,
}

impl Growing {
    fn new() -> Self {
        Growing {
            listed: AtomicUsize::new(0),
            fail_on: None,
            duplicate_of: None,
        }
    }
}

impl ToolSource for Growing {
    fn name(&self) -> &str {
        "growing"
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDef>, ToolSourceError>> {
        let k = self.listed.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            if self.fail_on == Some(k) {
                return Err(ToolSourceError::new("the server went away"));
            }
            let mut tools: Vec<ToolDef> = (1..=k).map(|n| echo(&format!("tool_{n}"))).collect();
            if let Some(name) = self.duplicate_of {
                tools.push(echo(name));
            }
            Ok(tools)
        })
    }
}

/// A model that calls the newest tool it is offered (by name order), then submits, and
/// records the names it was offered each turn.
fn recording_model(seen: Arc<Mutex<Vec<Vec<String>>>>) -> FunctionModel {
    FunctionModel::new("recorder", move |messages: &[ChatMessage], tools| {
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let turn = {
            let mut seen = seen.lock().expect("lock");
            seen.push(names.clone());
            seen.len()
        };
        if turn < 3 {
            let newest = names
                .iter()
                .filter(|n| n.starts_with("tool_"))
                .max()
                .cloned()
                .unwrap_or_default();
            let id = format!("c{}", messages.len());
            Ok(ModelOutput::for_tool_calls(
                "m",
                "",
                vec![ToolCall::new(id, newest, json!({}))],
            ))
        } else {
            Ok(ModelOutput::for_tool_call(
                "m",
                "submit",
                json!({"answer": "done"}),
            ))
        }
    })
}

#[tokio::test]
async fn react_resolves_sources_once_per_turn_and_runs_the_new_tools() {
    let source = Arc::new(Growing::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = react()
        .tools([echo("fixed")])
        .tool_source(source.clone())
        .model(Arc::new(recording_model(seen.clone())))
        .build()
        .expect("builds");
    let result = run(&agent, "go", &[]).await.expect("runs");
    assert_eq!(result.state.output().completion(), "done");
    // Three turns, three listings: the set grew each turn and the model saw it grow.
    assert_eq!(source.listed.load(Ordering::SeqCst), 3);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen[0], ["fixed", "submit", "tool_1"]);
    assert_eq!(seen[1], ["fixed", "submit", "tool_1", "tool_2"]);
    // The call to tool_2 (only listed on the second turn) ran.
    let texts: Vec<String> = result
        .state
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["tool_1 ran", "tool_2 ran"]);
}

#[tokio::test]
async fn a_failing_source_is_an_error_for_that_turn_with_the_state_kept() {
    let source = Arc::new(Growing {
        fail_on: Some(2),
        ..Growing::new()
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = react()
        .tool_source(source)
        .model(Arc::new(recording_model(seen)))
        .build()
        .expect("builds");
    let err = run(&agent, "go", &[]).await.expect_err("the source fails");
    match &err.kind {
        AgentErrorKind::Tools(ToolSetError::Source { source_name, error }) => {
            assert_eq!(source_name, "growing");
            assert_eq!(error.message(), "the server went away");
        }
        other => panic!("expected a tool source error, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "Tool source 'growing' could not list its tools: the server went away"
    );
    // The first turn's messages are kept: system, user, the call and its result.
    let state = err.state.expect("state kept");
    assert_eq!(state.messages.len(), 4);
}

#[tokio::test]
async fn a_source_tool_that_clashes_with_a_fixed_one_fails_the_turn_d7() {
    let source = Arc::new(Growing {
        duplicate_of: Some("submit"),
        ..Growing::new()
    });
    let agent = react()
        .tool_source(source)
        .model(Arc::new(recording_model(Arc::default())))
        .build()
        .expect("builds: the clash appears only when the source is listed");
    let err = run(&agent, "go", &[]).await.expect_err("duplicate");
    match &err.kind {
        AgentErrorKind::Tools(ToolSetError::Definition(e)) => {
            assert!(e.to_string().contains("submit"), "{e}");
        }
        other => panic!("expected a D7 error, got {other:?}"),
    }
}

#[tokio::test]
async fn generate_loop_resolves_its_sources_each_turn() {
    let source = Arc::new(Growing::new());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = recording_model(seen.clone());
    let mut state = AgentState::new(vec![ChatMessage::user("go")]);
    let options = GenerateLoop::new().tool_source(source.clone());
    // The recorder submits on turn 3; `submit` is unknown here, so that turn's call gets a
    // not-found error and the loop goes on until the model stops calling: cap it with Single.
    let options = options.tool_calls(actuator_agent::ToolCalls::Single);
    RunContext::new()
        .generate_loop(&model, &mut state, &[echo("fixed")], &options)
        .await
        .expect("runs");
    RunContext::new()
        .generate_loop(&model, &mut state, &[echo("fixed")], &options)
        .await
        .expect("runs");
    assert_eq!(source.listed.load(Ordering::SeqCst), 2);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen[0], ["fixed", "tool_1"]);
    assert_eq!(seen[1], ["fixed", "tool_1", "tool_2"]);
}

#[tokio::test]
async fn resolve_keeps_the_order_given_and_checks_the_set() {
    let set = ToolSet::new()
        .tool(echo("a"))
        .source(Arc::new(Growing::new()))
        .tool(echo("z"));
    let names: Vec<String> = set
        .resolve()
        .await
        .expect("resolves")
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["a", "tool_1", "z"]);
    let clash = ToolSet::new()
        .tool(echo("tool_1"))
        .source(Arc::new(Growing::new()));
    assert!(matches!(
        clash.resolve().await,
        Err(ToolSetError::Definition(_))
    ));
}
