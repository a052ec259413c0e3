//! [`RunContext::generate`]: the one place a model is called, and what the generation reports
//! while it runs (a provider's retries, and its waits, which are not working time).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use actuator_events::{Event, ModelEvent, ModelRetryEvent, SharedMessages, unix_seconds};
use actuator_model::{
    ChatMessage, GenerateConfig, GenerateObserver, Model, ModelError, ModelOutput, RetryReport,
    observe_generation,
};
use actuator_tool_core::{ToolChoice, ToolInfo};
use tracing::Instrument;

use super::RunContext;
use crate::agent::AgentError;

impl RunContext {
    /// Generates with `model`: the one way every agent calls a model. It applies the tool
    /// choice (§1.4), runs the generation inside a `model` tracing span under the run's time
    /// limits and the config's `timeout`, emits a [`ModelEvent`], and records the usage in
    /// every scope, failing when a token, turn or cost limit is then exceeded. Every
    /// generation counts: retries and compaction summaries too, as in the reference.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::{RunContext, run, turn_limit};
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
        self.generate_recorded(model, input, None, tools, tool_choice, config)
            .await
    }

    /// [`RunContext::generate`] for a conversation that grows between generations, as an
    /// agent's loop does: `recorded` is what this conversation's earlier [`ModelEvent`]s
    /// recorded, and this generation's event shares it, copying only the messages added since
    /// ([`SharedMessages::continued_by`]). Recording a turn then costs O(1) in the length of
    /// the conversation instead of a copy of it. `input` must grow by appending: when it does
    /// not continue `recorded`, the whole input is copied; a message edited in place (same
    /// id) would not be seen, so give such a conversation a fresh `SharedMessages`. Without
    /// an event sink nothing is recorded and `recorded` is left as it is.
    pub async fn generate_shared(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        recorded: &mut SharedMessages,
        tools: &[Arc<ToolInfo>],
        tool_choice: &ToolChoice,
        config: &GenerateConfig,
    ) -> Result<ModelOutput, AgentError> {
        self.generate_recorded(model, input, Some(recorded), tools, tool_choice, config)
            .await
    }

    async fn generate_recorded(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        recorded: Option<&mut SharedMessages>,
        tools: &[Arc<ToolInfo>],
        tool_choice: &ToolChoice,
        config: &GenerateConfig,
    ) -> Result<ModelOutput, AgentError> {
        self.check_violation().map_err(AgentError::new)?;
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
            let started = SystemTime::now();
            let clock = std::time::Instant::now();
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
            .map_err(AgentError::new)?;
            if let Some(sink) = self.events() {
                sink.emit(Event::Model(Box::new(ModelEvent {
                    model: model.name().to_owned(),
                    input: match recorded {
                        Some(r) => {
                            *r = r.continued_by(input);
                            r.clone()
                        }
                        None => SharedMessages::from(input),
                    },
                    tools: offered.to_vec(),
                    tool_choice: choice.into_owned(),
                    config: config.clone(),
                    output: result.as_ref().ok().cloned(),
                    error: result.as_ref().err().map(ToString::to_string),
                    started_at: unix_seconds(started),
                    completed_at: unix_seconds(SystemTime::now()),
                    working_time: clock
                        .elapsed()
                        .saturating_sub(observer.waited())
                        .as_secs_f64(),
                    retries: observer.retries.load(Ordering::Relaxed),
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
