//! [`OtelSink`]: the event sink that exports a run's spans, and its builder.

use std::sync::Arc;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::{Duration, Instant};

use actuator_events::{Event, EventSink, unix_now};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanProcessor};

use crate::OtelError;
use crate::inbox::Inbox;
use crate::metrics::Metrics;
use crate::spans::Tracker;

/// An [`EventSink`] that turns a run's events into OpenTelemetry spans with the GenAI
/// semantic conventions and exports them in batches (OTLP/HTTP with [`OtelSink::builder`]).
///
/// Each agent run is an `invoke_agent {name}` span, each generation a `chat {model}` span, each
/// tool call an `execute_tool {name}` span, parented as the run nested them (an agent that a
/// tool call runs is that call's child), one trace per run. Spans carry the times the events
/// recorded and are made when their work ends.
///
/// `emit` never blocks and never waits for the collector: it moves the event into a bounded
/// queue, and a thread of the sink's turns events into spans, which go into a second bounded
/// queue that the SDK's thread exports in batches ([`max_queue_size`] bounds both); when
/// either is full (a slow or dead collector) new ones are dropped. So the run's thread pays
/// for one move, and building spans and encoding them happen elsewhere. Call
/// [`OtelSink::shutdown`] at the end to export what is still queued: dropping the sink
/// without it loses the spans not yet exported.
///
/// [`max_queue_size`]: crate::OtelSinkBuilder::max_queue_size
///
/// ```
/// use std::sync::Arc;
/// use actuator_otel::OtelSink;
///
/// let sink = OtelSink::builder()
///     .endpoint("http://127.0.0.1:4318/v1/traces")
///     .service_name("my-agent")
///     .build()?;
/// let sink = Arc::new(sink);
/// // RunOptions::default().events(sink.clone()) sends a run's spans to it.
/// sink.shutdown()?;
/// # Ok::<(), actuator_otel::OtelError>(())
/// ```
pub struct OtelSink {
    events: Arc<Inbox<Message>>,
    outlet: Arc<Outlet>,
    /// How long a flush waits for the sink's own thread.
    timeout: Duration,
}

/// What the sink's thread is sent.
enum Message {
    /// An event, when it was emitted (Unix seconds; read only for span begin and end, which
    /// carry no time of their own), and the span it was emitted in when the emitter said
    /// ([`EventSink::emit_in`]).
    Event(Event, f64, Option<Arc<str>>),
    /// Answer once every event sent before has been turned into spans.
    Flush(SyncSender<()>),
}

/// Where finished spans and generations go, shared by the sink's thread and the sink.
pub(crate) struct Outlet {
    pub(crate) processor: BatchSpanProcessor,
    pub(crate) metrics: Option<Metrics>,
}

impl std::fmt::Debug for OtelSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelSink").finish_non_exhaustive()
    }
}

impl OtelSink {
    /// Exports every span finished so far and waits until the exporter is done with them
    /// (bounded by the export timeout). Blocks the calling thread.
    ///
    /// ```
    /// # let sink = actuator_otel::OtelSink::builder().build()?;
    /// sink.force_flush()?; // nothing queued: returns at once
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn force_flush(&self) -> Result<(), OtelError> {
        self.drain()?;
        let spans = self.outlet.processor.force_flush();
        if let Some(metrics) = &self.outlet.metrics {
            metrics.force_flush().map_err(OtelError::Export)?;
        }
        spans.map_err(OtelError::Export)
    }

    /// Exports what is queued and stops the exporter; later spans are dropped. Blocks the
    /// calling thread (bounded by the export timeout).
    ///
    /// ```
    /// # let sink = actuator_otel::OtelSink::builder().build()?;
    /// sink.shutdown()?;
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn shutdown(&self) -> Result<(), OtelError> {
        self.drain()?;
        let spans = self.outlet.processor.shutdown();
        if let Some(metrics) = &self.outlet.metrics {
            metrics.shutdown().map_err(OtelError::Export)?;
        }
        spans.map_err(OtelError::Export)
    }

    /// Starts the thread that turns events into spans.
    pub(crate) fn start(
        tracker: Tracker,
        outlet: Outlet,
        queue: usize,
        timeout: Duration,
    ) -> Result<OtelSink, OtelError> {
        let events = Arc::new(Inbox::new(queue));
        let outlet = Arc::new(outlet);
        let (inbox, shared) = (Arc::clone(&events), Arc::clone(&outlet));
        std::thread::Builder::new()
            .name("actuator-otel".to_owned())
            .spawn(move || convert(tracker, &shared, &inbox))
            .map_err(OtelError::Thread)?;
        Ok(OtelSink {
            events,
            outlet,
            timeout,
        })
    }

    /// Waits, at most the export timeout, until the sink's thread has turned every event
    /// emitted so far into spans.
    fn drain(&self) -> Result<(), OtelError> {
        let deadline = Instant::now() + self.timeout;
        let (ack, done) = sync_channel(1);
        let mut message = Message::Flush(ack);
        while let Err(again) = self.events.push(message) {
            if Instant::now() >= deadline {
                return Err(OtelError::Timeout(self.timeout));
            }
            message = again;
            self.events.wake();
            std::thread::sleep(Duration::from_millis(1));
        }
        self.events.wake();
        let left = deadline.saturating_duration_since(Instant::now());
        done.recv_timeout(left)
            .map_err(|_| OtelError::Timeout(self.timeout))
    }
}

impl Drop for OtelSink {
    fn drop(&mut self) {
        // The thread ends once it has drained the queue; what `shutdown` did not export is
        // dropped with the processor.
        self.events.close();
    }
}

/// The sink's thread: events in, spans and metrics out, until the sink is dropped.
fn convert(mut tracker: Tracker, outlet: &Outlet, inbox: &Inbox<Message>) {
    inbox.receive(|message| {
        let (event, at, in_span) = match message {
            Message::Event(event, at, in_span) => (event, at, in_span),
            Message::Flush(ack) => {
                let _ = ack.send(());
                return;
            }
        };
        if let Some(span) = tracker.record(&event, in_span.as_deref(), at) {
            outlet.processor.on_end(span);
        }
        if let (Event::Model(model), Some(metrics)) = (&event, &outlet.metrics)
            && let Some((provider, request)) = tracker.model_names()
        {
            metrics.record(model, provider.as_ref(), &request);
        }
    });
}

impl OtelSink {
    fn send(&self, event: Event, in_span: Option<Arc<str>>) {
        let at = match &event {
            Event::SpanBegin(_) | Event::SpanEnd(_) => unix_now(),
            _ => 0.0,
        };
        // A full queue drops the event: the run is never slowed by its export.
        let _ = self.events.push(Message::Event(event, at, in_span));
    }
}

impl EventSink for OtelSink {
    fn emit(&self, event: Event) {
        self.send(event, None);
    }

    /// Keeps the span a model or score event was emitted in (other events carry their own,
    /// or need none), so that generations of sub-agents running side by side are placed
    /// under their own agent, not under whichever began last, and a score on its scorer's
    /// span.
    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        let in_span = match &event {
            Event::Model(_) | Event::Score(_) => span_id.map(Arc::from),
            _ => None,
        };
        self.send(event, in_span);
    }
}
