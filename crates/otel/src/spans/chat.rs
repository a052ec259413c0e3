//! `chat {model}` spans: a generation's model, provider, settings, finish reasons and token
//! usage as the GenAI conventions name them.

use std::sync::Arc;

use actuator_events::ModelEvent;
use actuator_model::StopReason;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SpanData;

use super::{Tracker, system_time};
use crate::attrs::*;

/// A model's name split as its spans need it, kept for the next event of the same model:
/// a run calls one model many times, and these are shared, not copied, on each span.
#[derive(Debug)]
pub(super) struct ModelNames {
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

impl Tracker {
    /// The provider and request model of the last generation, for its metrics.
    pub(crate) fn model_names(&self) -> Option<(Option<StringValue>, StringValue)> {
        self.model_names
            .as_ref()
            .map(|n| (n.provider.clone(), n.request.clone()))
    }

    pub(super) fn model(&mut self, model: &ModelEvent, in_span: Option<&str>) -> SpanData {
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
}
