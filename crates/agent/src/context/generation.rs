//! [`RunContext::generate`]: the one place a model is called, and what the generation reports
//! while it runs (a provider's retries, and its waits, which are not working time).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_events::{
    Event, ModelEvent, ModelRetryEvent, ModelStreamEvent, SharedMessages, StreamEvent,
    unix_seconds_at,
};
use actuator_model::{
    GenerateObserver, GenerateRequest, Model, ModelError, ModelOutput, RetryReport, StreamDelta,
};
use actuator_tool_core::{ToolChoice, TraceContext};
use tracing::Instrument;

use super::RunContext;
use crate::error::AgentError;

/// The number of the next generation whose deltas a sink wants (see [`ModelStreamEvent`]).
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

impl RunContext {
    /// Generates with `model`: the one way every agent calls a model. It applies the
    /// request's tool choice (§1.4), runs the generation inside a `model` tracing span under
    /// the run's time limits and the config's `timeout`, emits a [`ModelEvent`], and records
    /// the usage in every scope, failing when a token, turn or cost limit is then exceeded.
    /// Every generation counts: retries and compaction summaries too, as in the reference.
    ///
    /// The provider's retries become [`ModelRetryEvent`]s and its waits are recorded as
    /// waiting, not working time; an observer already on the request hears of them too. When
    /// the sink wants stream deltas ([`EventSink::wants_model_stream`](actuator_events::EventSink::wants_model_stream)),
    /// a streaming provider's deltas become [`ModelStreamEvent`]s, in the run's span, before
    /// the [`ModelEvent`], which carries the same `generation` number.
    ///
    /// ```
    /// use actuator_agent::{RunContext, limits::turn_limit};
    /// use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, ModelOutput, ScriptedModel};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([ModelOutput::from_content("m", "one"), ModelOutput::from_content("m", "two")]);
    /// let cx = RunContext::new().scoped(&[turn_limit(1)]);
    /// let input = [ChatMessage::user("hi")];
    /// let config = GenerateConfig::default();
    /// let first = cx.generate(&model, GenerateRequest::new(&input).config(&config)).await.unwrap();
    /// assert_eq!(first.completion(), "one");
    /// let second = cx.generate(&model, GenerateRequest::new(&input)).await;
    /// assert!(second.unwrap_err().limit().is_some()); // the second turn is over the limit
    /// # });
    /// ```
    pub async fn generate(
        &self,
        model: &dyn Model,
        request: GenerateRequest<'_>,
    ) -> Result<ModelOutput, AgentError> {
        let output = self.generate_recorded(model, request, None).await?;
        // Unshared unless an event recorded it: then the caller gets its own copy.
        Ok(Arc::try_unwrap(output).unwrap_or_else(|shared| ModelOutput::clone(&shared)))
    }

    /// [`RunContext::generate`] for a conversation that grows between generations, as an
    /// agent's loop does: `recorded` is what this conversation's earlier [`ModelEvent`]s
    /// recorded, and this generation's event shares it, copying only the messages added since
    /// ([`SharedMessages::continued_by`]). Recording a turn then costs O(1) in the length of
    /// the conversation instead of a copy of it. `request.input` must grow by appending: when
    /// it does not continue `recorded`, the whole input is copied; a message edited in place
    /// (same id) would not be seen, so give such a conversation a fresh `SharedMessages`.
    /// Without an event sink nothing is recorded and `recorded` is left as it is.
    ///
    /// `recorded` is an argument rather than part of the request because it is the
    /// recording's state, not the model's: the model never sees it, it is written as well as
    /// read (the event's messages become the next turn's `recorded`), and it is a type of the
    /// events layer, which the model layer does not know. Tools given with
    /// [`GenerateRequest::shared_tools`] are shared by the event rather than copied.
    ///
    /// The output comes back in the `Arc` the event holds (not a copy of it): keep it so, for
    /// example with [`AgentState::set_output`](crate::AgentState::set_output).
    ///
    /// ```
    /// use actuator_agent::RunContext;
    /// use actuator_events::{EventLog, SharedMessages};
    /// use actuator_model::{ChatMessage, GenerateRequest, ModelOutput, ScriptedModel};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([ModelOutput::from_content("m", "one"), ModelOutput::from_content("m", "two")]);
    /// let log = EventLog::new();
    /// let cx = RunContext::with_events(log.clone());
    /// let mut recorded = SharedMessages::new();
    /// let mut messages = vec![ChatMessage::user("hi")];
    /// let first = cx.generate_shared(&model, GenerateRequest::new(&messages), &mut recorded).await.unwrap();
    /// messages.push(ChatMessage::Assistant(Box::new(first.message().unwrap().clone())));
    /// messages.push(ChatMessage::user("again"));
    /// cx.generate_shared(&model, GenerateRequest::new(&messages), &mut recorded).await.unwrap();
    /// // The second event's input continues the first's rather than copying it.
    /// assert_eq!(recorded.len(), 3);
    /// # });
    /// ```
    pub async fn generate_shared(
        &self,
        model: &dyn Model,
        request: GenerateRequest<'_>,
        recorded: &mut SharedMessages,
    ) -> Result<Arc<ModelOutput>, AgentError> {
        self.generate_recorded(model, request, Some(recorded)).await
    }

    /// The shared output of either: `recorded` as in `generate_shared`, or none (the input
    /// is then recorded whole).
    pub(crate) async fn generate_recorded(
        &self,
        model: &dyn Model,
        request: GenerateRequest<'_>,
        recorded: Option<&mut SharedMessages>,
    ) -> Result<Arc<ModelOutput>, AgentError> {
        self.check_violation().map_err(AgentError::new)?;
        let span = tracing::info_span!("model", model = %model.name());
        async {
            let (tools, tool_choice) = (request.tools, request.tool_choice);
            // Auto and Any offer every tool: skip the copy resolve_tool_choice would make.
            let (offered, choice) = match tool_choice {
                ToolChoice::Auto | ToolChoice::Any if !tools.is_empty() => {
                    (Cow::Borrowed(tools), Cow::Borrowed(tool_choice))
                }
                _ => {
                    let (offered, choice) = actuator_model::resolve_tool_choice(tools, tool_choice);
                    (Cow::Owned(offered), Cow::Owned(choice))
                }
            };
            // Clocks only for the event: one read at each end (the wall-clock time derived).
            let timing = self.events().map(|_| {
                let clock = Instant::now();
                (unix_seconds_at(clock), clock)
            });
            // A number for the generation's deltas only when the sink wants them: otherwise no
            // provider builds one.
            let generation_id = self
                .events()
                .filter(|sink| sink.wants_model_stream())
                .map(|_| NEXT_GENERATION.fetch_add(1, Ordering::Relaxed));
            let observer = RunObserver {
                cx: self,
                model: model.name(),
                inner: request.observer,
                retries: AtomicU32::new(0),
                waited: Mutex::new(Duration::ZERO),
                generation: generation_id,
                streamed: AtomicBool::new(false),
            };
            let config = request.config;
            let mut offered_request = request
                .tools(&offered)
                .tool_choice(&choice)
                .observer(&observer);
            // The run's trace context reaches the provider's HTTP request, as it reaches MCP
            // calls' `_meta`, unless the caller gave the request its own.
            if offered_request.trace.is_none() {
                offered_request.trace = self.resource::<TraceContext>();
            }
            // Read before the request moves into the model: the list the event can share.
            let shared_tools = offered_request.tools_arc();
            let input = offered_request.input;
            let generation = model.generate(offered_request);
            let result = match config.timeout {
                None => self.guard(generation).await,
                Some(after) => self
                    .guard(tokio::time::timeout(after, generation))
                    .await
                    .map(|r| r.unwrap_or(Err(ModelError::Timeout { after }))),
            }
            .map_err(AgentError::new)?
            .map(|output| Arc::new(self.priced(model.name(), output)));
            if let (Some(sink), Some((started_at, clock))) = (self.events(), timing) {
                let elapsed = clock.elapsed();
                let waited = observer.waited();
                sink.emit_in(
                    self.span_id(),
                    Event::Model(Box::new(ModelEvent {
                        model: model.name().to_owned(),
                        input: match recorded {
                            Some(r) => {
                                *r = r.continued_by(input);
                                r.clone()
                            }
                            None => SharedMessages::from(input),
                        },
                        tools: shared_tools.map_or_else(|| Arc::from(offered.as_ref()), Arc::clone),
                        tool_choice: choice.into_owned(),
                        config: config.clone(),
                        output: result.as_ref().ok().map(Arc::clone),
                        error: result.as_ref().err().map(ToString::to_string),
                        started_at,
                        completed_at: started_at + elapsed.as_secs_f64(),
                        working_time: elapsed.saturating_sub(waited).as_secs_f64(),
                        retries: observer.retries.load(Ordering::Relaxed),
                        generation: generation_id,
                    })),
                );
            }
            let output = result.map_err(AgentError::new)?;
            self.check_priced(model.name(), &output)?;
            self.record_generation(output.usage.as_ref())
                .map_err(AgentError::new)?;
            Ok(output)
        }
        .instrument(span)
        .await
    }
}

/// Receives one generation's reports: each retry becomes a [`ModelRetryEvent`], each wait is
/// recorded in every scope as waiting (so a working limit's deadline moves past it), and,
/// when the sink wants them, each delta a [`ModelStreamEvent`] (a retry after deltas also a
/// [`StreamEvent::Retry`] boundary).
///
/// It lives on the generation's stack and the request borrows it: one generation costs no
/// allocation for it. An observer the caller put on the request hears everything after it.
struct RunObserver<'g> {
    cx: &'g RunContext,
    model: &'g str,
    inner: Option<&'g dyn GenerateObserver>,
    retries: AtomicU32,
    waited: Mutex<Duration>,
    /// The number of the generation's deltas, when the sink wants them.
    generation: Option<u64>,
    /// Whether a delta of this generation reached the sink (a retry then discards it).
    streamed: AtomicBool,
}

impl RunObserver<'_> {
    fn waited(&self) -> Duration {
        self.waited.lock().map(|w| *w).unwrap_or_default()
    }

    fn stream(&self, generation: u64, stream: StreamEvent) {
        if let Some(sink) = self.cx.events() {
            sink.emit_in(
                self.cx.span_id(),
                Event::ModelStream(ModelStreamEvent::new(generation, stream)),
            );
        }
    }
}

impl GenerateObserver for RunObserver<'_> {
    fn retrying(&self, report: &RetryReport) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        // Credited when the wait begins, so that a working limit's deadline is already past
        // it while it lasts; `waited` settles the difference.
        self.cx.record_waiting(report.wait);
        if let Some(sink) = self.cx.events() {
            sink.emit_in(
                self.cx.span_id(),
                Event::ModelRetry(
                    ModelRetryEvent::new(
                        self.model,
                        report.retry,
                        report.wait.as_secs_f64(),
                        report.error.clone(),
                    )
                    .with_status(report.status),
                ),
            );
        }
        // The boundary goes out when the failed attempt streamed something to discard (as the
        // reference's `StreamRetryEvent`), before any delta of the next attempt.
        if let Some(generation) = self.generation
            && self.streamed.swap(false, Ordering::Relaxed)
        {
            let attempt = report.retry.saturating_add(1);
            self.stream(generation, StreamEvent::Retry { attempt });
        }
        if let Some(inner) = self.inner {
            inner.retrying(report);
        }
    }

    fn wants_deltas(&self) -> bool {
        self.generation.is_some() || self.inner.is_some_and(|i| i.wants_deltas())
    }

    fn delta(&self, delta: &StreamDelta<'_>) {
        if let Some(generation) = self.generation
            && let Some(stream) = StreamEvent::from_delta(delta)
        {
            self.streamed.store(true, Ordering::Relaxed);
            self.stream(generation, stream);
        }
        if let Some(inner) = self.inner.filter(|i| i.wants_deltas()) {
            inner.delta(delta);
        }
    }

    fn queueing(&self, slice: Duration) {
        // In advance, as a retry's wait: the working deadline is past the slice while it lasts.
        self.cx.record_waiting(slice);
        if let Some(inner) = self.inner {
            inner.queueing(slice);
        }
    }

    fn queued(&self, slice: Duration, waited: Duration) {
        if let Ok(mut w) = self.waited.lock() {
            *w += waited;
        }
        if waited > slice {
            self.cx.record_waiting(waited - slice);
        } else {
            self.cx.unrecord_waiting(slice - waited);
        }
        if let Some(inner) = self.inner {
            inner.queued(slice, waited);
        }
    }

    fn waited(&self, report: &RetryReport, waited: Duration) {
        if let Ok(mut w) = self.waited.lock() {
            *w += waited;
        }
        if waited > report.wait {
            self.cx.record_waiting(waited - report.wait);
        } else {
            self.cx.unrecord_waiting(report.wait - waited);
        }
        if let Some(inner) = self.inner {
            inner.waited(report, waited);
        }
    }
}
