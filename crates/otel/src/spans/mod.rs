//! From a run's events to OpenTelemetry spans: which span each event makes, its parent, its
//! times and its attributes. Spans are made when their work ends, with the times the events
//! recorded, so nothing here waits or keeps a span's data after it is handed on.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actuator_events::{
    Event, PendingToolEvent, ScoreEvent, SpanBeginEvent, SpanEndEvent, ToolEvent,
};
use actuator_model::CompactString;
use actuator_tool_core::TraceContext;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue, StringValue};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SpanData, SpanEvents, SpanLinks};

use crate::attrs::*;
use crate::evaluation::{self, MAX_RESULTS_PER_SPAN};

mod chat;
use chat::ModelNames;

/// How many Actuator spans (agent runs, handoffs, …) may be open at once, and how many tool
/// calls may be running at once, for this sink to place their children. Past either, a new one
/// is not tracked: its own span is not exported, and its children's spans are exported as
/// the roots of traces of their own. A run that cancels calls or never ends spans cannot make
/// the sink grow past these.
pub const MAX_OPEN_SPANS: usize = 4096;

/// Where a span sits in its trace.
#[derive(Debug, Clone, Copy)]
struct Place {
    trace: TraceId,
    span: SpanId,
}

/// An Actuator span that has begun and not ended.
#[derive(Debug)]
struct OpenSpan {
    id: String,
    place: Place,
    parent: Option<SpanId>,
    start: SystemTime,
    kind: String,
    name: String,
    /// Events recorded on the span while it is open (evaluation results), at most
    /// [`MAX_RESULTS_PER_SPAN`]; the rest are counted.
    events: SpanEvents,
}

/// A tool call that has started and not ended: its span's place, fixed when it starts so
/// that an agent it runs can be its child.
#[derive(Debug)]
struct RunningCall {
    /// The Actuator span the call runs in.
    in_span: Option<Arc<str>>,
    call_id: CompactString,
    place: Place,
    parent: Option<SpanId>,
}

/// What the sink knows of the run so far: the open spans, in the order they began, and the
/// running tool calls. Both bounded by [`MAX_OPEN_SPANS`]; usually a handful.
#[derive(Debug)]
pub(crate) struct Tracker {
    open: Vec<OpenSpan>,
    calls: Vec<RunningCall>,
    ids: RandomIdGenerator,
    scope: InstrumentationScope,
    /// Message contents, tool arguments and results on spans (off by default).
    capture_content: bool,
    /// The longest content attribute, in bytes; longer ones are cut on a character boundary.
    max_content: usize,
    /// The span every span without a parent here is a child of (a caller's trace context).
    root: Option<Place>,
    /// The last model's names, and the last response model's.
    model_names: Option<ModelNames>,
    response_model: Option<(CompactString, StringValue)>,
}

impl Tracker {
    pub(crate) fn new(
        capture_content: bool,
        max_content: usize,
        root: Option<&TraceContext>,
    ) -> Self {
        let root = root.and_then(|t| {
            let trace = TraceId::from_hex(&t.trace_id()).ok()?;
            let span = SpanId::from_hex(&t.parent_id()).ok()?;
            Some(Place { trace, span })
        });
        Tracker {
            open: Vec::new(),
            calls: Vec::new(),
            ids: RandomIdGenerator::default(),
            scope: InstrumentationScope::builder("actuator-otel")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            capture_content,
            max_content,
            root,
            model_names: None,
            response_model: None,
        }
    }

    /// The spans `event` completes (none for most), given the Actuator span it was emitted
    /// in, when the emitter said so.
    /// `at` is when the event was emitted (Unix seconds), the time of a span's begin or end.
    pub(crate) fn record(
        &mut self,
        event: &Event,
        in_span: Option<&str>,
        at: f64,
    ) -> Option<SpanData> {
        match event {
            Event::SpanBegin(begin) => {
                self.begin(begin, at);
                None
            }
            Event::SpanEnd(end) => self.end(end, at),
            Event::ToolPending(pending) => {
                self.call_started(pending, in_span);
                None
            }
            Event::Tool(tool) if !tool.is_pending() => Some(self.tool(tool, in_span)),
            Event::Model(model) => Some(self.model(model, in_span)),
            Event::Score(score) => {
                self.score(score, in_span);
                None
            }
            _ => None,
        }
    }

    /// The place of the span with Actuator id `id`, if open.
    fn open_place(&self, id: &str) -> Option<Place> {
        self.open.iter().rev().find(|s| s.id == id).map(|s| s.place)
    }

    /// `parent`, or the caller's span when there is none here.
    fn or_root(&self, parent: Option<Place>) -> Option<Place> {
        parent.or(self.root)
    }

    /// A new child of `parent` (resolved with [`Tracker::or_root`]), or the root of a new trace.
    fn child_of(&self, parent: Option<Place>) -> Place {
        Place {
            trace: self
                .or_root(parent)
                .map_or_else(|| self.ids.new_trace_id(), |p| p.trace),
            span: self.ids.new_span_id(),
        }
    }

    fn begin(&mut self, begin: &SpanBeginEvent, at: f64) {
        if self.open.len() >= MAX_OPEN_SPANS {
            return;
        }
        let parent = begin.parent_id.as_deref().and_then(|id| {
            // An agent started by a tool call (as_tool, handoff) begins in the span of the
            // agent that called the tool, and is that call's child: the call the event names,
            // or, from an emitter that names none, the one call running there. With several
            // running and none named, the span's parent is the calling agent's.
            let mut running = self
                .calls
                .iter()
                .filter(|c| c.in_span.as_deref() == Some(id));
            if let Some(call_id) = begin.tool_call_id.as_deref() {
                return running
                    .find(|c| c.call_id.as_str() == call_id)
                    .map(|c| c.place)
                    .or_else(|| self.open_place(id));
            }
            match (running.next(), running.next()) {
                (Some(call), None) => Some(call.place),
                _ => self.open_place(id),
            }
        });
        let parent = self.or_root(parent);
        let place = self.child_of(parent);
        self.open.push(OpenSpan {
            id: begin.id.clone(),
            place,
            parent: parent.map(|p| p.span),
            start: system_time(at),
            kind: begin.kind.clone(),
            name: begin.name.clone(),
            events: SpanEvents::default(),
        });
    }

    fn end(&mut self, end: &SpanEndEvent, at: f64) -> Option<SpanData> {
        let index = self.open.iter().rposition(|s| s.id == end.id)?;
        let span = self.open.remove(index);
        // Calls left running in an ended span will not complete here (a cancelled run).
        self.calls
            .retain(|c| c.in_span.as_deref() != Some(span.id.as_str()));
        let (name, mut attributes) = if span.kind == "agent" {
            (
                format!("invoke_agent {}", span.name),
                vec![
                    KeyValue::new(GEN_AI_OPERATION_NAME, "invoke_agent"),
                    KeyValue::new(GEN_AI_AGENT_NAME, span.name),
                ],
            )
        } else {
            (
                format!("{} {}", span.kind, span.name),
                vec![KeyValue::new(ACTUATOR_SPAN_TYPE, span.kind)],
            )
        };
        attributes.push(KeyValue::new(ACTUATOR_SPAN_ID, span.id));
        let mut data = self.span_data(
            span.place,
            span.parent,
            SpanKind::Internal,
            name,
            (span.start, system_time(at)),
            attributes,
            Status::Unset,
        );
        data.events = span.events;
        Some(data)
    }

    /// A scorer's score: evaluation results on the span it was made in (or, from an emitter
    /// that did not say, the span that began last). A score made outside any open span has
    /// nothing to be recorded on and is not exported.
    fn score(&mut self, score: &ScoreEvent, in_span: Option<&str>) {
        let (capture, max_content) = (self.capture_content, self.max_content);
        let span = match in_span {
            Some(id) => self.open.iter_mut().rev().find(|s| s.id == id),
            None => self.open.last_mut(),
        };
        let Some(span) = span else {
            return;
        };
        let room = MAX_RESULTS_PER_SPAN.saturating_sub(span.events.events.len());
        let (results, more) =
            evaluation::results(score, system_time(score.at), capture, room, |t| {
                cut(t, max_content)
            });
        span.events.events.extend(results);
        let more = u32::try_from(more).unwrap_or(u32::MAX);
        span.events.dropped_count = span.events.dropped_count.saturating_add(more);
    }

    /// The span an event emitted in `in_span` (or, when the emitter did not say, in the span
    /// that began last and is still open) belongs to.
    fn parent_for(&self, in_span: Option<&str>) -> Option<Place> {
        match in_span {
            Some(id) => self.open_place(id),
            None => self.open.last().map(|s| s.place),
        }
    }

    fn call_started(&mut self, pending: &PendingToolEvent, in_span: Option<&str>) {
        if self.calls.len() >= MAX_OPEN_SPANS {
            return;
        }
        let in_span = match &pending.span_id {
            Some(id) => Some(Arc::clone(id)),
            None => in_span.map(Arc::from),
        };
        let parent = self.or_root(self.parent_for(in_span.as_deref()));
        let place = self.child_of(parent);
        self.calls.push(RunningCall {
            in_span,
            call_id: pending.id.clone(),
            place,
            parent: parent.map(|p| p.span),
        });
    }

    fn tool(&mut self, tool: &ToolEvent, in_span: Option<&str>) -> SpanData {
        let in_span = tool.span_id.as_deref().or(in_span);
        let started = self
            .calls
            .iter()
            .position(|c| c.call_id.as_str() == &*tool.id && c.in_span.as_deref() == in_span)
            .map(|i| self.calls.swap_remove(i));
        let (place, parent) = match started {
            Some(call) => (call.place, call.parent),
            None => {
                let parent = self.or_root(self.parent_for(in_span));
                (self.child_of(parent), parent.map(|p| p.span))
            }
        };
        let mut attributes = Vec::with_capacity(8);
        attributes.extend([
            KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"),
            KeyValue::new(
                GEN_AI_TOOL_NAME,
                StringValue::from(Arc::clone(&tool.function)),
            ),
            KeyValue::new(GEN_AI_TOOL_CALL_ID, StringValue::from(Arc::clone(&tool.id))),
            KeyValue::new(GEN_AI_TOOL_TYPE, "function"),
        ]);
        if let Some(agent) = &tool.agent {
            attributes.push(KeyValue::new(GEN_AI_AGENT_NAME, agent.clone()));
        }
        let status = match (&tool.fatal, &tool.error) {
            (Some(fatal), _) => {
                attributes.push(KeyValue::new(ERROR_TYPE, "fatal"));
                Status::error(fatal.clone())
            }
            (None, Some(error)) => {
                attributes.push(KeyValue::new(ERROR_TYPE, error_kind(error)));
                Status::error(error.message.clone())
            }
            (None, None) => Status::Unset,
        };
        if self.capture_content {
            attributes.push(KeyValue::new(
                GEN_AI_TOOL_CALL_ARGUMENTS,
                self.cut(tool.arguments.to_string()),
            ));
            attributes.push(KeyValue::new(
                GEN_AI_TOOL_CALL_RESULT,
                self.cut(tool.result.text()),
            ));
        }
        let end = tool.completed_at.unwrap_or(tool.started_at);
        self.span_data(
            place,
            parent,
            SpanKind::Internal,
            format!("execute_tool {}", tool.function),
            (system_time(tool.started_at), system_time(end)),
            attributes,
            status,
        )
    }

    /// `text` cut to the content limit, on a character boundary.
    fn cut(&self, text: String) -> String {
        cut(text, self.max_content)
    }

    #[allow(clippy::too_many_arguments)]
    fn span_data(
        &self,
        place: Place,
        parent: Option<SpanId>,
        kind: SpanKind,
        name: String,
        (start, end): (SystemTime, SystemTime),
        attributes: Vec<KeyValue>,
        status: Status,
    ) -> SpanData {
        SpanData {
            span_context: SpanContext::new(
                place.trace,
                place.span,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: parent.unwrap_or(SpanId::INVALID),
            parent_span_is_remote: false,
            span_kind: kind,
            name: Cow::Owned(name),
            start_time: start,
            end_time: end.max(start),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }
}

/// `text` cut to `max` bytes, on a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// A tool error's kind, as its `error.type` (`timeout`, `permission`, …).
fn error_kind(error: &actuator_model::ToolCallError) -> String {
    serde_json::to_value(error.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "_OTHER".to_owned())
}

/// Unix seconds as a `SystemTime` (the epoch for a time that is not one).
pub(crate) fn system_time(seconds: f64) -> SystemTime {
    UNIX_EPOCH + Duration::try_from_secs_f64(seconds).unwrap_or_default()
}
