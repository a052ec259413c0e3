//! [`RunContext::generate`]: the one place a model is called, and what the generation reports
//! while it runs (a provider's retries, and its waits, which are not working time).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_events::{Event, ModelEvent, ModelRetryEvent, SharedMessages, unix_seconds_at};
use actuator_model::{
    ChatMessage, GenerateConfig, GenerateObserver, Model, ModelError, ModelOutput, RetryReport,
    observe_generation,
};
use actuator_tool_core::{ToolChoice, ToolInfo};
use tracing::Instrument;

use super::RunContext;
use crate::error::AgentError;

impl RunContext {
    /// Generates with `model`: the one way every agent calls a model. It applies the tool
    /// choice (§1.4), runs the generation inside a `model` tracing span under the run's time
    /// limits and the config's `timeout`, emits a [`ModelEvent`], and records the usage in
    /// every scope, failing when a token, turn or cost limit is then exceeded. Every
    /// generation counts: retries and compaction summaries too, as in the reference.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::{RunContext, run, limits::turn_limit};
    /// use actuator_model::{GenerateConfig, ModelOutput, ScriptedModel};
    /// use actuator_tool_core::ToolChoice;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([ModelOutput::from_content("m", "one"), ModelOutput::from_content("m", "two")]);
    /// let cx = RunContext::new().scoped(&[turn_limit(1)]);
    /// let input = [actuator_model::ChatMessage::user("hi")];
    /// let config = GenerateConfig::default();
    /// let first = cx.generate(&model, &input, &[], &ToolChoice::Auto, &config).await.unwrap();
    /// assert_eq!(first.completion(), "one");
    /// let second = cx.generate(&model, &input, &[], &ToolChoice::Auto, &config).await;
    /// assert!(second.unwrap_err().limit().is_some()); // the second turn is over the limit
    /// # });
    /// ```
    pub async fn generate(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        tools: &[Arc<ToolInfo>],
        tool_choice: &ToolChoice,
        config: &GenerateConfig,
    ) -> Result<ModelOutput, AgentError> {
        let output = self
            .generate_recorded(
                model,
                input,
                None,
                Tools::Borrowed(tools),
                tool_choice,
                config,
            )
            .await?;
        // Unshared unless an event recorded it: then the caller gets its own copy.
        Ok(Arc::try_unwrap(output).unwrap_or_else(|shared| ModelOutput::clone(&shared)))
    }

    /// [`RunContext::generate`] for a conversation that grows between generations, as an
    /// agent's loop does: `recorded` is what this conversation's earlier [`ModelEvent`]s
    /// recorded, and this generation's event shares it, copying only the messages added since
    /// ([`SharedMessages::continued_by`]). Recording a turn then costs O(1) in the length of
    /// the conversation instead of a copy of it. `input` must grow by appending: when it does
    /// not continue `recorded`, the whole input is copied; a message edited in place (same
    /// id) would not be seen, so give such a conversation a fresh `SharedMessages`. Without
    /// an event sink nothing is recorded and `recorded` is left as it is.
    ///
    /// The tools are an `Arc` the event shares rather than copies. The output comes back in
    /// the `Arc` the event holds (not a copy of it): keep it so, for example with
    /// [`AgentState::set_output`](crate::AgentState::set_output).
    pub async fn generate_shared(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        recorded: &mut SharedMessages,
        tools: &Arc<[Arc<ToolInfo>]>,
        tool_choice: &ToolChoice,
        config: &GenerateConfig,
    ) -> Result<Arc<ModelOutput>, AgentError> {
        self.generate_recorded(
            model,
            input,
            Some(recorded),
            Tools::Shared(tools),
            tool_choice,
            config,
        )
        .await
    }

    /// The shared output of either: `recorded` as in `generate_shared`, or none.
    pub(crate) async fn generate_recorded(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        recorded: Option<&mut SharedMessages>,
        shared_tools: Tools<'_>,
        tool_choice: &ToolChoice,
        config: &GenerateConfig,
    ) -> Result<Arc<ModelOutput>, AgentError> {
        self.check_violation().map_err(AgentError::new)?;
        let tools: &[Arc<ToolInfo>] = match shared_tools {
            Tools::Borrowed(t) => t,
            Tools::Shared(t) => t,
        };
        let span = tracing::info_span!("model", model = %model.name());
        async {
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
            let observer = Arc::new(RunObserver {
                cx: self.clone(),
                // Only retry events need the name: no copy when nothing listens.
                model: self.events().map(|_| model.name().to_owned()),
                retries: AtomicU32::new(0),
                waited: Mutex::new(Duration::ZERO),
            });
            let generation = observe_generation(
                observer.clone(),
                model.generate(input, &offered, &choice, config),
            );
            let result = match config.timeout {
                None => self.guard(generation).await,
                Some(after) => self
                    .guard(tokio::time::timeout(after, generation))
                    .await
                    .map(|r| r.unwrap_or(Err(ModelError::Timeout { after }))),
            }
            .map_err(AgentError::new)?
            .map(Arc::new);
            if let (Some(sink), Some((started_at, clock))) = (self.events(), timing) {
                // The observer is no longer shared once the generation is over: its copy of
                // the name becomes the event's.
                let elapsed = clock.elapsed();
                let (name, waited, retries) = match Arc::try_unwrap(observer) {
                    Ok(o) => (
                        o.model,
                        o.waited.into_inner().unwrap_or_default(),
                        o.retries.into_inner(),
                    ),
                    Err(o) => (
                        o.model.clone(),
                        o.waited(),
                        o.retries.load(Ordering::Relaxed),
                    ),
                };
                sink.emit(Event::Model(Box::new(ModelEvent {
                    model: name.unwrap_or_else(|| model.name().to_owned()),
                    input: match recorded {
                        Some(r) => {
                            *r = r.continued_by(input);
                            r.clone()
                        }
                        None => SharedMessages::from(input),
                    },
                    tools: match (&offered, shared_tools) {
                        (Cow::Borrowed(_), Tools::Shared(all)) => Arc::clone(all),
                        _ => Arc::from(offered.as_ref()),
                    },
                    tool_choice: choice.into_owned(),
                    config: config.clone(),
                    output: result.as_ref().ok().map(Arc::clone),
                    error: result.as_ref().err().map(ToString::to_string),
                    started_at,
                    completed_at: started_at + elapsed.as_secs_f64(),
                    working_time: elapsed.saturating_sub(waited).as_secs_f64(),
                    retries,
                })));
            }
            let output = result.map_err(AgentError::new)?;
            self.record_generation(output.usage.as_ref())
                .map_err(AgentError::new)?;
            Ok(output)
        }
        .instrument(span)
        .await
    }
}

/// The tools a generation offers: shared ones the event can share too.
#[derive(Clone, Copy)]
pub(crate) enum Tools<'a> {
    Borrowed(&'a [Arc<ToolInfo>]),
    Shared(&'a Arc<[Arc<ToolInfo>]>),
}

/// Receives one generation's reports: each retry becomes a [`ModelRetryEvent`], each wait is
/// recorded in every scope as waiting (so a working limit's deadline moves past it).
struct RunObserver {
    cx: RunContext,
    model: Option<String>,
    retries: AtomicU32,
    waited: Mutex<Duration>,
}

impl RunObserver {
    fn waited(&self) -> Duration {
        self.waited.lock().map(|w| *w).unwrap_or_default()
    }
}

impl GenerateObserver for RunObserver {
    fn retrying(&self, report: &RetryReport) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        // Credited when the wait begins, so that a working limit's deadline is already past
        // it while it lasts; `waited` settles the difference.
        self.cx.record_waiting(report.wait);
        if let (Some(sink), Some(model)) = (self.cx.events(), &self.model) {
            sink.emit(Event::ModelRetry(
                ModelRetryEvent::new(
                    model.clone(),
                    report.retry,
                    report.wait.as_secs_f64(),
                    report.error.clone(),
                )
                .with_status(report.status),
            ));
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
    }
}
