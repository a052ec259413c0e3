//! The [`Agent`] trait, and agents from closures.

use std::future::Future;
use std::sync::Arc;

use actuator_model::BoxFuture;
use actuator_tool_core::{ToolParams, ToolRequirement};
use serde_json::{Map, Value};

use crate::context::RunContext;
use crate::error::AgentError;
use crate::state::AgentState;

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

    /// The run resources the agent's tools cannot work without (a sandbox for `bash`):
    /// [`run`](crate::run) refuses to start the agent in a run that lacks one. Default: none.
    /// React reports its fixed tools' requirements (tools from a
    /// [`ToolSource`](actuator_tool_core::ToolSource) are known only at each turn).
    fn requirements(&self) -> Vec<ToolRequirement> {
        Vec::new()
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
    fn requirements(&self) -> Vec<ToolRequirement> {
        (**self).requirements()
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
    fn requirements(&self) -> Vec<ToolRequirement> {
        self.inner.requirements()
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
