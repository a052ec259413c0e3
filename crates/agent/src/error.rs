//! [`AgentError`]: why an agent stopped, with the state it had, so nothing done before an error
//! is lost.

use actuator_exec::ExecError;
use actuator_model::ModelError;

use crate::limits::LimitExceeded;
use crate::state::AgentState;
use actuator_tool_core::source::ToolSetError;

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
    /// The turn's tools could not be resolved: a [`ToolSource`](actuator_tool_core::source::ToolSource) failed to
    /// list its tools, or the resolved set is invalid (a duplicate name, D7).
    #[error(transparent)]
    Tools(#[from] ToolSetError),
    /// The agent was configured wrongly.
    #[error("{0}")]
    Config(String),
    /// The model's tool calls were malformed (arguments that are not JSON, or a tool that
    /// does not exist) turn after turn, past the agent's bound on re-asking
    /// (`ReactBuilder::malformed_call_retries`).
    #[error(
        "the model's tool calls were malformed {turns} turns in a row, so the run stopped rather than ask again; the last error was: {last}. Use a model that follows the tools' schemas, or raise the bound with ReactBuilder::malformed_call_retries"
    )]
    MalformedCalls {
        /// The malformed turns in a row.
        turns: u32,
        /// The error the model was last told (the reference's parsing error).
        last: String,
    },
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
///
/// It reads as its [`kind`](AgentError::kind), and its causes are the kind's: a provider's
/// connection error keeps the transport's reason (`Connection refused`) in the chain
/// (`ErrorChain`, `anyhow`'s `{:#}`).
#[derive(Debug, Clone)]
pub struct AgentError {
    /// What went wrong.
    pub kind: AgentErrorKind,
    /// The state when it happened, when the agent had one.
    pub state: Option<Box<AgentState>>,
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.kind.fmt(f)
    }
}

impl std::error::Error for AgentError {
    // The kind is shown as this error, so its causes, not the kind itself, come next.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
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

    /// Why the run was ended on purpose, when an approver or a tool result reviewer ended it
    /// (the reference's `TerminateSampleError` reason): an evaluation records it as the
    /// sample's `operator` limit and scores the sample.
    ///
    /// ```
    /// use actuator_agent::AgentError;
    /// use actuator_exec::ExecError;
    /// let err = AgentError::from(ExecError::ReviewTerminated { function: "bash".into(), call_id: "c1".into(), messages: vec![] });
    /// assert_eq!(err.termination(), Some("Tool result reviewer requested termination."));
    /// ```
    pub fn termination(&self) -> Option<&'static str> {
        match &self.kind {
            AgentErrorKind::Exec(e) => e.termination(),
            _ => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_error_keeps_its_kinds_causes_in_the_chain() {
        let cause =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let err = AgentError::from(ModelError::caused_by(
            "the request could not be sent",
            cause,
        ));
        assert_eq!(err.to_string(), "the request could not be sent");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("Connection refused"));
    }
}
