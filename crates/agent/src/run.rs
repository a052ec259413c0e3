//! [`run`]: run an agent on an input under limits.

use std::sync::Arc;

use actuator_events::EventSink;
use actuator_model::{ChatMessage, MessageSource};
use actuator_tool_core::{ArgumentValidator, Extensions, ToolRequirement};
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::agent::Agent;
use crate::context::RunContext;
use crate::end::RunEnd;
use crate::error::{AgentError, AgentErrorKind};
use crate::limits::{Limit, LimitExceeded, LimitUsage};
use crate::messages::MessageList;
use crate::state::AgentState;

/// What an agent runs on: a string (one user message), messages, or a state. Each becomes a
/// conversation whose messages are marked `source = input`, except
/// [`AgentInput::Continued`], which continues a conversation as it is.
#[derive(Debug, Clone)]
// A transient argument, consumed at once: boxing the state would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum AgentInput {
    /// A user message.
    Text(String),
    /// Messages.
    Messages(Vec<ChatMessage>),
    /// A state (its explicit output is not carried over).
    State(AgentState),
    /// A conversation continued as it is (message sources and explicit output unchanged), as
    /// handoff and `as_solver` do: the agent takes over where another left off.
    Continued(AgentState),
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
    /// A conversation continued as it is ([`AgentInput::Continued`]).
    pub fn continued(state: AgentState) -> Self {
        AgentInput::Continued(state)
    }

    /// The state an agent starts from: the messages, each marked `source = input` (a
    /// [`Continued`](AgentInput::Continued) state as it is).
    pub fn into_state(self) -> AgentState {
        let mut messages = match self {
            AgentInput::Text(t) => vec![ChatMessage::user(t)],
            AgentInput::Messages(m) => m,
            AgentInput::State(s) => s.messages.into_vec(),
            AgentInput::Continued(s) => return s,
        };
        for m in &mut messages {
            m.set_source(Some(MessageSource::Input));
        }
        AgentState::new(messages)
    }
}

/// The result of [`run`]: how the run ended, the final state, the limit that stopped the
/// agent, if one did, and what the run used.
///
/// Match on [`end`](AgentRun::end) (or call [`answer`](AgentRun::answer)) before reading the
/// output as an answer: a run stopped by a limit or by the model's context window returns
/// `Ok` too, and its output's text is then not an answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentRun {
    /// How the run ended: submitted, completed, stopped by a limit (which one), out of
    /// context window, refused, or without an answer.
    pub end: RunEnd,
    /// The final (or partial) state.
    pub state: AgentState,
    /// The run's own limit that stopped it.
    pub limit: Option<LimitExceeded>,
    /// What the run used: messages, tokens, turns, time, working time and cost.
    pub usage: LimitUsage,
    /// The id of the run's `agent` span (its begin and end events carry it).
    pub span_id: String,
}

impl AgentRun {
    /// The answer, when the run gave one ([`RunEnd::Submitted`] or [`RunEnd::Completed`]):
    /// `None` when a limit, the context window or a refusal ended it.
    pub fn answer(&self) -> Option<&str> {
        self.end.answer()
    }
}

/// Runs `agent` on `input` with `options` (limits, where events go, the resources its tools
/// reach, the agent's arguments, the span's name), in a fresh root context: the one way to run
/// an agent. `options` is a [`RunOptions`], or `()` / `&[]` for none, or limits alone
/// (`&[turn_limit(10)]`, a `Vec<Limit>`, one `Limit`). From inside a run (a tool or an agent
/// running another agent), use [`RunContext::run`], which keeps the enclosing run's limits,
/// events and resources.
///
/// The agent works on a copy: the caller's input never changes. The arguments are validated
/// against the agent's parameters first, and a run whose tools need a resource it lacks (a
/// sandbox for `bash`) is refused with an error naming the tool (see
/// [`RunOptions::allow_missing_resources`]). Limits given here are caught here (the partial state
/// is returned with the limit); any other error propagates.
///
/// ```
/// use actuator_agent::{AgentState, RunOptions, agent_fn, run, limits::turn_limit};
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
/// let out = run(&repeat, "hi", RunOptions::new().arg("times", 2)).await.unwrap();
/// assert_eq!(out.state.output().completion(), "echo echo ");
/// let err = run(&repeat, "hi", RunOptions::new().arg("times", "two")).await.unwrap_err();
/// assert!(err.to_string().contains("'two' is not of type 'integer'"), "{err}");
///
/// let echo = agent_fn("echo", |state: AgentState, _cx, _args| async move { Ok(state) });
/// let out = run(&echo, "hi", &[turn_limit(3)]).await.unwrap(); // limits alone
/// assert!(out.limit.is_none());
/// let out = run(&echo, "hi", ()).await.unwrap(); // nothing
/// assert_eq!(out.state.messages.len(), 1);
/// # });
/// ```
pub async fn run(
    agent: &dyn Agent,
    input: impl Into<AgentInput>,
    options: impl Into<RunOptions>,
) -> Result<AgentRun, AgentError> {
    RunContext::new().run(agent, input, options).await
}

/// How [`run`] runs an agent: its limits, where its events go, and the resources its
/// tools reach (a sandbox, an MCP session, a user's own state).
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::{RunOptions, agent_fn, run, limits::turn_limit};
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
/// let out = run(&greeter, "hi", options).await.unwrap();
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
    tool_call_id: Option<Arc<str>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("limits", &self.limits)
            .field("events", &self.events.is_some())
            .field("resources", &self.resources)
            .field("args", &self.args)
            .field("name", &self.name)
            .field("tool_call_id", &self.tool_call_id)
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

    /// Runs the agent even when its tools need a resource the run lacks (see
    /// [`Agent::requirements`]): such a tool then fails each call with its own error, which
    /// only the model reads (the reference's behaviour, where `bash` without a sandbox tells
    /// the model "No sandbox environment has been provided…"). Without this, the run is
    /// refused before it starts with an error naming the tool and how to provide what it
    /// needs. Nested runs inherit the choice.
    ///
    /// ```
    /// use actuator_agent::{AgentState, RunOptions, agent_fn, run};
    /// use actuator_tool_core::{ResourceRequirement, ToolRequirement};
    ///
    /// struct Database;
    /// struct NeedsDatabase(actuator_agent::FnAgent);
    /// impl actuator_agent::Agent for NeedsDatabase {
    ///     fn name(&self) -> &str { "reporter" }
    ///     fn requirements(&self) -> Vec<ToolRequirement> {
    ///         let needs = ResourceRequirement::of::<Database>("a database", "add one with RunOptions::resource");
    ///         vec![ToolRequirement::new("query", needs)]
    ///     }
    ///     fn run(&self, s: AgentState, cx: actuator_agent::RunContext, a: serde_json::Map<String, serde_json::Value>)
    ///         -> actuator_model::BoxFuture<'_, Result<AgentState, actuator_agent::AgentError>> {
    ///         self.0.run(s, cx, a)
    ///     }
    /// }
    /// let agent = NeedsDatabase(agent_fn("reporter", |s: AgentState, _cx, _a| async move { Ok(s) }));
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let refused = run(&agent, "hi", ()).await.unwrap_err();
    /// assert!(refused.to_string().contains("the tool 'query' needs a database"), "{refused}");
    /// let ran = run(&agent, "hi", RunOptions::new().allow_missing_resources()).await;
    /// assert!(ran.is_ok());
    /// # });
    /// ```
    #[must_use]
    pub fn allow_missing_resources(mut self) -> Self {
        self.resources.insert(MissingResourcesAllowed);
        self
    }

    /// The name of the run's span (default: the agent's name).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The tool call that starts this run (a tool that runs an agent, as `as_tool` and
    /// handoffs do): the run's span begin event names it, so a live view
    /// ([`EventStream`](actuator_events::EventStream)) places the nested run under the call.
    ///
    /// ```
    /// use actuator_agent::{AgentState, RunContext, RunOptions, agent_fn};
    /// use actuator_events::{Event, EventLog};
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let echo = agent_fn("echo", |state: AgentState, _cx, _args| async move { Ok(state) });
    /// let log = EventLog::new();
    /// let cx = RunContext::with_events(log.clone());
    /// cx.run(&echo, "hi", RunOptions::new().tool_call_id("call_1")).await.unwrap();
    /// let Some(Event::SpanBegin(begin)) = log.events().into_iter().next() else { panic!() };
    /// assert_eq!(begin.tool_call_id.as_deref(), Some("call_1"));
    /// # });
    /// ```
    #[must_use]
    pub fn tool_call_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }
}

impl From<()> for RunOptions {
    /// No options.
    fn from((): ()) -> Self {
        RunOptions::new()
    }
}

impl From<&[Limit]> for RunOptions {
    /// These limits alone.
    fn from(limits: &[Limit]) -> Self {
        RunOptions::new().limits(limits.iter().copied())
    }
}

impl<const N: usize> From<&[Limit; N]> for RunOptions {
    /// These limits alone.
    fn from(limits: &[Limit; N]) -> Self {
        RunOptions::new().limits(limits.iter().copied())
    }
}

impl<const N: usize> From<[Limit; N]> for RunOptions {
    /// These limits alone.
    fn from(limits: [Limit; N]) -> Self {
        RunOptions::new().limits(limits)
    }
}

impl From<Vec<Limit>> for RunOptions {
    /// These limits alone.
    fn from(limits: Vec<Limit>) -> Self {
        RunOptions::new().limits(limits)
    }
}

impl From<Limit> for RunOptions {
    /// This limit alone.
    fn from(limit: Limit) -> Self {
        RunOptions::new().limits([limit])
    }
}

/// The mark [`RunOptions::allow_missing_resources`] leaves in a run's resources (so nested
/// runs inherit it).
struct MissingResourcesAllowed;

/// Refuses to run `agent` when one of its tools needs a resource `resources` lacks, naming the
/// tool and how to provide it.
fn check_resources(agent: &dyn Agent, resources: &Extensions) -> Result<(), AgentError> {
    if resources.get::<MissingResourcesAllowed>().is_some() {
        return Ok(());
    }
    let missing: Vec<String> = agent
        .requirements()
        .iter()
        .filter(|need| !need.requirement.is_met_by(resources))
        .map(ToolRequirement::missing_message)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(AgentError::config(format!(
        "Cannot run agent '{}': {}. (RunOptions::allow_missing_resources() runs it anyway: each \
         call of such a tool then fails with an error only the model reads.)",
        agent.name(),
        missing.join("; ")
    )))
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

impl RunContext {
    /// This context, where runs start even when their agent's tools need a resource the run
    /// lacks (what [`RunOptions::allow_missing_resources`] does for one run; an evaluation
    /// gives it to every sample when asked to).
    pub fn allowing_missing_resources(&self) -> RunContext {
        self.with_resource(MissingResourcesAllowed)
    }

    /// Runs `agent` inside this run, as a tool or an agent that runs another agent does: the
    /// enclosing run's limits still apply (and its events and resources reach the nested run),
    /// the nested run's own `options` add to them (limits caught by the nested run, another
    /// event sink, more resources, the agent's arguments, validated first, a span name). See
    /// [`run`] for what `options` can be.
    ///
    /// Give [`AgentInput::continued`] to continue a conversation as it is (handoff).
    ///
    /// ```
    /// use actuator_agent::{AgentState, RunContext, RunOptions, agent_fn, limits::turn_limit};
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let echo = agent_fn("echo", |state: AgentState, _cx, _args| async move { Ok(state) });
    /// let outer = RunContext::new().scoped(&[turn_limit(5)]);
    /// let out = outer.run(&echo, "hi", RunOptions::new().name("inner")).await.unwrap();
    /// assert_eq!(out.state.messages.len(), 1);
    /// # });
    /// ```
    pub async fn run(
        &self,
        agent: &dyn Agent,
        input: impl Into<AgentInput>,
        options: impl Into<RunOptions>,
    ) -> Result<AgentRun, AgentError> {
        let options = options.into();
        check_args(agent, &options.args)?;
        let extended;
        let cx = if options.events.is_some() || !options.resources.is_empty() {
            let mut cx = self.clone();
            if let Some(sink) = options.events {
                cx = cx.with_event_sink(sink);
            }
            if !options.resources.is_empty() {
                cx = cx.with_resources(&options.resources);
            }
            extended = cx;
            &extended
        } else {
            self
        };
        check_resources(agent, cx.resources())?;
        cx.run_in_span(
            agent,
            input.into().into_state(),
            &options.limits,
            options.args,
            options.name.as_deref(),
            options.tool_call_id,
        )
        .await
    }

    /// Runs `agent` on `state` in a new scope holding `limits`, in a span named `name`
    /// (default: the agent's name).
    async fn run_in_span(
        &self,
        agent: &dyn Agent,
        mut state: AgentState,
        limits: &[Limit],
        args: Map<String, Value>,
        name: Option<&str>,
        tool_call_id: Option<Arc<str>>,
    ) -> Result<AgentRun, AgentError> {
        let scoped = self.scoped(limits).for_run();
        let (cx, span_guard) =
            scoped.span_of_call("agent", name.unwrap_or(agent.name()), tool_call_id);
        let span = span_guard.tracing_span().clone();
        // Kept only when the agent could be cut off by its own time limit without handing back
        // its state.
        let fallback = cx.own_deadline().map(|_| state.clone());
        // The conversation enforces the run's message limit as messages are added.
        state.attach(cx.budget());
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
                    end: RunEnd::of(&state, None, cx.submitted()),
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
                    end: RunEnd::of(&state, Some(&exceeded), cx.submitted()),
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
