//! Typed events: every tool call produces a [`ToolEvent`], every generation a [`ModelEvent`],
//! delivered to the [`EventSink`] of the run.

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::SharedMessages;
use actuator_model::{GenerateConfig, ModelOutput};
use actuator_tool_core::{ToolChoice, ToolInfo};
use serde::{Deserialize, Serialize};

use crate::interrupt_event::InterruptEvent;
use crate::review_event::ReviewEvent;
use crate::score_event::ScoreEvent;
use crate::stream_event::ModelStreamEvent;
use crate::tool_event::{PendingToolEvent, ToolEvent};

/// What an approver decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Run a modified call (same function, other arguments).
    Modify,
    /// Do not run it; the model is told why.
    Reject,
    /// End the run.
    Terminate,
    /// Let the next matching policy decide.
    Escalate,
}

/// Seconds since the Unix epoch, as events record times.
pub fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One model generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEvent {
    /// The model's name.
    pub model: String,
    /// The messages the model was shown (after compaction), sharing the messages of the
    /// conversation's earlier events (serialized as a plain list).
    pub input: SharedMessages,
    /// The tools offered, shared with the agent that offered them (serialized as the infos).
    pub tools: Arc<[Arc<ToolInfo>]>,
    /// The tool choice.
    pub tool_choice: ToolChoice,
    /// The generation settings.
    pub config: GenerateConfig,
    /// The output, when the generation succeeded: shared with the agent's state that holds
    /// it (serialized as the output itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Arc<ModelOutput>>,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When it started (Unix seconds).
    pub started_at: f64,
    /// When it ended (Unix seconds).
    pub completed_at: f64,
    /// Seconds it took, less the time the provider spent waiting between retries.
    pub working_time: f64,
    /// How many times the provider retried the request (each also a [`ModelRetryEvent`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// The number the generation's [`ModelStreamEvent`]s carry, when the sink wanted them
    /// ([`EventSink::wants_model_stream`]): the deltas with this number came before this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A provider is about to retry a failed request: emitted while the generation runs, before
/// the wait, so a long rate-limit wait is visible as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRetryEvent {
    /// The model's name.
    pub model: String,
    /// Which retry this is (1 for the first).
    pub retry: u32,
    /// Seconds the provider waits before sending again (not working time).
    pub wait: f64,
    /// Why the attempt failed.
    pub error: String,
    /// The failed attempt's HTTP status, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
}

impl ModelRetryEvent {
    /// The event for `report`, a retry of `model`'s request.
    pub fn new(model: impl Into<String>, retry: u32, wait: f64, error: impl Into<String>) -> Self {
        ModelRetryEvent {
            model: model.into(),
            retry,
            wait,
            error: error.into(),
            status: None,
        }
    }

    /// The failed attempt's HTTP status.
    #[must_use]
    pub fn with_status(mut self, status: Option<u16>) -> Self {
        self.status = status;
        self
    }
}

/// The start of a span (an agent run, a handoff, a compaction).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanBeginEvent {
    /// The span's id.
    pub id: String,
    /// The enclosing span's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// What the span is (`agent`, `handoff`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its name (an agent's display name, …).
    pub name: String,
    /// The tool call that started the span's agent run, when a tool did (`as_tool`, a
    /// handoff): a live view places the nested run under the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Arc<str>>,
}

/// The end of a span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanEndEvent {
    /// The span's id.
    pub id: String,
}

/// A note for the transcript (for example, why an agent stopped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InfoEvent {
    /// Who wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The note.
    pub message: String,
}

/// A compaction of the model's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionEvent {
    /// The strategy (`edit`, `trim`, `summary`).
    pub strategy: String,
    /// What triggered it (`threshold` or `forced`).
    pub trigger: String,
    /// Estimated input tokens before.
    pub tokens_before: u64,
    /// Estimated input tokens after.
    pub tokens_after: u64,
    /// Messages in the input before.
    pub messages_before: usize,
    /// Messages in the input after.
    pub messages_after: usize,
}

/// A limit was hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitEvent {
    /// The kind of limit (`message`, `token`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// The message.
    pub message: String,
    /// The limit.
    pub limit: f64,
}

/// An event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
// Completed tool events are boxed although they are frequent: every call emits one, and
// moving a box into the sink (and growing the sink's vector of small events) measured faster
// than moving the large event itself, its allocation included. A call's pending event is small
// and inline: it is emitted before the tool runs, and its box and copy delayed every tool.
pub enum Event {
    /// A tool call started (its completed [`Event::Tool`] follows).
    ToolPending(PendingToolEvent),
    /// A tool call ended: its result.
    Tool(Box<ToolEvent>),
    /// A model generation.
    Model(Box<ModelEvent>),
    /// A provider retrying a generation's request.
    ModelRetry(ModelRetryEvent),
    /// A span began (boxed: spans are few, and the event stays as small as a pending tool
    /// call's).
    SpanBegin(Box<SpanBeginEvent>),
    /// A span ended.
    SpanEnd(SpanEndEvent),
    /// A note.
    Info(InfoEvent),
    /// A compaction.
    Compaction(CompactionEvent),
    /// A limit was hit.
    Limit(LimitEvent),
    /// A piece of a generation still streaming (only to sinks that want them:
    /// [`EventSink::wants_model_stream`]); its [`ModelEvent`] follows.
    ModelStream(ModelStreamEvent),
    /// A reviewer's decision about a tool's result (after the call's [`Event::Tool`]).
    Review(Box<ReviewEvent>),
    /// A scorer's score of a sample (an evaluation emits it in the scorer's span).
    Score(Box<ScoreEvent>),
    /// An agent's turn was cut short (an operator's interrupt through its channel).
    Interrupt(Box<InterruptEvent>),
}

/// Receives the events of a run. Must be cheap and must not block: it is called inline.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an event sink",
    note = "implement `actuator_events::EventSink` (fn emit(&self, event: Event)), or use `EventLog`"
)]
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn emit(&self, event: Event);

    /// Whether this sink wants [`Event::ToolPending`], the event each tool call emits when
    /// it starts (a live view shows calls still running with it). A sink that keeps only
    /// results, as a log does (the completed [`ToolEvent`] supersedes the pending one),
    /// answers `false`, and the executor then neither builds nor sends it: each call saves
    /// its copies of the call's id, name and arguments, and one `emit`.
    ///
    /// ```
    /// use actuator_events::{Event, EventSink};
    /// struct Results;
    /// impl EventSink for Results {
    ///     fn emit(&self, _event: Event) {}
    ///     fn wants_pending_tool_events(&self) -> bool {
    ///         false
    ///     }
    /// }
    /// assert!(!Results.wants_pending_tool_events());
    /// ```
    fn wants_pending_tool_events(&self) -> bool {
        true
    }

    /// Whether this sink wants [`Event::ModelStream`]: the text, reasoning and tool-call
    /// deltas of each generation as a streaming provider parses them, and the retry boundary
    /// that discards an attempt's deltas. Only a live view wants them (a log keeps the
    /// [`ModelEvent`], which holds the whole output), so the default is no, and then no
    /// delta is built: providers ask before they make one.
    ///
    /// ```
    /// use actuator_events::{Event, EventLog, EventSink};
    /// struct Live;
    /// impl EventSink for Live {
    ///     fn emit(&self, _event: Event) {}
    ///     fn wants_model_stream(&self) -> bool {
    ///         true
    ///     }
    /// }
    /// assert!(Live.wants_model_stream());
    /// assert!(!EventLog::new().wants_model_stream());
    /// ```
    fn wants_model_stream(&self) -> bool {
        false
    }

    /// Receives one event emitted inside the span `span_id` (the innermost span of the run
    /// that emitted it), from an emitter that knows it. A sink that places events in the
    /// run's tree (an [`EventStream`](crate::EventStream)) reads it; the default forgets it
    /// and calls [`EventSink::emit`]. Tool events carry their span themselves.
    ///
    /// ```
    /// use actuator_events::{Event, EventLog, EventSink, InfoEvent};
    /// let log = EventLog::new();
    /// log.emit_in(Some("span_1"), Event::Info(InfoEvent { source: None, message: "hi".into() }));
    /// assert_eq!(log.events().len(), 1);
    /// ```
    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        let _ = span_id;
        self.emit(event);
    }
}

/// An event sink that keeps every event in memory, in order.
///
/// ```
/// use actuator_events::{EventLog, EventSink};
/// let log = EventLog::new();
/// assert!(log.events().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct EventLog {
    events: Mutex<Vec<Event>>,
    /// Declines [`Event::ToolPending`] ([`EventLog::results_only`]).
    results_only: bool,
}

impl EventLog {
    /// An empty log, shared.
    pub fn new() -> Arc<Self> {
        Arc::new(EventLog::default())
    }

    /// An empty log that keeps what a call did, not that it started: it declines
    /// [`Event::ToolPending`] (see [`EventSink::wants_pending_tool_events`]), as an
    /// evaluation's log does, so each call is recorded by one event, its completed
    /// [`ToolEvent`], and costs one lock of the log instead of two.
    ///
    /// ```
    /// use actuator_events::{Event, EventLog, EventSink, PendingToolEvent};
    /// let log = EventLog::results_only();
    /// assert!(!log.wants_pending_tool_events());
    /// assert!(EventLog::new().wants_pending_tool_events());
    /// ```
    pub fn results_only() -> Arc<Self> {
        Arc::new(EventLog {
            events: Mutex::default(),
            results_only: true,
        })
    }

    /// A copy of the events so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// The completed tool events so far, one per call (the [`Event::ToolPending`] each call
    /// emits when it starts is in [`EventLog::events`]).
    pub fn tool_events(&self) -> Vec<ToolEvent> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Tool(t) if !t.is_pending() => Some(*t),
                _ => None,
            })
            .collect()
    }
}

impl EventSink for EventLog {
    fn emit(&self, event: Event) {
        if self.results_only && matches!(event, Event::ToolPending(_)) {
            return;
        }
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }

    fn wants_pending_tool_events(&self) -> bool {
        !self.results_only
    }
}
