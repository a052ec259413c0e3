//! One call from start to event: the pending event, the pipeline (under an operator's cancel
//! when a canceller is given), the tool message, and the completed event.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actuator_events::{
    ApprovalEvent, Event, EventSink, InfoEvent, PendingToolEvent, RunsAgent, ToolCallAgent,
    ToolEvent, unix_now, unix_seconds_at,
};
use actuator_model::{ChatMessage, MessageContent, ModelOutput, ToolCall, ToolCallError};
use actuator_tool_core::{ToolErrorKind, ToolOutput, truncate_tool_output};
use futures_util::future::Abortable;
use serde_json::{Map, Value};
use tracing::Instrument;
use tracing::instrument::Instrumented;

use crate::call::{Attempt, CallNames, Reviews, Runner, Stop};
use crate::cancel::{CANCELLED_BY_OPERATOR, CANCELLED_BY_OPERATOR_KIND, ToolCallCanceller};
use crate::error::ExecError;
use crate::options::CANCELLED_BY_SIBLING;
use crate::pipeline::{Checked, Failed, Landed};

/// A finished call.
pub(crate) struct CallDone {
    pub(crate) message: ChatMessage,
    pub(crate) extra: Vec<ChatMessage>,
    /// Boxed: only conversation-taking tools return one, and every call's result is moved.
    pub(crate) output: Option<Box<ModelOutput>>,
    pub(crate) waiting: Duration,
}

impl Runner<'_> {
    fn sink(&self) -> Option<&dyn EventSink> {
        self.options.events.as_deref()
    }

    fn emit(&self, event: Box<ToolEvent>) {
        if let Some(sink) = self.sink() {
            sink.emit(Event::Tool(event));
        }
    }

    /// A call's review decisions, after its event (as the reference's log has them).
    fn emit_reviews(&self, reviews: Option<Reviews>) {
        if let Some((sink, reviews)) = self.sink().zip(reviews) {
            for review in reviews.0 {
                sink.emit(Event::Review(Box::new(review)));
            }
        }
    }

    fn info(&self, message: String) {
        if let Some(sink) = self.sink() {
            sink.emit_in(
                self.options.span_id.as_deref(),
                Event::Info(InfoEvent {
                    source: None,
                    message,
                }),
            );
        }
    }

    pub(crate) fn stopped(
        &self,
        stop: Stop,
        call: &ToolCall,
        done: Vec<Option<CallDone>>,
    ) -> ExecError {
        let mut messages = Vec::new();
        for d in done.into_iter().flatten() {
            messages.push(d.message);
            messages.extend(d.extra);
        }
        let function = call.function.to_string();
        let call_id = call.id.to_string();
        match stop {
            Stop::Fatal(cause) => ExecError::Fatal {
                function,
                call_id,
                cause,
                messages,
            },
            Stop::Limit(limit) => ExecError::Limit {
                limit,
                function,
                call_id,
                messages,
            },
            Stop::Terminated => ExecError::Terminated {
                function,
                call_id,
                messages,
            },
            Stop::BadModify { modified } => ExecError::InvalidModification {
                original: function,
                modified,
                messages,
            },
            Stop::ReviewTerminated(_) => ExecError::ReviewTerminated {
                function,
                call_id,
                messages,
            },
        }
    }

    /// The result of a call cancelled because a parallel sibling stopped the run: the
    /// reference's cancelled message, and its event marked `failed`.
    pub(crate) fn cancelled(&self, call: &ToolCall) -> CallDone {
        let error = ToolCallError {
            kind: ToolErrorKind::Cancelled,
            message: CANCELLED_BY_SIBLING.to_owned(),
        };
        let message = ChatMessage::tool(
            "",
            call.id.clone(),
            call.function.clone(),
            Some(error.clone()),
        );
        if self.sink().is_some() {
            let now = unix_now();
            let arguments = call
                .arguments
                .to_shared_value()
                .unwrap_or_else(|_| Arc::new(Value::Object(Map::new())));
            let mut event = self.tool_event(CallNames::of(call), arguments, now);
            event.pending = None;
            event.error = Some(error);
            event.completed_at = Some(now);
            event.working_time = Some(0.0);
            event.failed = Some(true);
            event.message_id = Some(message.id().into());
            self.info(format!(
                "Tool call '{}' was cancelled because a parallel sibling tool call raised an exception.",
                call.function
            ));
            self.emit(event);
        }
        CallDone {
            message,
            extra: Vec::new(),
            output: None,
            waiting: Duration::ZERO,
        }
    }

    /// The event of the call `names` names, still without its result; `arguments` are the
    /// call's, shared with its pending event. Boxed from the start, as the sink takes it: the
    /// event is large, and is then moved as a pointer. It takes the names and arguments it
    /// keeps, so that a call's event moves them in rather than paying an atomic count for each
    /// copy.
    fn tool_event(
        &self,
        names: CallNames,
        arguments: Arc<Value>,
        started_at: f64,
    ) -> Box<ToolEvent> {
        let mut event = Box::new(ToolEvent::pending(
            names.id,
            names.function,
            arguments,
            started_at,
        ));
        event.span_id.clone_from(&self.options.span_id);
        event
    }

    /// Runs one call in its own `tool_call` span.
    ///
    /// A plain function around the call's future, not an `async fn` around an instrumented
    /// block: each layer of a future is built and then moved into the next, a copy of its
    /// whole state (several hundred bytes) that every call paid once more per layer.
    pub(crate) fn run_call<'s>(
        &'s self,
        call: &'s ToolCall,
    ) -> Instrumented<impl Future<Output = Result<CallDone, Stop>> + Send + 's> {
        let span = tracing::info_span!("tool_call", tool = %call.function, call_id = %call.id);
        self.run_call_in_span(call).instrument(span)
    }

    async fn run_call_in_span(&self, call: &ToolCall) -> Result<CallDone, Stop> {
        // Without a sink no event is seen: skip building them, reading the clocks for
        // them, and the per-call slot a tool that runs an agent fills in (which only such
        // tools get: it costs a copy of the run's extensions).
        let recording = self.options.events.is_some();
        // One clock read at each end of a call: the wall-clock start is derived from the
        // monotonic one, the end is the start plus the elapsed time.
        let recorded = recording.then(|| {
            let clock = Instant::now();
            Recorded {
                started_at: unix_seconds_at(clock),
                clock,
                // Copied once, shared by the call's two events.
            }
        });
        // The checks wait for nothing and emit nothing, so the pending event still comes
        // before anything else of this call, and it shares the one copy of the arguments
        // they made (as do the tool and the completed event).
        let Checked { def, arguments } = self.check(call);
        let found = def.as_ref().ok().copied();
        let names = self.call_names(call, found);
        let mut extensions = None;
        if let Some(r) = &recorded {
            if let Some(sink) = self.sink().filter(|s| s.wants_pending_tool_events()) {
                let mut pending = PendingToolEvent::new(
                    call.id.clone(),
                    call.function.clone(),
                    Arc::clone(&arguments),
                    r.started_at,
                );
                pending.span_id.clone_from(&self.options.span_id);
                sink.emit(Event::ToolPending(pending));
            }
            let runs_agent = found.is_some_and(|def| def.extensions().get::<RunsAgent>().is_some());
            if runs_agent {
                let mut own = self.options.extensions.clone();
                own.insert(ToolCallAgent::default());
                extensions = Some(own);
            }
        }
        let extensions = extensions.as_ref().unwrap_or(&self.options.extensions);
        let mut attempt = Attempt {
            approval: None,
            approval_wait: Duration::ZERO,
            reviews: None,
        };
        // The pipeline is built where it is awaited, not first in a variable of its own:
        // a move of its state saved. Under a canceller (rare) it is boxed, so that the
        // abortable form adds nothing to every call's future.
        let outcome = match def {
            // A call that failed its checks runs nothing more.
            Err(failed) => Some(Err(failed)),
            Ok(def) => match extensions.get::<ToolCallCanceller>() {
                None => Some(
                    self.pipeline(call, &names, def, &arguments, extensions, &mut attempt)
                        .await,
                ),
                Some(canceller) => {
                    let (_registered, registration) = canceller.register(&call.id);
                    let pipeline =
                        self.pipeline(call, &names, def, &arguments, extensions, &mut attempt);
                    Box::pin(Abortable::new(pipeline, registration)).await.ok()
                }
            },
        };
        let finished = Finished {
            times: recorded.map(|r| {
                let elapsed = r.clock.elapsed();
                Times {
                    started_at: r.started_at,
                    completed_at: r.started_at + elapsed.as_secs_f64(),
                    working_time: elapsed.saturating_sub(attempt.approval_wait).as_secs_f64(),
                    arguments,
                }
            }),
            waiting: attempt.approval_wait,
            approval: attempt.approval,
            reviews: attempt.reviews,
            agent: extensions.get::<ToolCallAgent>(),
            names,
        };
        match outcome {
            Some(outcome) => self.finish(call, outcome, finished),
            None => {
                self.info(format!(
                    "Tool call '{}' was cancelled by operator.",
                    call.function
                ));
                let error = ToolCallError {
                    kind: CANCELLED_BY_OPERATOR_KIND,
                    message: CANCELLED_BY_OPERATOR.to_owned(),
                };
                let outcome = Err(Failed::Cancelled(Box::new(error)));
                self.finish(call, outcome, finished)
            }
        }
    }

    /// Turns a call's outcome into its tool message (or the stop) and its completed event.
    fn finish(
        &self,
        call: &ToolCall,
        outcome: Result<Landed, Failed>,
        finished: Finished<'_>,
    ) -> Result<CallDone, Stop> {
        // The message copies the call's id (kept inline when short) and shares the tool's
        // name; the completed event then takes the names and arguments over.
        let message = ChatMessage::tool(
            "",
            finished.names.id.as_ref(),
            Arc::clone(&finished.names.function),
            None,
        );
        let names = finished.names;
        let reviews = finished.reviews;
        let mut event = finished.times.map(|times| {
            let mut e = self.tool_event(names, times.arguments, times.started_at);
            e.pending = None;
            e.completed_at = Some(times.completed_at);
            e.working_time = Some(times.working_time);
            e.approval = finished.approval;
            if let Some(modified) = e
                .approval
                .as_ref()
                .and_then(|a| a.modified_arguments.as_ref())
            {
                e.arguments = Arc::new(Value::Object(modified.clone()));
            }
            if let Some(slot) = finished.agent {
                e.agent = slot.agent();
                e.agent_span_id = slot.agent_span_id();
            }
            e
        });
        let mut done = CallDone {
            message,
            extra: Vec::new(),
            output: None,
            waiting: finished.waiting,
        };
        let (content, error, truncated) = match outcome {
            Ok(Landed::Output { output, limit }) => {
                let (content, truncated) = self.finish_output(&call.function, output, limit);
                (content, None, truncated)
            }
            Ok(Landed::Conversation(out)) => {
                let out = *out;
                done.extra = out.messages;
                done.output = out.output.map(Box::new);
                (out.content, None, None)
            }
            Err(Failed::Tool(err, limit)) => {
                let (content, truncated) = match err.output() {
                    Some(partial) => {
                        self.finish_output(&call.function, ToolOutput::Text(partial.into()), limit)
                    }
                    None => (MessageContent::default(), None),
                };
                tracing::debug!(kind = %err.kind(), message = err.message(), "tool error");
                (content, Some(ToolCallError::from(&*err)), truncated)
            }
            Err(Failed::Cancelled(error)) => (MessageContent::default(), Some(*error), None),
            Err(Failed::Stop(stop)) => {
                let mut stop = *stop;
                let fatal = match &stop {
                    Stop::Fatal(cause) => cause.to_string(),
                    Stop::Limit(limit) => limit.to_string(),
                    Stop::Terminated => "Tool call approver requested termination.".to_owned(),
                    Stop::BadModify { modified } => format!("modified call names '{modified}'"),
                    Stop::ReviewTerminated(_) => crate::review::REVIEW_TERMINATED.to_owned(),
                };
                tracing::warn!(fatal = fatal.as_str(), "tool call stopped the run");
                if let Some(mut e) = event {
                    e.fatal = Some(fatal);
                    e.failed = Some(true);
                    // The reviewed result stays on the event (moved: the stop keeps none).
                    if let Stop::ReviewTerminated(reviewed) = &mut stop {
                        reviewed.record(&mut e);
                    }
                    self.emit(e);
                }
                self.emit_reviews(reviews);
                return Err(stop);
            }
        };
        if let Some(mut e) = event.take() {
            e.result = content.clone();
            e.error.clone_from(&error);
            e.truncated = truncated;
            e.message_id = Some(done.message.id().into());
            self.emit(e);
        }
        self.emit_reviews(reviews);
        if let ChatMessage::Tool(m) = &mut done.message {
            m.content = content;
            m.error = error.map(Box::new);
        }
        Ok(done)
    }

    /// Truncates text output to the call's limit.
    fn finish_output(
        &self,
        function: &str,
        output: ToolOutput,
        limit: usize,
    ) -> (MessageContent, Option<(usize, usize)>) {
        match output {
            ToolOutput::Text(text) => match truncate_tool_output(function, &text, limit) {
                Some(t) => (
                    MessageContent::Text(t.output.into()),
                    Some((t.original_bytes, t.limit)),
                ),
                None => (MessageContent::Text(text), None),
            },
            ToolOutput::Content(parts) => (MessageContent::Parts(parts), None),
        }
    }
}

/// What the runner knows of a call once its pipeline has ended.
struct Finished<'a> {
    /// The event's times; `None` when no event is recorded.
    times: Option<Times>,
    waiting: Duration,
    approval: Option<Box<ApprovalEvent>>,
    reviews: Option<Reviews>,
    agent: Option<&'a ToolCallAgent>,
    names: CallNames,
}

/// When a recorded call started: Unix seconds, and the monotonic clock.
struct Recorded {
    started_at: f64,
    clock: Instant,
}

/// When a recorded call ran (Unix seconds), how long it worked, and its arguments as its
/// pending event has them.
struct Times {
    started_at: f64,
    completed_at: f64,
    working_time: f64,
    arguments: Arc<Value>,
}
