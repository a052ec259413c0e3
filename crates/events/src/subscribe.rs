//! [`EventStream`]: one run's events, nested agents included, as a stream a live view reads
//! while the run goes on, each event placed in the run's tree by its [`Correlation`].
//!
//! The run never waits for the subscriber. Between them is a bounded buffer with this
//! policy:
//!
//! - **Deltas** ([`StreamEvent::is_delta`](crate::StreamEvent::is_delta): text, reasoning and tool-call fragments) are
//!   dropped when `deltas` of them are already waiting. Each event delivered says how many
//!   deltas were dropped just before it ([`RunEvent::deltas_dropped`]), so a view knows where
//!   its text has holes; the [`ModelEvent`](crate::ModelEvent) that ends the generation holds
//!   the whole output to repair them from. [`EventStream::lost`] counts them all.
//! - **Completed events** (everything else, retry boundaries included) are never dropped to
//!   make room, and up to `events` of them wait for the subscriber. A subscriber that falls
//!   further behind than that is cut off rather than letting memory grow without bound or
//!   making the run wait: it receives what was buffered, then the end of the stream, and
//!   [`EventStream::lost`] says how many events it missed ([`Lost::events`]).
//!
//! The default bounds ([`DEFAULT_STREAM_EVENTS`], [`DEFAULT_STREAM_DELTAS`]) keep every
//! completed event of long runs for a subscriber that reads only at the end.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::event::{Event, EventSink, SpanBeginEvent};

/// How many completed events wait for a subscriber by default.
pub const DEFAULT_STREAM_EVENTS: usize = 1 << 16;

/// How many deltas wait for a subscriber by default.
pub const DEFAULT_STREAM_DELTAS: usize = 1 << 10;

/// Where an event belongs in a run's tree: the agent run it is part of, the span it was
/// emitted in, and the tool call that started its agent run. Shared by the events of one
/// span.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Correlation {
    /// The agent run (the id of its `agent` span, as `AgentRun::span_id` of the agent crate
    /// has it) the event belongs to.
    pub run_id: Option<Arc<str>>,
    /// The innermost span it was emitted in (for a span's begin and end: that span).
    pub span_id: Option<Arc<str>>,
    /// That span's parent.
    pub parent_span_id: Option<Arc<str>>,
    /// The name of the run's agent.
    pub agent: Option<Arc<str>>,
    /// The tool call that started the run (`as_tool`, a handoff), `None` for the outermost
    /// run.
    pub tool_call_id: Option<Arc<str>>,
}

/// An event of the run with its place in the run's tree.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunEvent {
    /// The event.
    pub event: Event,
    /// Where it belongs.
    pub correlation: Arc<Correlation>,
    /// How many deltas the buffer dropped just before this event (see the module's policy).
    pub deltas_dropped: u64,
}

/// What a subscriber missed (see [`EventStream`]'s policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lost {
    /// Deltas dropped because too many were waiting.
    pub deltas: u64,
    /// Completed events missed after the subscriber fell too far behind and was cut off.
    pub events: u64,
}

struct State {
    queue: VecDeque<RunEvent>,
    /// How many deltas are in `queue`.
    queued_deltas: usize,
    max_events: usize,
    max_deltas: usize,
    /// Deltas dropped since the last event queued.
    dropped_since: u64,
    lost: Lost,
    /// The open spans' places (a span is forgotten at its end).
    spans: HashMap<Arc<str>, Arc<Correlation>>,
    /// The place of the last event, whose span the next event is most likely in too: found
    /// without hashing the id.
    last: Option<Arc<Correlation>>,
    outside: Arc<Correlation>,
    /// Cut off: nothing more is queued.
    overrun: bool,
    /// The sink is gone (the run ended): the stream ends when the queue is empty.
    closed: bool,
    /// The stream is gone: the sink does nothing.
    unread: bool,
    waker: Option<Waker>,
}

struct Shared(Mutex<State>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The receiving end: a [`futures_core::Stream`] of [`RunEvent`]s (or [`EventStream::recv`]).
/// It ends when the run has ended and every event was read.
///
/// ```
/// use actuator_events::{Event, EventSink, EventStream, InfoEvent, SpanBeginEvent};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (sink, mut stream) = EventStream::new();
/// let begin = SpanBeginEvent { id: "s1".into(), parent_id: None, kind: "agent".into(), name: "helper".into(), tool_call_id: None };
/// sink.emit(Event::SpanBegin(Box::new(begin)));
/// sink.emit_in(Some("s1"), Event::Info(InfoEvent { source: None, message: "working".into() }));
/// drop(sink); // the run ended
/// let _begin = stream.recv().await.unwrap();
/// let info = stream.recv().await.unwrap();
/// assert_eq!(info.correlation.agent.as_deref(), Some("helper"));
/// assert_eq!(info.correlation.run_id.as_deref(), Some("s1"));
/// assert!(stream.recv().await.is_none());
/// # });
/// ```
pub struct EventStream {
    shared: Arc<Shared>,
}

/// The sending end: give it to the run (`RunOptions::events`). The stream ends once every
/// clone of it is dropped.
pub struct StreamSink {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("lost", &self.lost())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for StreamSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamSink").finish_non_exhaustive()
    }
}

impl EventStream {
    /// A sink for a run and the stream of what it receives, with the default bounds.
    pub fn new() -> (Arc<StreamSink>, EventStream) {
        EventStream::bounded(DEFAULT_STREAM_EVENTS, DEFAULT_STREAM_DELTAS)
    }

    /// A sink and its stream holding at most `events` completed events (at least one) and
    /// `deltas` deltas for the subscriber. With `deltas` zero the sink wants no deltas, and
    /// no provider builds any.
    ///
    /// ```
    /// use actuator_events::{EventSink, EventStream};
    /// let (sink, _stream) = EventStream::bounded(100, 0);
    /// assert!(!sink.wants_model_stream());
    /// ```
    pub fn bounded(events: usize, deltas: usize) -> (Arc<StreamSink>, EventStream) {
        let shared = Arc::new(Shared(Mutex::new(State {
            // A reader that keeps up holds a few events at a time: no growth for those.
            queue: VecDeque::with_capacity(16),
            queued_deltas: 0,
            max_events: events.max(1),
            max_deltas: deltas,
            dropped_since: 0,
            lost: Lost::default(),
            spans: HashMap::new(),
            last: None,
            outside: Arc::new(Correlation::default()),
            overrun: false,
            closed: false,
            unread: false,
            waker: None,
        })));
        (
            Arc::new(StreamSink {
                shared: Arc::clone(&shared),
            }),
            EventStream { shared },
        )
    }

    /// The next event, waiting for one; `None` once the run has ended and all were read (or
    /// the subscriber was cut off, see [`EventStream::lost`]).
    pub async fn recv(&mut self) -> Option<RunEvent> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Option<RunEvent> {
        pop(&mut self.shared.lock())
    }

    /// What the subscriber missed so far.
    pub fn lost(&self) -> Lost {
        self.shared.lock().lost
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        let mut state = self.shared.lock();
        if let Some(event) = pop(&mut state) {
            return Poll::Ready(Some(event));
        }
        if state.closed || state.overrun {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

fn pop(state: &mut State) -> Option<RunEvent> {
    let event = state.queue.pop_front()?;
    if is_delta(&event.event) {
        state.queued_deltas -= 1;
    }
    Some(event)
}

fn is_delta(event: &Event) -> bool {
    matches!(event, Event::ModelStream(s) if s.stream.is_delta())
}

impl futures_core::Stream for EventStream {
    type Item = RunEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        self.get_mut().poll_recv(cx)
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.unread = true;
        state.queue.clear();
        state.spans.clear();
        state.last = None;
    }
}

impl Drop for StreamSink {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.shared.lock();
            state.closed = true;
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl State {
    /// The place of `event`, emitted in `span` (tool events name theirs).
    fn place(&mut self, span: Option<&str>, event: &Event) -> Arc<Correlation> {
        let span = match event {
            Event::SpanBegin(begin) => return self.begin(begin),
            Event::SpanEnd(end) => {
                self.last = None;
                return self
                    .spans
                    .remove(end.id.as_str())
                    .unwrap_or_else(|| self.unknown(&end.id));
            }
            Event::Tool(t) => t.span_id.as_deref(),
            Event::ToolPending(p) => p.span_id.as_deref(),
            _ => span,
        };
        let Some(id) = span else {
            return Arc::clone(&self.outside);
        };
        if let Some(last) = self
            .last
            .as_ref()
            .filter(|l| l.span_id.as_deref() == Some(id))
        {
            return Arc::clone(last);
        }
        let place = match self.spans.get(id) {
            Some(c) => Arc::clone(c),
            None => return self.unknown(id),
        };
        self.last = Some(Arc::clone(&place));
        place
    }

    /// A span begun before the subscriber was attached: known by its id alone.
    fn unknown(&self, id: &str) -> Arc<Correlation> {
        Arc::new(Correlation {
            span_id: Some(Arc::from(id)),
            ..Correlation::default()
        })
    }

    fn begin(&mut self, begin: &SpanBeginEvent) -> Arc<Correlation> {
        let id: Arc<str> = Arc::from(begin.id.as_str());
        let parent = begin
            .parent_id
            .as_deref()
            .and_then(|p| self.spans.get(p))
            .unwrap_or(&self.outside);
        let place = if begin.kind == "agent" {
            Correlation {
                run_id: Some(Arc::clone(&id)),
                span_id: Some(Arc::clone(&id)),
                parent_span_id: begin.parent_id.as_deref().map(Arc::from),
                agent: Some(Arc::from(begin.name.as_str())),
                tool_call_id: begin.tool_call_id.clone(),
            }
        } else {
            // Other spans (a handoff, a compaction) are inside their parent's run.
            Correlation {
                span_id: Some(Arc::clone(&id)),
                parent_span_id: begin.parent_id.as_deref().map(Arc::from),
                ..Correlation::clone(parent)
            }
        };
        let place = Arc::new(place);
        self.spans.insert(id, Arc::clone(&place));
        place
    }
}

impl StreamSink {
    fn push(&self, span: Option<&str>, event: Event) {
        let waker = {
            let mut state = self.shared.lock();
            if state.unread {
                return;
            }
            state.queue_event(span, event)
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl State {
    /// Queues `event` by the policy; the waker to wake when something changed for the
    /// subscriber.
    fn queue_event(&mut self, span: Option<&str>, event: Event) -> Option<Waker> {
        let delta = is_delta(&event);
        if self.overrun {
            if delta {
                self.lost.deltas += 1;
            } else {
                self.lost.events += 1;
            }
            return None;
        }
        if delta {
            if self.queued_deltas >= self.max_deltas {
                self.lost.deltas += 1;
                self.dropped_since += 1;
                return None;
            }
            self.queued_deltas += 1;
        } else if self.queue.len() - self.queued_deltas >= self.max_events {
            tracing::warn!(
                limit = self.max_events,
                "an event subscriber fell too far behind its run: it is cut off"
            );
            self.overrun = true;
            self.lost.events += 1;
            // Woken to find the end of the stream after what is buffered.
            return self.waker.take();
        }
        let correlation = self.place(span, &event);
        let deltas_dropped = std::mem::take(&mut self.dropped_since);
        self.queue.push_back(RunEvent {
            event,
            correlation,
            deltas_dropped,
        });
        self.waker.take()
    }
}

impl EventSink for StreamSink {
    fn emit(&self, event: Event) {
        self.push(None, event);
    }

    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        self.push(span_id, event);
    }

    fn wants_model_stream(&self) -> bool {
        let state = self.shared.lock();
        state.max_deltas > 0 && !state.unread && !state.overrun
    }
}
