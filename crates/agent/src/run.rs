//! [`run`]: run an agent on an input under limits.

use actuator_model::{ChatMessage, MessageSource};
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::agent::{Agent, AgentError, AgentErrorKind};
use crate::limits::{Limit, LimitExceeded, RunContext};
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
        AgentInput::Messages(s.messages.clone())
    }
}

impl AgentInput {
    /// The state an agent starts from: the messages, each marked `source = input`.
    pub fn into_state(self) -> AgentState {
        let mut messages = match self {
            AgentInput::Text(t) => vec![ChatMessage::user(t)],
            AgentInput::Messages(m) => m,
            AgentInput::State(s) => s.messages,
        };
        for m in &mut messages {
            m.set_source(Some(MessageSource::Input));
        }
        AgentState::new(messages)
    }
}

/// The result of [`run`]: the final state, and the limit that stopped the agent, if one did.
#[derive(Debug, Clone)]
pub struct AgentRun {
    /// The final (or partial) state.
    pub state: AgentState,
    /// The run's own limit that stopped it.
    pub limit: Option<LimitExceeded>,
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
        let scoped = self.scoped(limits);
        let (cx, _span) = scoped.span("agent", agent.name());
        let span = tracing::info_span!("agent", name = agent.name());
        // Kept only when the agent could be cut off by its own time limit without handing back
        // its state.
        let fallback = cx.own_deadline().map(|_| state.clone());
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
        match result {
            Ok(state) => Ok(AgentRun { state, limit: None }),
            Err(AgentError {
                kind: AgentErrorKind::Limit(exceeded),
                state: partial,
            }) if exceeded.is_from(&cx) => Ok(AgentRun {
                state: partial.map(|s| *s).unwrap_or_default(),
                limit: Some(exceeded),
            }),
            Err(e) => Err(e),
        }
    }
}
