//! Errors that stop `execute_tools`.

use actuator_events::LimitExceeded;
use actuator_model::ChatMessage;
use actuator_tool_core::{FatalToolError, ToolDefError};

/// Why `execute_tools` stopped instead of returning results. Recoverable tool errors never
/// appear here: they are tool messages the model reads.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The tool set is not usable (for example, two tools share a name). Nothing ran.
    #[error(transparent)]
    InvalidTools(#[from] ToolDefError),
    /// A tool failed fatally (a fatal error, or a panic). Its parallel siblings were cancelled
    /// and later calls skipped.
    #[error("Tool '{function}' (call {call_id}) failed fatally: {cause}")]
    Fatal {
        /// The tool.
        function: String,
        /// The call id.
        call_id: String,
        /// The failure.
        cause: FatalToolError,
        /// The tool messages produced before the run stopped, in declared order.
        messages: Vec<ChatMessage>,
    },
    /// A tool that runs an agent (handoff, `as_tool`) hit a limit of an enclosing run: the
    /// run whose limit it is ends, cleanly, with the limit (D9). The stage's other calls were
    /// cancelled and later calls skipped, as for a fatal failure.
    #[error("{limit}")]
    Limit {
        /// The limit exceeded (boxed: it is rare, and keeps `ExecError` small).
        limit: Box<LimitExceeded>,
        /// The tool.
        function: String,
        /// The call id.
        call_id: String,
        /// The tool messages produced before the run stopped, in declared order.
        messages: Vec<ChatMessage>,
    },
    /// An approver asked to end the run.
    #[error("Tool call approver requested termination.")]
    Terminated {
        /// The tool.
        function: String,
        /// The call id.
        call_id: String,
        /// The tool messages produced before the run stopped, in declared order.
        messages: Vec<ChatMessage>,
    },
    /// A reviewer asked to end the run after the call ran (the reference's
    /// `TerminateSampleError` from a tool result review). The reviewed call's result is on its
    /// event, and the decision on its [`ReviewEvent`](actuator_events::ReviewEvent).
    #[error("Tool result reviewer requested termination.")]
    ReviewTerminated {
        /// The tool.
        function: String,
        /// The call id.
        call_id: String,
        /// The tool messages produced before the run stopped, in declared order (not the
        /// reviewed call's: the model never reads it).
        messages: Vec<ChatMessage>,
    },
    /// An approver's modified call names another function.
    #[error(
        "An approver returned a modified call to '{modified}' for a call to '{original}'. A 'modify' decision may change only the arguments of a tool call, not the function called."
    )]
    InvalidModification {
        /// The function called.
        original: String,
        /// The function the modified call names.
        modified: String,
        /// The tool messages produced before the run stopped, in declared order.
        messages: Vec<ChatMessage>,
    },
}

impl ExecError {
    /// The limit, when an enclosing run's limit stopped execution.
    pub fn limit(&self) -> Option<&LimitExceeded> {
        match self {
            ExecError::Limit { limit, .. } => Some(limit),
            _ => None,
        }
    }

    /// Why the run was ended on purpose, when an approver or a reviewer ended it: the reason
    /// the reference records as the sample's `operator` limit.
    ///
    /// ```
    /// use actuator_exec::ExecError;
    /// let err = ExecError::ReviewTerminated { function: "bash".into(), call_id: "c1".into(), messages: vec![] };
    /// assert_eq!(err.termination(), Some("Tool result reviewer requested termination."));
    /// ```
    pub fn termination(&self) -> Option<&'static str> {
        match self {
            ExecError::Terminated { .. } => Some("Tool call approver requested termination."),
            ExecError::ReviewTerminated { .. } => Some(crate::review::REVIEW_TERMINATED),
            _ => None,
        }
    }

    /// The tool messages produced before the run stopped.
    pub fn messages(&self) -> &[ChatMessage] {
        match self {
            ExecError::InvalidTools(_) => &[],
            ExecError::Fatal { messages, .. }
            | ExecError::Limit { messages, .. }
            | ExecError::Terminated { messages, .. }
            | ExecError::ReviewTerminated { messages, .. }
            | ExecError::InvalidModification { messages, .. } => messages,
        }
    }
}
