//! The record of an agent's turn cut short (the reference's `InterruptEvent`).

use serde::{Deserialize, Serialize};

/// What cut a turn short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InterruptSource {
    /// An operator interrupted the agent (through its channel).
    UserCancel,
    /// A limit of the run.
    Limit,
    /// The evaluation shutting down.
    System,
}

/// What was running when the interrupt came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Interrupted {
    /// A generation.
    Generate,
    /// Tool calls.
    ToolCall,
    /// Nothing: the agent was between turns.
    BetweenTurns,
}

/// An agent's turn was cut short: by whom, what it was doing, and the tool call in flight.
/// A log writes it as the reference's `interrupt` event.
///
/// ```
/// use actuator_events::{InterruptEvent, InterruptSource, Interrupted};
/// let event = InterruptEvent::new(InterruptSource::UserCancel, Interrupted::ToolCall)
///     .with_tool_call_id("call_1");
/// assert_eq!(event.interrupted_tool_call_id.as_deref(), Some("call_1"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InterruptEvent {
    /// What cut the turn short.
    pub source: InterruptSource,
    /// What was running.
    pub interrupted: Interrupted,
    /// The id of the (first) tool call in flight, when tool calls were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_tool_call_id: Option<String>,
    /// When (Unix seconds).
    pub at: f64,
}

impl InterruptEvent {
    /// An interrupt from `source` of what was `interrupted`, now.
    pub fn new(source: InterruptSource, interrupted: Interrupted) -> Self {
        InterruptEvent {
            source,
            interrupted,
            interrupted_tool_call_id: None,
            at: crate::unix_now(),
        }
    }

    /// The tool call that was in flight.
    #[must_use]
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.interrupted_tool_call_id = Some(id.into());
        self
    }
}

impl InterruptSource {
    /// The reference's name.
    pub fn as_str(self) -> &'static str {
        match self {
            InterruptSource::UserCancel => "user_cancel",
            InterruptSource::Limit => "limit",
            InterruptSource::System => "system",
        }
    }
}

impl Interrupted {
    /// The reference's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Interrupted::Generate => "generate",
            Interrupted::ToolCall => "tool_call",
            Interrupted::BetweenTurns => "between_turns",
        }
    }
}
