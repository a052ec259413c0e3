//! The event of one tool call, from its start (pending) to its result, and the slot through
//! which a tool that runs an agent names it on that event.

use std::sync::{Arc, Mutex, PoisonError};

use actuator_model::{CompactString, MessageContent, ToolCallError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ApprovalDecision;

/// What an approver decided about a call, as recorded on its event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalEvent {
    /// The name of the approver whose decision this is (the reference's `approver`); `None`
    /// when no policy decided and the call was rejected for want of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    /// The decision.
    pub decision: ApprovalDecision,
    /// The approver's explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// The arguments after a `modify` decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_arguments: Option<Map<String, Value>>,
    /// The arguments the approver was shown, when the tool declares canonical arguments (the
    /// call's own are the model's, as proposed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
}

impl ApprovalEvent {
    /// A decision with no approver, explanation or modification yet.
    pub fn new(decision: ApprovalDecision) -> Self {
        ApprovalEvent {
            approver: None,
            decision,
            explanation: None,
            modified_arguments: None,
            arguments: None,
        }
    }
}

/// A tool call that has just started: the call, before its result.
///
/// The executor emits one as [`Event::ToolPending`](crate::Event::ToolPending) when a call
/// starts; the call's [`ToolEvent`], with the same `id`, follows when it ends and supersedes
/// it, as the reference updates its one event in place. It is small and kept inline in the
/// [`Event`](crate::Event), not boxed as the completed event is: every call emits one, before
/// its tool runs, so what it costs delays every tool. For the same reason its id and tool
/// name are its own inline copies (up to 24 bytes need no allocation), not shared counted
/// strings: counting a shared string is an atomic operation, dearer than copying a short one.
/// [`PendingToolEvent::to_tool_event`]
/// gives it in the reference's shape, a `ToolEvent` with `pending: Some(true)`.
///
/// ```
/// use actuator_events::PendingToolEvent;
/// let started = PendingToolEvent::new("call_1", "add", serde_json::json!({"x": 1}), 1.8e9);
/// let event = started.to_tool_event();
/// assert!(event.is_pending());
/// assert_eq!(&*event.id, "call_1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingToolEvent {
    /// The call id (the completed event's has the same text).
    pub id: CompactString,
    /// The tool called.
    pub function: CompactString,
    /// The arguments the call started with (a JSON object), shared with the tool and the
    /// completed event; an approver's modification is on the completed event only.
    pub arguments: Arc<Value>,
    /// When the call started (Unix seconds).
    pub started_at: f64,
    /// The span the call runs in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Arc<str>>,
}

impl PendingToolEvent {
    /// The start of call `id` of tool `function`.
    pub fn new(
        id: impl Into<CompactString>,
        function: impl Into<CompactString>,
        arguments: impl Into<Arc<Value>>,
        started_at: f64,
    ) -> Self {
        PendingToolEvent {
            id: id.into(),
            function: function.into(),
            arguments: arguments.into(),
            started_at,
            span_id: None,
        }
    }

    /// The same start as a pending [`ToolEvent`] (`pending: Some(true)`, no result), the
    /// shape the reference records until the call completes.
    pub fn to_tool_event(&self) -> ToolEvent {
        let mut event = ToolEvent::pending(
            self.id.as_str(),
            self.function.as_str(),
            Arc::clone(&self.arguments),
            self.started_at,
        );
        event.span_id.clone_from(&self.span_id);
        event
    }
}

/// One tool call, from request to result.
///
/// The executor emits a call's `ToolEvent` when the call ends, after the
/// [`PendingToolEvent`] it emitted when the call started (the same `id`), which the completed
/// event supersedes. A `ToolEvent` can also be pending itself (`pending: Some(true)`, no
/// result, no completion time: [`ToolEvent::pending`], [`PendingToolEvent::to_tool_event`]),
/// the reference's shape for a call still running; consumers that only want results skip
/// those ([`ToolEvent::is_pending`]).
///
/// `#[non_exhaustive]`: build one with [`ToolEvent::pending`] and set the fields.
///
/// ```
/// use actuator_events::ToolEvent;
/// let started = ToolEvent::pending("call_1", "add", serde_json::json!({"x": 1, "y": 2}), 1.8e9);
/// assert!(started.is_pending());
/// assert_eq!(started.completed_at, None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolEvent {
    /// The call id (the pending event's has the same text).
    pub id: Arc<str>,
    /// The tool called.
    pub function: Arc<str>,
    /// The arguments the call ran with (after an approver's modification), shared between
    /// the call's pending and completed events, and with the tool itself: a JSON object.
    pub arguments: Arc<Value>,
    /// The result content (after truncation), as the model sees it.
    #[serde(default)]
    pub result: MessageContent,
    /// The error, when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolCallError>,
    /// `(original_bytes, limit)` when the output was truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<(usize, usize)>,
    /// The approval, when an approver was asked (boxed: most calls have none, and every
    /// event is moved into its sink).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Box<ApprovalEvent>>,
    /// When the call started (Unix seconds).
    pub started_at: f64,
    /// When the call ended (Unix seconds); `None` while it is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<f64>,
    /// Seconds spent working: wall time less time waiting for approval; `None` while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_time: Option<f64>,
    /// `Some(true)` on the event a call emits when it starts; `None` once it has completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<bool>,
    /// `Some(true)` when the call failed hard: a fatal error or panic that ends the run, or a
    /// cancellation because a parallel sibling failed so (the reference's `failed`). Ordinary
    /// tool errors the model is told about leave it `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<bool>,
    /// The id of the tool message that carries the result; `None` while pending and when the
    /// call stopped the run (no message was produced). Message ids are 22 characters, kept
    /// inline, so recording one costs no allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<CompactString>,
    /// The span the call ran in (the agent run, handoff, … that executed it), when known;
    /// shared by every event of the span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Arc<str>>,
    /// The agent the call handed off to, when the tool was a handoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The span of the agent run the call started, when the tool ran an agent (`as_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_span_id: Option<String>,
    /// The cause, when the call failed fatally (the run ends; the model is not told).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatal: Option<String>,
}

impl ToolEvent {
    /// The event of a call that has just started.
    pub fn pending(
        id: impl Into<Arc<str>>,
        function: impl Into<Arc<str>>,
        arguments: impl Into<Arc<Value>>,
        started_at: f64,
    ) -> Self {
        ToolEvent {
            id: id.into(),
            function: function.into(),
            arguments: arguments.into(),
            result: MessageContent::default(),
            error: None,
            truncated: None,
            approval: None,
            started_at,
            completed_at: None,
            working_time: None,
            pending: Some(true),
            failed: None,
            message_id: None,
            span_id: None,
            agent: None,
            agent_span_id: None,
            fatal: None,
        }
    }

    /// Whether this is the event of a call still running.
    pub fn is_pending(&self) -> bool {
        self.pending == Some(true)
    }
}

/// Where a tool that runs an agent records which agent it ran, so that its call's
/// [`ToolEvent`] carries `agent` (a handoff) or `agent_span_id` (an agent used as a tool).
///
/// The executor puts one in the call's extensions when events are recorded and the tool is
/// marked with [`RunsAgent`] (as `handoff` and `as_tool` tools are); tools find it with
/// `ctx.extensions.get::<ToolCallAgent>()` and leave it alone when it is absent.
///
/// ```
/// use actuator_events::ToolCallAgent;
/// let slot = ToolCallAgent::default();
/// slot.set_agent_span_id("span_1");
/// assert_eq!(slot.agent_span_id().as_deref(), Some("span_1"));
/// assert_eq!(slot.agent(), None);
/// ```
#[derive(Debug, Default)]
pub struct ToolCallAgent {
    recorded: Mutex<Recorded>,
}

#[derive(Debug, Default, Clone)]
struct Recorded {
    agent: Option<String>,
    agent_span_id: Option<String>,
}

impl ToolCallAgent {
    fn with<R>(&self, f: impl FnOnce(&mut Recorded) -> R) -> R {
        // A panic elsewhere cannot leave two strings inconsistent: use the data anyway.
        f(&mut self.recorded.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Records the name of the agent the call handed off to.
    pub fn set_agent(&self, name: impl Into<String>) {
        let name = name.into();
        self.with(|r| r.agent = Some(name));
    }

    /// Records the span id of the agent run the call started.
    pub fn set_agent_span_id(&self, id: impl Into<String>) {
        let id = id.into();
        self.with(|r| r.agent_span_id = Some(id));
    }

    /// The agent recorded, if any.
    pub fn agent(&self) -> Option<String> {
        self.with(|r| r.agent.clone())
    }

    /// The agent span recorded, if any.
    pub fn agent_span_id(&self) -> Option<String> {
        self.with(|r| r.agent_span_id.clone())
    }
}

/// Marks a tool that runs agents (attach it with `ToolDef::with_extension(RunsAgent)`): its
/// calls get a [`ToolCallAgent`] slot when events are recorded. Other tools' calls go without
/// one, which spares every call a copy of the run's extensions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunsAgent;
