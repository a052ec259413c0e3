//! From a run's events to OpenTelemetry spans: which span each event makes, its parent, its
//! times and its attributes. Spans are made when their work ends, with the times the events
//! recorded, so nothing here waits or keeps a span's data after it is handed on.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actuator_events::{
    Event, ModelEvent, PendingToolEvent, SpanBeginEvent, SpanEndEvent, ToolEvent,
};
use actuator_model::{CompactString, StopReason};
use actuator_tool_core::TraceContext;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SpanData, SpanEvents, SpanLinks};

use crate::attrs::*;

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

/// A model's name split as its spans need it, kept for the next event of the same model:
/// a run calls one model many times, and these are shared, not copied, on each span.
#[derive(Debug)]
struct ModelNames {
    /// The name as events carry it (`openai/gpt-4.1`).
    full: String,
    provider: Option<StringValue>,
    request: StringValue,
    /// `chat {request}`.
    span_name: String,
}

impl ModelNames {
    fn new(full: &str) -> Self {
        // Models are named `provider/model` (`openai/gpt-4.1`); a name without a provider
        // is the request's model alone.
        let (provider, request) = match full.split_once('/') {
            Some((provider, name)) => (Some(provider), name),
            None => (None, full),
        };
        ModelNames {
            full: full.to_owned(),
            provider: provider.map(|p| StringValue::from(Arc::<str>::from(p))),
            request: StringValue::from(Arc::<str>::from(request)),
            span_name: format!("chat {request}"),
        }
    }
}

/// The conventions' finish reason for a stop reason.
fn finish_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "stop",
        StopReason::MaxTokens => "max_tokens",
        StopReason::ModelLength => "model_length",
        StopReason::ToolCalls => "tool_calls",
        StopReason::ContentFilter => "content_filter",
        _ => "unknown",
    }
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
            _ => None,
        }
    }

    /// The provider and request model of the last generation, for its metrics.
    pub(crate) fn model_names(&self) -> Option<(Option<StringValue>, StringValue)> {
        self.model_names
            .as_ref()
            .map(|n| (n.provider.clone(), n.request.clone()))
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
        Some(self.span_data(
            span.place,
            span.parent,
            SpanKind::Internal,
            name,
            (span.start, system_time(at)),
            attributes,
            Status::Unset,
        ))
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

    fn model(&mut self, model: &ModelEvent, in_span: Option<&str>) -> SpanData {
        let parent = self.or_root(self.parent_for(in_span));
        let place = self.child_of(parent);
        if self
            .model_names
            .as_ref()
            .is_some_and(|n| n.full != model.model)
        {
            self.model_names = None;
        }
        let names = self
            .model_names
            .get_or_insert_with(|| ModelNames::new(&model.model));
        let span_name = names.span_name.clone();
        let mut attributes = Vec::with_capacity(12);
        attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, "chat"));
        attributes.push(KeyValue::new(GEN_AI_REQUEST_MODEL, names.request.clone()));
        if let Some(provider) = &names.provider {
            attributes.push(KeyValue::new(GEN_AI_PROVIDER_NAME, provider.clone()));
        }
        if let Some(t) = model.config.temperature {
            attributes.push(KeyValue::new(GEN_AI_REQUEST_TEMPERATURE, t));
        }
        if let Some(max) = model.config.max_tokens {
            attributes.push(KeyValue::new(GEN_AI_REQUEST_MAX_TOKENS, i64::from(max)));
        }
        if let Some(output) = &model.output {
            if self
                .response_model
                .as_ref()
                .is_none_or(|(name, _)| *name != output.model)
            {
                let value = StringValue::from(Arc::<str>::from(output.model.as_str()));
                self.response_model = Some((output.model.clone(), value));
            }
            if let Some((_, value)) = &self.response_model {
                attributes.push(KeyValue::new(GEN_AI_RESPONSE_MODEL, value.clone()));
            }
            let reasons: Vec<StringValue> = output
                .choices
                .iter()
                .map(|c| finish_reason(c.stop_reason).into())
                .collect();
            attributes.push(KeyValue::new(
                GEN_AI_RESPONSE_FINISH_REASONS,
                Value::Array(reasons.into()),
            ));
            if let Some(usage) = &output.usage {
                let tokens = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                attributes.push(KeyValue::new(
                    GEN_AI_USAGE_INPUT_TOKENS,
                    tokens(usage.input_tokens),
                ));
                attributes.push(KeyValue::new(
                    GEN_AI_USAGE_OUTPUT_TOKENS,
                    tokens(usage.output_tokens),
                ));
                if let Some(read) = usage.input_tokens_cache_read {
                    attributes.push(KeyValue::new(
                        GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
                        tokens(read),
                    ));
                }
                if let Some(reasoning) = usage.reasoning_tokens {
                    attributes.push(KeyValue::new(
                        GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
                        tokens(reasoning),
                    ));
                }
            }
            if self.capture_content {
                let messages: Vec<_> = output.choices.iter().map(|c| &c.message).collect();
                let json = serde_json::to_string(&messages).unwrap_or_default();
                attributes.push(KeyValue::new(GEN_AI_OUTPUT_MESSAGES, self.cut(json)));
            }
        }
        if self.capture_content {
            let json = serde_json::to_string(&model.input).unwrap_or_default();
            attributes.push(KeyValue::new(GEN_AI_INPUT_MESSAGES, self.cut(json)));
        }
        let status = match &model.error {
            Some(error) => {
                attributes.push(KeyValue::new(ERROR_TYPE, "model_error"));
                Status::error(error.clone())
            }
            None => Status::Unset,
        };
        self.span_data(
            place,
            parent.map(|p| p.span),
            SpanKind::Client,
            span_name,
            (
                system_time(model.started_at),
                system_time(model.completed_at),
            ),
            attributes,
            status,
        )
    }

    /// `text` cut to the content limit, on a character boundary.
    fn cut(&self, mut text: String) -> String {
        if text.len() > self.max_content {
            let mut end = self.max_content;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        text
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

/// A tool error's kind, as its `error.type` (`timeout`, `permission`, …).
fn error_kind(error: &actuator_model::ToolCallError) -> String {
    serde_json::to_value(error.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "_OTHER".to_owned())
}

/// Unix seconds as a `SystemTime` (the epoch for a time that is not one).
fn system_time(seconds: f64) -> SystemTime {
    UNIX_EPOCH + Duration::try_from_secs_f64(seconds).unwrap_or_default()
}
