//! [`run`]: run an agent on an input under limits.

use std::sync::Arc;

use actuator_events::EventSink;
use actuator_model::{ChatMessage, MessageSource};
use actuator_tool_core::{ArgumentValidator, Extensions};
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::agent::{Agent, AgentError, AgentErrorKind};
use crate::context::RunContext;
use crate::limits::{Limit, LimitExceeded, LimitUsage};
use crate::messages::MessageList;
use crate::state::AgentState;

/// What an agent runs on: a string (one user message), messages, or a state.
#[derive(Debug, Clone)]
// A transient argument, consumed at once: boxing the state would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum AgentInput {
    /// A user message.
    Text(String),
    /// Messages.
    Messages(Vec<ChatMessage>),
    /// A state (its explicit output is not carried over).
    State(AgentState),
}

impl From<&str> for AgentInput {
    fn from(t: &str) -> Self {
        AgentInput::Text(t.to_owned())
    }
}
impl From<String> for AgentInput {
    fn from(t: String) -> Self {
        AgentInput::Text(t)
    }
}
impl From<Vec<ChatMessage>> for AgentInput {
    fn from(m: Vec<ChatMessage>) -> Self {
        AgentInput::Messages(m)
    }
}
impl From<MessageList> for AgentInput {
    fn from(m: MessageList) -> Self {
        AgentInput::Messages(m.into_vec())
    }
}
impl From<&[ChatMessage]> for AgentInput {
    fn from(m: &[ChatMessage]) -> Self {
        AgentInput::Messages(m.to_vec())
    }
}
impl From<AgentState> for AgentInput {
    fn from(s: AgentState) -> Self {
        AgentInput::State(s)
    }
}
impl From<&AgentState> for AgentInput {
    fn from(s: &AgentState) -> Self {
        AgentInput::Messages(s.messages.to_vec())
    }
}

impl AgentInput {
    /// The state an agent starts from: the messages, each marked `source = input`.
    pub fn into_state(self) -> AgentState {
        let mut messages = match self {
            AgentInput::Text(t) => vec![ChatMessage::user(t)],
            AgentInput::Messages(m) => m,
            AgentInput::State(s) => s.messages.into_vec(),
        };
        for m in &mut messages {
            m.set_source(Some(MessageSource::Input));
        }
        AgentState::new(messages)
    }
}

/// The result of [`run`]: the final state, the limit that stopped the agent, if one did, and
/// what the run used.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentRun {
    /// The final (or partial) state.
    pub state: AgentState,
    /// The run's own limit that stopped it.
    pub limit: Option<LimitExceeded>,
    /// What the run used: messages, tokens, turns, time, working time and cost.
    pub usage: LimitUsage,
    /// The id of the run's `agent` span (its begin and end events carry it).
    pub span_id: String,
}

/// Runs `agent` on `input` under `limits`, with a fresh root context.
///
/// The agent works on a copy: the caller's input never changes. Limits given here are caught
/// here (the partial state is returned with the limit); any other error propagates.
pub async fn run(
    agent: &dyn Agent,
    input: impl Into<AgentInput>,
    limits: &[Limit],
) -> Result<AgentRun, AgentError> {
    RunContext::new()
        .run(agent, input, limits, Map::new())
        .await
}

/// How [`run_with`] runs an agent: its limits, where its events go, and the resources its
/// tools reach (a sandbox, an MCP session, a user's own state).
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::{RunOptions, agent_fn, run_with, turn_limit};
/// use actuator_events::{Event, EventLog};
///
/// struct Greeting(&'static str);
/// let greeter = agent_fn("greeter", |mut state: actuator_agent::AgentState, cx, _args| async move {
///     let text = cx.resource::<Greeting>().map_or("?", |g| g.0);
///     state.messages.push(actuator_model::ChatMessage::assistant(text));
///     Ok(state)
/// });
/// let log = EventLog::new();
/// let options = RunOptions::new()
///     .limits([turn_limit(5)])
///     .events(log.clone())
///     .resource(Greeting("hello"));
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let out = run_with(&greeter, "hi", options).await.unwrap();
/// assert_eq!(out.state.output().completion(), "hello");
/// assert!(matches!(log.events().first(), Some(Event::SpanBegin(_))));
/// # });
/// ```
#[derive(Clone, Default)]
pub struct RunOptions {
    limits: Vec<Limit>,
    events: Option<Arc<dyn EventSink>>,
    resources: Extensions,
    args: Map<String, Value>,
    name: Option<String>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("limits", &self.limits)
            .field("events", &self.events.is_some())
            .field("resources", &self.resources)
            .field("args", &self.args)
            .field("name", &self.name)
            .finish()
    }
}

impl RunOptions {
    /// No limits, no event sink, no resources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds limits of the run (caught by it: the partial state comes back with the limit).
    #[must_use]
    pub fn limits(mut self, limits: impl IntoIterator<Item = Limit>) -> Self {
        self.limits.extend(limits);
        self
    }

    /// Sends the run's events (and those of every agent and tool inside it) to `sink`.
    #[must_use]
    pub fn events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// Adds a run resource (see [`RunContext::with_resource`]).
    #[must_use]
    pub fn resource<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.resources.insert(value);
        self
    }

    /// An argument of the agent (one of its [`parameters`](Agent::parameters)). The arguments
    /// are validated against the agent's parameter schema before it runs.
    #[must_use]
    pub fn arg(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.args.insert(name.into(), value.into());
        self
    }

    /// The agent's arguments (replacing any given before).
    #[must_use]
    pub fn args(mut self, args: Map<String, Value>) -> Self {
        self.args = args;
        self
    }

    /// The name of the run's span (default: the agent's name).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Checks `args` against the agent's parameter schema: missing required arguments, unknown
/// ones and wrong types are a configuration error in the reference's validation wording.
fn check_args(agent: &dyn Agent, args: &Map<String, Value>) -> Result<(), AgentError> {
    let params = agent.parameters();
    if args.is_empty() && params.required.is_empty() {
        return Ok(());
    }
    let invalid = |message: String| {
        AgentError::config(format!(
            "Invalid arguments for agent '{}': {message}",
            agent.name()
        ))
    };
    let validator =
        ArgumentValidator::new(agent.name(), &params).map_err(|e| invalid(e.to_string()))?;
    validator
        .validate(&Value::Object(args.clone()))
        .map_err(|e| invalid(e.message().to_owned()))
}

/// Runs `agent` on `input` with `options`: like [`run`], with an event sink, run resources,
/// the agent's arguments (validated against its parameters first) and a span name.
///
/// ```
/// use actuator_agent::{AgentState, RunOptions, agent_fn, run_with};
/// use actuator_tool_core::ToolParams;
///
/// let params = ToolParams::from_value(&serde_json::json!({
///     "properties": {"times": {"type": "integer", "description": "How often."}},
///     "required": ["times"]
/// })).unwrap();
/// let repeat = agent_fn("repeat", |mut state: AgentState, _cx, args| async move {
///     let times = args["times"].as_u64().unwrap_or(0) as usize;
///     state.messages.push(actuator_model::ChatMessage::assistant("echo ".repeat(times)));
///     Ok(state)
/// })
/// .with_parameters(params);
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let out = run_with(&repeat, "hi", RunOptions::new().arg("times", 2)).await.unwrap();
/// assert_eq!(out.state.output().completion(), "echo echo ");
/// let err = run_with(&repeat, "hi", RunOptions::new().arg("times", "two")).await.unwrap_err();
/// assert!(err.to_string().contains("'two' is not of type 'integer'"), "{err}");
/// # });
/// ```
pub async fn run_with(
    agent: &dyn Agent,
    input: impl Into<AgentInput>,
    options: RunOptions,
) -> Result<AgentRun, AgentError> {
    check_args(agent, &options.args)?;
    let mut cx = RunContext::new();
    if let Some(sink) = options.events {
        cx = cx.with_event_sink(sink);
    }
    if !options.resources.is_empty() {
        cx = cx.with_resources(&options.resources);
    }
    cx.run_in_span(
        agent,
        input.into().into_state(),
        &options.limits,
        options.args,
        options.name.as_deref(),
    )
    .await
}

impl RunContext {
    /// Runs `agent` inside this context (so enclosing limits still apply) with its own
    /// `limits` and extra `args`. See [`run`].
    pub async fn run(
        &self,
        agent: &dyn Agent,
        input: impl Into<AgentInput>,
        limits: &[Limit],
        args: Map<String, Value>,
    ) -> Result<AgentRun, AgentError> {
        self.run_state(agent, input.into().into_state(), limits, args)
            .await
    }

    /// Like [`RunContext::run`], but the state is used as it is (message sources are not
    /// changed): for agents that continue a conversation, as handoff does.
    pub async fn run_state(
        &self,
        agent: &dyn Agent,
        state: AgentState,
        limits: &[Limit],
        args: Map<String, Value>,
    ) -> Result<AgentRun, AgentError> {
        self.run_in_span(agent, state, limits, args, None).await
    }

    /// [`RunContext::run_state`] with the span named `name` (default: the agent's name).
    async fn run_in_span(
        &self,
        agent: &dyn Agent,
        mut state: AgentState,
        limits: &[Limit],
        args: Map<String, Value>,
        name: Option<&str>,
    ) -> Result<AgentRun, AgentError> {
        let scoped = self.scoped(limits);
        let (cx, span_guard) = scoped.span("agent", name.unwrap_or(agent.name()));
        let span = span_guard.tracing_span().clone();
        // Kept only when the agent could be cut off by its own time limit without handing back
        // its state.
        let fallback = cx.own_deadline().map(|_| state.clone());
        // The conversation enforces the run's message limit as messages are added.
        state.attach(&cx);
        let work = agent.run(state, cx.clone(), args);
        let result = match cx.own_deadline() {
            None => work.instrument(span).await,
            Some(at) => match tokio::time::timeout_at(at, work.instrument(span)).await {
                Ok(r) => r,
                Err(_) => match cx.own_time_exceeded() {
                    Some(exceeded) => Err(AgentError {
                        kind: AgentErrorKind::Limit(exceeded),
                        state: fallback.map(Box::new),
                    }),
                    None => Err(AgentError::new(AgentErrorKind::Failed(
                        "the agent timed out".into(),
                    ))),
                },
            },
        };
        // A message limit an addition exceeded ends the run even when the agent went on.
        let result = result.and_then(|state| match cx.check_violation() {
            Ok(()) => Ok(state),
            Err(e) => Err(AgentError::with_state(e, state)),
        });
        let usage = cx.usage();
        let span_id = cx.span_id().unwrap_or_default().to_owned();
        match result {
            Ok(mut state) => {
                state.detach();
                Ok(AgentRun {
                    state,
                    limit: None,
                    usage,
                    span_id,
                })
            }
            Err(AgentError {
                kind: AgentErrorKind::Limit(exceeded),
                state: partial,
            }) if cx.owns(&exceeded) => {
                let mut state = partial.map(|s| *s).unwrap_or_default();
                state.detach();
                Ok(AgentRun {
                    state,
                    limit: Some(exceeded),
                    usage,
                    span_id,
                })
            }
            Err(mut e) => {
                if let Some(state) = e.state.as_deref_mut() {
                    state.detach();
                }
                Err(e)
            }
        }
    }
}
