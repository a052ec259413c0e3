//! What a tool can ask of an agent run ([`ToolHost`]): its log entries become info events
//! of the run (`source: "log"`), and sampling goes to the model the run offers for it
//! ([`SamplingModel`], a run resource) through [`RunContext::generate`], so the run's limits,
//! usage and events count it as any generation. Elicitation goes to the run's
//! [`RunElicitation`] handler (an operator, a terminal, a policy), its answer completed with
//! the schema's defaults and checked; without one it says what to add.

use std::sync::Arc;

use actuator_events::{Event, EventSink, InfoEvent};
use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model, StopReason};
use actuator_tool_core::{
    ElicitationHandler, ElicitationRequest, ElicitationResult, HostError, HostFuture, LogEntry,
    LogLevel, SamplingRequest, SamplingResult, SamplingRole, ToolHost,
};
use serde_json::Value;

use super::RunContext;

/// The model a run's tools may ask for completions (`ToolContext::sample`): put it in the
/// run's resources. Without it, sampling inside a run is unsupported and says so.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::SamplingModel;
/// use actuator_model::{ModelOutput, ScriptedModel};
/// use actuator_agent::RunOptions;
///
/// let model = ScriptedModel::new([ModelOutput::from_content("scripted", "A haiku.")]);
/// let options = RunOptions::new().resource(SamplingModel(Arc::new(model)));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct SamplingModel(pub Arc<dyn Model>);

impl std::fmt::Debug for SamplingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SamplingModel")
            .field(&self.0.name())
            .finish()
    }
}

/// Who answers a run's tools when they ask for a person's input (`ToolContext::elicit`): put
/// it in the run's resources. Without it, elicitation inside a run is unsupported and says so.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::{RunElicitation, RunOptions};
/// use actuator_tool_core::{ElicitationRequest, ElicitationResult};
///
/// let decline_all = RunElicitation(Arc::new(|_asked: ElicitationRequest| async {
///     Ok(ElicitationResult::decline())
/// }));
/// let options = RunOptions::new().resource(decline_all);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct RunElicitation(pub Arc<dyn ElicitationHandler>);

impl std::fmt::Debug for RunElicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunElicitation")
    }
}

pub(super) struct RunHost {
    pub(super) events: Option<Arc<dyn EventSink>>,
    pub(super) context: RunContext,
    pub(super) model: Option<SamplingModel>,
    pub(super) elicitation: Option<RunElicitation>,
}

impl ToolHost for RunHost {
    fn log(&self, tool: &str, call_id: &str, entry: LogEntry) -> bool {
        let Some(events) = &self.events else {
            return false;
        };
        // Detail for debugging stays out of the run's record, as a log level would keep it.
        if entry.level < LogLevel::Info {
            return false;
        }
        let text = match &entry.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let logger = entry.logger.map(|l| format!(" {l}")).unwrap_or_default();
        events.emit_in(
            self.context.span_id(),
            Event::Info(InfoEvent {
                source: Some("log".to_owned()),
                message: format!("{tool} ({call_id}){logger} {}: {text}", entry.level),
            }),
        );
        true
    }

    fn elicit(&self, request: ElicitationRequest) -> HostFuture<'_, ElicitationResult> {
        Box::pin(async move {
            let Some(RunElicitation(handler)) = &self.elicitation else {
                return Err(HostError::Unsupported {
                    what: "elicitation",
                    reason: "the run has nobody to ask: put a RunElicitation in its resources"
                        .into(),
                });
            };
            let answer = handler.elicit("tool", request.clone()).await?;
            request.complete(answer)
        })
    }

    fn sample(&self, request: SamplingRequest) -> HostFuture<'_, SamplingResult> {
        Box::pin(async move {
            let Some(SamplingModel(model)) = &self.model else {
                return Err(HostError::Unsupported {
                    what: "sampling",
                    reason: "the run offers no model for tools to ask: put a SamplingModel in \
                             its resources"
                        .into(),
                });
            };
            let mut input = Vec::with_capacity(request.messages.len() + 1);
            if let Some(system) = &request.system_prompt {
                input.push(ChatMessage::system(system.as_str()));
            }
            for message in &request.messages {
                let content = vec![message.content.clone()];
                input.push(match message.role {
                    SamplingRole::User => ChatMessage::user(content),
                    SamplingRole::Assistant => ChatMessage::assistant(content),
                });
            }
            let mut config = GenerateConfig::default();
            config.max_tokens = Some(request.max_tokens);
            config.temperature = request.temperature;
            if !request.stop_sequences.is_empty() {
                config.stop_seqs = Some(request.stop_sequences.clone());
            }
            let output = self
                .context
                .generate(&**model, GenerateRequest::new(&input).config(&config))
                .await
                .map_err(|e| HostError::failed_from("the run's model could not answer", e))?;
            let stop = match output.stop_reason() {
                Some(StopReason::Stop) => "endTurn",
                Some(StopReason::MaxTokens | StopReason::ModelLength) => "maxTokens",
                _ => "other",
            };
            Ok(
                SamplingResult::new(output.completion(), output.model.to_string())
                    .stop_reason(stop),
            )
        })
    }
}
