//! # actuator-events
//!
//! The vocabulary of a run that every layer shares, below the executor and the agents, so
//! that later layers (evaluations, logs) can add their own events without editing either:
//!
//! - [`Event`] and its kinds ([`PendingToolEvent`] when a call starts and [`ToolEvent`] when it
//!   ends, with [`ToolCallAgent`] for the agent a call ran; [`ModelEvent`] and
//!   [`ModelRetryEvent`], [`ModelStreamEvent`], [`SpanBeginEvent`], [`SpanEndEvent`], [`InfoEvent`],
//!   [`CompactionEvent`], [`LimitEvent`], [`ReviewEvent`], [`ScoreEvent`], [`InterruptEvent`]), delivered to an [`EventSink`] ([`EventLog`] keeps
//!   them in memory);
//! - [`SharedMessages`], a model event's input: the messages of one conversation shared between
//!   its events, so that recording a generation costs what was added since the last one;
//! - [`LimitKind`] and [`LimitExceeded`], the error a run stops with when a limit is hit, which
//!   the executor recognises when a tool that runs an agent hits an outer limit;
//! - [`Score`], what a scorer says about an answer (react's attempts, evaluations);
//! - [`ConsoleTranscript`], a sink that prints a run for people as it happens;
//! - [`EventStream`], one run's events (nested agents included, each placed by its
//!   [`Correlation`]) as a stream a live view reads, with the deltas of streaming generations
//!   ([`ModelStreamEvent`]) for sinks that want them, behind a bounded buffer that never makes
//!   the run wait.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod event;
pub use event::{
    ApprovalDecision, CompactionEvent, Event, EventLog, EventSink, InfoEvent, LimitEvent,
    ModelEvent, ModelRetryEvent, SpanBeginEvent, SpanEndEvent, unix_seconds,
};

mod stream_event;
pub use stream_event::{ModelStreamEvent, StreamEvent};

mod subscribe;
pub use subscribe::{
    Correlation, DEFAULT_STREAM_DELTAS, DEFAULT_STREAM_EVENTS, EventStream, Lost, RunEvent,
    StreamSink,
};

mod review_event;
pub use review_event::{ReviewDecision, ReviewEvent};

mod score_event;
pub use score_event::ScoreEvent;

mod interrupt_event;
pub use interrupt_event::{InterruptEvent, InterruptSource, Interrupted};

mod clock;
pub use clock::{unix_now, unix_seconds_at};

mod tool_event;
pub use tool_event::{ApprovalEvent, PendingToolEvent, RunsAgent, ToolCallAgent, ToolEvent};

mod messages;
pub use messages::SharedMessages;

mod limit;
pub use limit::{LimitExceeded, LimitKind, ScopeId};

mod console;
pub use console::ConsoleTranscript;

mod score;
pub use score::{CORRECT, INCORRECT, NOANSWER, PARTIAL, Score, ScoreValue};
