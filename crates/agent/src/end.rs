//! [`RunEnd`]: how a run ended, so that a failure never reads as an answer.

use actuator_model::StopReason;

use crate::limits::LimitExceeded;
use crate::state::AgentState;

/// How a run ended: the one field ([`AgentRun::end`](crate::AgentRun::end)) to match on
/// before treating the output as an answer.
///
/// A run that returns `Ok` has not necessarily answered: a limit may have stopped it, the
/// conversation may have outgrown the model's context window (the provider's error becomes a
/// `model_length` stop, as in the reference, and its text is the output's completion), or the
/// model may have refused. Errors are not here: they are `run`'s `Err`.
///
/// ```
/// use actuator_agent::{AgentState, RunEnd, agent_fn, run, limits::turn_limit};
/// use actuator_model::ChatMessage;
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let echo = agent_fn("echo", |mut state: AgentState, _cx, _args| async move {
///     state.messages.push(ChatMessage::assistant("4"));
///     Ok(state)
/// });
/// let result = run(&echo, "2 + 2?", [turn_limit(5)]).await.unwrap();
/// match &result.end {
///     RunEnd::Submitted { answer } | RunEnd::Completed { answer } => assert_eq!(answer, "4"),
///     other => panic!("no answer: {other}"),
/// }
/// assert_eq!(result.answer(), Some("4"));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunEnd {
    /// The agent submitted its answer: react's submit tool (an accepted submission), or any
    /// agent that called [`RunContext::record_submission`](crate::RunContext::record_submission).
    Submitted {
        /// The answer (the output's completion).
        answer: String,
    },
    /// The agent finished without a submission (an agent with no submit tool), with this
    /// non-empty output.
    Completed {
        /// The output's completion.
        answer: String,
    },
    /// One of the run's own limits stopped it; the state is the partial one.
    Limit(LimitExceeded),
    /// The conversation no longer fit the model's context window (stop reason
    /// `model_length`) and nothing recovered it; the output's text is the provider's message,
    /// not an answer.
    ContextWindow,
    /// The model refused (stop reason `content_filter`).
    Refused,
    /// The agent returned without a submission and with no output text.
    NoAnswer,
}

impl RunEnd {
    /// How a run that returned `state` ended (`limit`: the run's own limit that stopped it;
    /// `submitted`: whether the agent recorded a submission).
    pub(crate) fn of(state: &AgentState, limit: Option<&LimitExceeded>, submitted: bool) -> Self {
        if let Some(limit) = limit {
            return RunEnd::Limit(limit.clone());
        }
        match state.explicit_output().and_then(|o| o.stop_reason()) {
            Some(StopReason::ModelLength) => return RunEnd::ContextWindow,
            Some(StopReason::ContentFilter) if !submitted => return RunEnd::Refused,
            _ => {}
        }
        let answer = state.output().completion();
        match (submitted, answer.is_empty()) {
            (true, _) => RunEnd::Submitted { answer },
            (false, false) => RunEnd::Completed { answer },
            (false, true) => RunEnd::NoAnswer,
        }
    }

    /// The answer, when the run gave one (submitted or completed).
    pub fn answer(&self) -> Option<&str> {
        match self {
            RunEnd::Submitted { answer } | RunEnd::Completed { answer } => Some(answer),
            _ => None,
        }
    }
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunEnd::Submitted { .. } => f.write_str("the agent submitted an answer"),
            RunEnd::Completed { .. } => f.write_str("the agent finished"),
            RunEnd::Limit(limit) => write!(f, "a limit stopped the run: {limit}"),
            RunEnd::ContextWindow => f.write_str(
                "the conversation outgrew the model's context window (stop reason model_length): \
                 use a model with a larger window, a token or turn limit, or compaction",
            ),
            RunEnd::Refused => f.write_str("the model refused (stop reason content_filter)"),
            RunEnd::NoAnswer => f.write_str("the agent stopped without an answer"),
        }
    }
}
