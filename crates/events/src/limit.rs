//! The limit vocabulary every layer shares: which kind of limit, and the error a run stops
//! with when one is exceeded. The limits themselves and their enforcement live with the run
//! (`actuator-agent`); the executor only needs to recognise the error.

use std::sync::atomic::{AtomicU64, Ordering};

use actuator_tool_core::{LimitValue, limit_exceeded_text};
use serde::{Deserialize, Serialize};

use crate::event::LimitEvent;

/// The kind of a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitKind {
    /// Messages in the conversation.
    Message,
    /// Tokens used by generations.
    Token,
    /// Generations.
    Turn,
    /// Wall-clock time.
    Time,
    /// Wall-clock time less time spent waiting (for approval, retries).
    Working,
    /// Cost in US dollars, from the usage models report.
    Cost,
}

impl LimitKind {
    /// The snake_case name (`message`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Message => "message",
            LimitKind::Token => "token",
            LimitKind::Turn => "turn",
            LimitKind::Time => "time",
            LimitKind::Working => "working",
            LimitKind::Cost => "cost",
        }
    }
}

impl std::fmt::Display for LimitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Identifies one limit scope (one `run`), so that a scope catches its own limits only (D9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeId(u64);

impl ScopeId {
    /// A new id, unique in this process.
    pub fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ScopeId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// A limit was exceeded. Carries the reference's message (`Message limit exceeded. count: 6;
/// limit: 5`, …) and the scope whose limit it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LimitExceeded {
    /// The kind of limit.
    pub kind: LimitKind,
    /// The value reached.
    pub value: f64,
    /// The limit.
    pub limit: f64,
    /// The message.
    pub message: String,
    scope: ScopeId,
}

impl LimitExceeded {
    /// A limit of `scope` was exceeded.
    pub fn new(
        kind: LimitKind,
        value: f64,
        limit: f64,
        message: impl Into<String>,
        scope: ScopeId,
    ) -> Self {
        LimitExceeded {
            kind,
            value,
            limit,
            message: message.into(),
            scope,
        }
    }

    /// The scope whose limit this is.
    pub fn scope(&self) -> ScopeId {
        self.scope
    }

    /// The limit as the reference prints it in tool errors and handoff messages: integers with
    /// thousands separators for counts, two decimals for time and cost (`1,000`, `60.00`).
    ///
    /// ```
    /// use actuator_events::{LimitExceeded, LimitKind, ScopeId};
    /// let e = LimitExceeded::new(LimitKind::Time, 61.0, 60.0, "Time limit exceeded.", ScopeId::next());
    /// assert_eq!(e.limit_str(), "60.00");
    /// ```
    pub fn limit_str(&self) -> String {
        self.limit_value().to_string()
    }

    /// The limit, typed by kind: a count for messages, tokens and turns, an amount for time,
    /// working time and cost.
    pub fn limit_value(&self) -> LimitValue {
        match self.kind {
            LimitKind::Message | LimitKind::Token | LimitKind::Turn => {
                LimitValue::Count(self.limit.max(0.0) as u64)
            }
            LimitKind::Time | LimitKind::Working | LimitKind::Cost => {
                LimitValue::Amount(self.limit)
            }
        }
    }

    /// `The {subject} exceeded its {kind} limit of {limit}.`: what a model reads when a tool
    /// (`subject` = `tool`) or a handed-off agent hit this limit.
    ///
    /// ```
    /// use actuator_events::{LimitExceeded, LimitKind, ScopeId};
    /// let e = LimitExceeded::new(LimitKind::Message, 11.0, 10.0, "Message limit exceeded.", ScopeId::next());
    /// assert_eq!(e.exceeded_text("tool"), "The tool exceeded its message limit of 10.");
    /// ```
    pub fn exceeded_text(&self, subject: &str) -> String {
        limit_exceeded_text(subject, self.kind.as_str(), &self.limit_str())
    }

    /// The event that records this limit.
    pub fn event(&self) -> LimitEvent {
        LimitEvent {
            kind: self.kind.to_string(),
            message: self.message.clone(),
            limit: self.limit,
        }
    }
}
