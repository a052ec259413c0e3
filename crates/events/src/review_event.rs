//! The record of one review of a tool's result (the reference's `ReviewEvent`): which
//! reviewer looked at the result of which call, and what it decided.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a reviewer decided about a tool's result (the reference's `ReviewDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    /// The result is passed to the model unchanged.
    Continue,
    /// The sample (the run) ends.
    Terminate,
    /// The next matching reviewer decides.
    Escalate,
}

impl ReviewDecision {
    /// The reference's name (`continue`, `terminate`, `escalate`).
    ///
    /// ```
    /// use actuator_events::ReviewDecision;
    /// assert_eq!(ReviewDecision::Terminate.as_str(), "terminate");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Continue => "continue",
            ReviewDecision::Terminate => "terminate",
            ReviewDecision::Escalate => "escalate",
        }
    }
}

/// One reviewer's decision about the result of an executed call, emitted as
/// [`Event::Review`](crate::Event::Review) after the call's [`ToolEvent`](crate::ToolEvent)
/// (the order the reference's log has them in). When every matching reviewer escalated, a last
/// event records the `continue` nobody decided, under the reviewer name `policy`.
///
/// ```
/// use actuator_events::{ReviewDecision, ReviewEvent};
/// let event = ReviewEvent::new("call_1", "bash", serde_json::json!({"cmd": "ls"}), "monitor", ReviewDecision::Continue);
/// assert_eq!(event.reviewer, "monitor");
/// assert_eq!(event.explanation, None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReviewEvent {
    /// The text the model wrote along with the call.
    #[serde(default)]
    pub message: String,
    /// The id of the reviewed call.
    pub id: Arc<str>,
    /// The tool called.
    pub function: Arc<str>,
    /// The arguments the call ran with (canonical, after any approver's modification).
    pub arguments: Arc<Value>,
    /// The reviewer's name (a policy file's entry name, or [`Reviewer::name`]).
    ///
    /// [`Reviewer::name`]: https://docs.rs/actuator-exec/latest/actuator_exec/trait.Reviewer.html
    pub reviewer: String,
    /// The decision.
    pub decision: ReviewDecision,
    /// The reviewer's explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Anything else the reviewer recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The span the call ran in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Arc<str>>,
    /// When the decision was made (Unix seconds).
    pub at: f64,
}

impl ReviewEvent {
    /// A decision about the call `id` to `function`, made now.
    pub fn new(
        id: impl Into<Arc<str>>,
        function: impl Into<Arc<str>>,
        arguments: impl Into<Arc<Value>>,
        reviewer: impl Into<String>,
        decision: ReviewDecision,
    ) -> Self {
        ReviewEvent {
            message: String::new(),
            id: id.into(),
            function: function.into(),
            arguments: arguments.into(),
            reviewer: reviewer.into(),
            decision,
            explanation: None,
            metadata: None,
            span_id: None,
            at: crate::unix_now(),
        }
    }
}
