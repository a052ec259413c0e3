//! The [`Agent`] trait, its errors, and agents from closures.

use std::future::Future;
use std::sync::Arc;

use actuator_exec::ExecError;
use actuator_model::{BoxFuture, ModelError};
use actuator_tool_core::ToolParams;
use serde_json::{Map, Value};

use crate::context::RunContext;
use crate::limits::LimitExceeded;
use crate::state::AgentState;

/// Why an agent stopped with an error.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AgentErrorKind {
    /// A limit was exceeded.
    #[error(transparent)]
    Limit(#[from] LimitExceeded),
    /// A generation failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Tool execution stopped the run (a fatal tool error, a panic, a termination). An
    /// enclosing run's limit hit inside a tool is [`AgentErrorKind::Limit`] instead.
    #[error(transparent)]
    Exec(ExecError),
    /// The turn's tools could not be resolved: a [`ToolSource`](crate::ToolSource) failed to
    /// list its tools, or the resolved set is invalid (a duplicate name, D7).
    #[error(transparent)]
    Tools(#[from] actuator_tool_core::source::ToolSetError),
    /// The agent was configured wrongly.
    #[error("{0}")]
    Config(String),
    /// Any other failure.
    #[error("{0}")]
    Failed(String),
}

impl From<ExecError> for AgentErrorKind {
    /// A limit that stopped execution is that limit, so the scope it belongs to catches it
    /// (D9); anything else is an execution error.
    fn from(e: ExecError) -> Self {
        match e {
            ExecError::Limit { limit, .. } => AgentErrorKind::Limit(*limit),
            other => AgentErrorKind::Exec(other),
        }
    }
}

/// An agent stopped with an error. Carries the state as it was when it stopped, so nothing
/// done before the error is lost.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind}")]
pub struct AgentError {
    /// What went wrong.
    pub kind: AgentErrorKind,
    /// The state when it happened, when the agent had one.
    pub state: Option<Box<AgentState>>,
}

impl AgentError {
    /// An error without a state.
    pub fn new(kind: impl Into<AgentErrorKind>) -> Self {
        AgentError {
            kind: kind.into(),
            state: None,
        }
    }

    /// An error carrying the state it happened in.
    pub fn with_state(kind: impl Into<AgentErrorKind>, state: AgentState) -> Self {
        AgentError {
            kind: kind.into(),
            state: Some(Box::new(state)),
        }
    }

    /// This error with `state` attached, unless it already carries one (the state closest to
    /// where it happened wins).
    #[must_use]
    pub fn or_state(mut self, state: &AgentState) -> Self {
        if self.state.is_none() {
            self.state = Some(Box::new(state.clone()));
        }
        self
    }

    /// A configuration error.
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(AgentErrorKind::Config(message.into()))
    }

    /// The limit exceeded, when that is the error.
    pub fn limit(&self) -> Option<&LimitExceeded> {
        match &self.kind {
            AgentErrorKind::Limit(l) => Some(l),
            _ => None,
        }
    }
}

impl From<LimitExceeded> for AgentError {
    fn from(e: LimitExceeded) -> Self {
        AgentError::new(e)
    }
}

impl From<ModelError> for AgentError {
    fn from(e: ModelError) -> Self {
        AgentError::new(e)
    }
}

impl From<ExecError> for AgentError {
    fn from(e: ExecError) -> Self {
        AgentError::new(e)
    }
}

/// An agent: runs over an [`AgentState`] and returns the new state or an error.
///
/// Object-safe, so agents are held as `Arc<dyn Agent>`. `args` are the agent's own extra
/// parameters (see [`Agent::parameters`]), which handoff and `as_tool` expose to models.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an Agent",
    note = "implement `actuator_agent::Agent`, build one with `react()`, or wrap a closure with `agent_fn`"
)]
pub trait Agent: Send + Sync {
    /// The display name (used for spans, handoff texts and the `[name]` prefix).
    fn name(&self) -> &str;

    /// The agent's own name, whatever display name it is given (`agent_with`): the
    /// reference's registry name, which tool names fall back to when the display name has no
    /// usable characters. Defaults to [`name`](Agent::name).
    fn own_name(&self) -> &str {
        self.name()
    }

    /// What the agent does (used by handoff and `as_tool`).
    fn description(&self) -> Option<&str> {
        None
    }

    /// The agent's extra parameters, beyond the conversation (default: none).
    fn parameters(&self) -> ToolParams {
        ToolParams::default()
    }

    /// Runs the agent.
    fn run(
        &self,
        state: AgentState,
        cx: RunContext,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>>;
}

impl<A: Agent + ?Sized> Agent for Arc<A> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn own_name(&self) -> &str {
        (**self).own_name()
    }
    fn description(&self) -> Option<&str> {
        (**self).description()
    }
    fn parameters(&self) -> ToolParams {
        (**self).parameters()
    }
    fn run(
        &self,
        state: AgentState,
        cx: RunContext,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>> {
        (**self).run(state, cx, args)
    }
}

type AgentFn = dyn Fn(
        AgentState,
        RunContext,
        Map<String, Value>,
    ) -> BoxFuture<'static, Result<AgentState, AgentError>>
    + Send
    + Sync;

/// An agent made from a closure.
pub struct FnAgent {
    name: String,
    description: Option<String>,
    parameters: ToolParams,
    f: Arc<AgentFn>,
}

impl std::fmt::Debug for FnAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnAgent")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// Makes an agent from a closure.
///
/// ```
/// use actuator_agent::{AgentState, agent_fn, run};
/// use actuator_model::ChatMessage;
///
/// let echo = agent_fn("echo", |mut state: AgentState, _cx, _args| async move {
///     let last = state.messages.last().map(|m| m.text()).unwrap_or_default();
///     state.messages.push(ChatMessage::assistant(last));
///     Ok(state)
/// });
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let out = run(&echo, "hello", &[]).await.unwrap();
/// assert_eq!(out.state.output().completion(), "hello");
/// # });
/// ```
pub fn agent_fn<F, Fut>(name: impl Into<String>, f: F) -> FnAgent
where
    F: Fn(AgentState, RunContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentState, AgentError>> + Send + 'static,
{
    FnAgent {
        name: name.into(),
        description: None,
        parameters: ToolParams::default(),
        f: Arc::new(move |s, cx, a| Box::pin(f(s, cx, a))),
    }
}

impl FnAgent {
    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares the agent's extra parameters.
    #[must_use]
    pub fn with_parameters(mut self, parameters: ToolParams) -> Self {
        self.parameters = parameters;
        self
    }
}

impl Agent for FnAgent {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    fn parameters(&self) -> ToolParams {
        self.parameters.clone()
    }
    fn run(
        &self,
        state: AgentState,
        cx: RunContext,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>> {
        (self.f)(state, cx, args)
    }
}

/// An agent with another display name and description; everything else is the wrapped agent's.
#[derive(Clone)]
pub struct AgentWith {
    inner: Arc<dyn Agent>,
    name: String,
    description: Option<String>,
}

impl std::fmt::Debug for AgentWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentWith")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// Changes only an agent's display name and description.
pub fn agent_with(
    agent: Arc<dyn Agent>,
    name: Option<&str>,
    description: Option<&str>,
) -> AgentWith {
    AgentWith {
        name: name.map_or_else(|| agent.name().to_owned(), str::to_owned),
        description: description
            .map(str::to_owned)
            .or_else(|| agent.description().map(str::to_owned)),
        inner: agent,
    }
}

impl Agent for AgentWith {
    fn name(&self) -> &str {
        &self.name
    }
    fn own_name(&self) -> &str {
        self.inner.own_name()
    }
    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    fn parameters(&self) -> ToolParams {
        self.inner.parameters()
    }
    fn run(
        &self,
        state: AgentState,
        cx: RunContext,
        args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>> {
        self.inner.run(state, cx, args)
    }
}
