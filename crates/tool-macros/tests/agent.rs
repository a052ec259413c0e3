//! Behaviour of `#[agent]`: the generated agent's name, description and parameters, and its
//! runs with arguments, end to end.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use actuator_agent::{Agent, AgentError, AgentInput, AgentState, RunContext, RunOptions, run};
use actuator_model::ChatMessage;
use actuator_tool_macros::agent;
use serde_json::{Map, Value, json};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments are an object, not {other}"),
    }
}

/// Runs `agent` on "hi" with `args` and returns its completion, or the error's message.
fn completion(agent: &dyn Agent, arguments: Value) -> Result<String, String> {
    rt().block_on(async {
        let out = RunContext::new()
            .run(agent, "hi", RunOptions::new().args(args(arguments)))
            .await
            .map_err(|e| e.to_string())?;
        Ok(out.state.output().completion())
    })
}

// ---- free functions -------------------------------------------------------------------------

/// Repeat the last message.
///
/// Useful to test arguments.
///
/// # Arguments
/// * `times` - How many copies to write.
/// * `separator` - What goes between the copies.
/// * `suffix` - Appended at the end, when given.
///
/// # Errors
/// None: this section is for Rust readers only.
#[agent]
async fn echo(
    mut state: AgentState,
    times: u32,
    #[agent(default = " ".to_owned())] separator: String,
    suffix: Option<String>,
) -> Result<AgentState, AgentError> {
    let last = state.messages.last().map(|m| m.text()).unwrap_or_default();
    let copies = vec![last; times as usize];
    let mut text = copies.join(&separator);
    text.push_str(suffix.as_deref().unwrap_or(""));
    state.messages.push(ChatMessage::assistant(text));
    Ok(state)
}

#[test]
fn name_and_description_come_from_the_function() {
    let agent = echo_agent();
    assert_eq!(agent.name(), "echo");
    assert_eq!(
        agent.description(),
        Some("Repeat the last message.\n\nUseful to test arguments.")
    );
}

#[test]
fn parameters_have_a_schema() {
    let params = echo_agent().parameters();
    assert_eq!(params.required, ["times"]);
    insta::assert_json_snapshot!("echo_parameters", params);
}

#[test]
fn arguments_arrive_with_defaults_applied() {
    let agent = echo_agent();
    assert_eq!(completion(&agent, json!({"times": 2})).unwrap(), "hi hi");
    assert_eq!(
        completion(&agent, json!({"times": 3, "separator": "-", "suffix": "!"})).unwrap(),
        "hi-hi-hi!"
    );
}

#[test]
fn a_missing_argument_is_a_clear_error() {
    let error = completion(&echo_agent(), json!({})).unwrap_err();
    assert!(error.contains("times"), "{error}");
}

/// Answer with a fixed text.
#[agent(name = "fixed answer", description = "Always answers the same.")]
async fn fixed(mut state: AgentState) -> Result<AgentState, AgentError> {
    state.messages.push(ChatMessage::assistant("42"));
    Ok(state)
}

#[test]
fn name_and_description_can_be_overridden() {
    let agent = fixed_agent();
    assert_eq!(agent.name(), "fixed answer");
    assert_eq!(agent.description(), Some("Always answers the same."));
    assert!(agent.parameters().properties.is_empty());
    let out = rt().block_on(run(&agent, "question", &[])).unwrap();
    assert_eq!(out.state.output().completion(), "42");
}

// ---- the run context ------------------------------------------------------------------------

struct Greeting(&'static str);

/// Greet with the run's greeting, then let `fixed` answer.
///
/// # Arguments
/// * `cx` - The run (not a parameter: no schema entry).
/// * `name` - Whom to greet.
#[agent]
async fn greet(
    mut state: AgentState,
    cx: RunContext,
    name: String,
) -> Result<AgentState, AgentError> {
    let greeting = cx.resource::<Greeting>().map_or("?", |g| g.0);
    state
        .messages
        .push(ChatMessage::assistant(format!("{greeting}, {name}")));
    let inner = cx
        .run(&fixed_agent(), AgentInput::continued(state), ())
        .await?;
    Ok(inner.state)
}

#[test]
fn the_run_context_is_injected_and_not_a_parameter() {
    let agent = greet_agent();
    assert_eq!(agent.parameters().required, ["name"]);
    assert_eq!(agent.parameters().names().collect::<Vec<_>>(), ["name"]);
    let out = rt()
        .block_on(async {
            let cx = RunContext::new().with_resource(Greeting("hello"));
            cx.run(
                &agent,
                "hi",
                RunOptions::new().args(args(json!({"name": "Ada"}))),
            )
            .await
        })
        .unwrap();
    let texts: Vec<String> = out.state.messages.iter().map(ChatMessage::text).collect();
    assert_eq!(texts, ["hi", "hello, Ada", "42"]);
}

#[test]
fn run_options_pass_arguments_and_resources() {
    let agent = greet_agent();
    let options = RunOptions::new()
        .resource(Greeting("hey"))
        .args(args(json!({"name": "Grace"})));
    let out = rt().block_on(run(&agent, "hi", options)).unwrap();
    let texts: Vec<String> = out.state.messages.iter().map(ChatMessage::text).collect();
    assert_eq!(texts, ["hi", "hey, Grace", "42"]);
}

#[test]
fn a_run_with_a_wrong_argument_fails_naming_it() {
    let options = RunOptions::new().args(args(json!({"times": "two"})));
    let error = rt()
        .block_on(run(&echo_agent(), "hi", options))
        .unwrap_err();
    assert!(error.to_string().contains("times"), "{error}");
}

#[test]
fn a_run_without_a_required_argument_fails_naming_it() {
    let agent = greet_agent();
    let options = RunOptions::new().resource(Greeting("hey"));
    // `run` with no arguments in its options: the required `name` is missing.
    let error = rt().block_on(run(&agent, "hi", options)).unwrap_err();
    assert!(error.to_string().contains("name"), "{error}");
}

// ---- methods --------------------------------------------------------------------------------

struct Librarian {
    shelf: Vec<&'static str>,
}

impl Librarian {
    /// Lists the books on the shelf that contain a word.
    ///
    /// # Arguments
    /// * `word` - What the titles must contain.
    /// * `limit` - At most this many titles.
    /// * `exact` - Whether the case must match.
    #[agent(name = "librarian")]
    async fn find(
        &self,
        mut state: AgentState,
        word: String,
        #[agent(default = 10)] limit: usize,
        #[agent(default)] exact: bool,
    ) -> Result<AgentState, AgentError> {
        let matches = |title: &str| {
            if exact {
                title.contains(&word)
            } else {
                title.to_lowercase().contains(&word.to_lowercase())
            }
        };
        let found: Vec<&str> = self
            .shelf
            .iter()
            .copied()
            .filter(|title| matches(title))
            .take(limit)
            .collect();
        state
            .messages
            .push(ChatMessage::assistant(found.join(", ")));
        Ok(state)
    }
}

#[test]
fn methods_hold_their_value_in_an_arc() {
    let librarian = Arc::new(Librarian {
        shelf: vec!["Rust in Action", "Programming Rust", "Dune"],
    });
    let agent = librarian.find_agent();
    assert_eq!(agent.name(), "librarian");
    assert_eq!(agent.parameters().required, ["word"]);
    assert_eq!(agent.parameters().properties["limit"]["default"], 10);
    // `#[agent(default)]`: optional, and no `default` shown.
    assert!(
        agent.parameters().properties["exact"]
            .get("default")
            .is_none()
    );
    assert_eq!(
        completion(&agent, json!({"word": "Rust"})).unwrap(),
        "Rust in Action, Programming Rust"
    );
    assert_eq!(
        completion(&agent, json!({"word": "rust"})).unwrap(),
        "Rust in Action, Programming Rust"
    );
    assert_eq!(
        completion(&agent, json!({"word": "rust", "exact": true})).unwrap(),
        ""
    );
    assert_eq!(
        completion(&agent, json!({"word": "Rust", "limit": 1})).unwrap(),
        "Rust in Action"
    );
    // The agent keeps the librarian alive.
    drop(librarian);
    assert_eq!(completion(&agent, json!({"word": "Dune"})).unwrap(), "Dune");
}

#[test]
fn the_parameters_are_built_once() {
    let a = echo_agent().parameters();
    let b = echo_agent().parameters();
    assert_eq!(a, b);
}

// ---- visibility, cfg and the crate option ---------------------------------------------------

mod agents {
    use actuator_agent::{AgentError, AgentState};
    use actuator_tool_macros::agent;

    /// Visible outside its module, as its function is.
    #[agent(crate = ::actuator_agent)]
    pub async fn public(state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }

    /// Never compiled (`any()` is false); its constructor neither, or it would call nothing.
    #[cfg(any())]
    #[agent]
    pub async fn absent(state: AgentState) -> Result<AgentState, AgentError> {
        Ok(state)
    }
}

#[test]
fn the_constructor_follows_the_function_visibility_and_cfg() {
    let agent = agents::public_agent();
    assert_eq!(agent.name(), "public");
    let out = rt().block_on(run(&agent, "hi", &[])).unwrap();
    assert_eq!(out.state.messages.len(), 1);
}
