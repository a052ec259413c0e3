//! Anthropic's Messages API.

mod request;
pub(crate) mod response;
pub(crate) mod stream;

use std::sync::Arc;
use std::time::Instant;

use actuator_dialect::Dialect;
use actuator_model::{
    BoxFuture, GenerateConfig, GenerateRequest, Model, ModelError, ModelOutput, StopReason,
};

use actuator_tool_core::ToolInfo;
use serde_json::Value;

use crate::check::{Rules, check_conversation};
use crate::deltas::Deltas;
use crate::error::ProviderError;
use crate::http::{Failure, StatusFailure, Transport};
use crate::options::{ModelOptions, merged};
use crate::resolve::Resolved;

/// Above this `max_tokens` answers are streamed unless [`ModelOptions::stream`] says otherwise:
/// Anthropic refuses long non-streamed requests.
const STREAM_ABOVE_MAX_TOKENS: u64 = 16_000;

/// The API version sent as `anthropic-version`.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A model reached through Anthropic's Messages API (`POST {base_url}/v1/messages`), made by
/// [`get_model`](crate::get_model) for `anthropic/…`.
///
/// - System messages become `system`; turns alternate, consecutive messages of one role merged;
///   the results of one turn's tool calls are `tool_result` blocks at the start of one user
///   message, failed ones with `is_error`.
/// - Thinking blocks come back as reasoning content with their signatures and are replayed
///   as they came (redacted ones too); reasoning without a signature (from another provider)
///   is not sent.
/// - Tools go out through [`actuator_dialect::anthropic`]; `ToolChoice` maps to `auto`, `any`
///   or `tool`; `parallel_tool_calls: false` sets `disable_parallel_tool_use`. Parameter names
///   the dialect renames (Anthropic rejects names outside `^[a-zA-Z0-9_.-]{1,64}$`) come back
///   under the tool's own names ([`actuator_dialect::restore_argument_names`]).
/// - `max_tokens` is required by the API: 4096 unless the config says. `temperature` and
///   `top_p` are not part of the Messages API and are not sent; `stop_seqs` are
///   `stop_sequences`.
/// - Streamed (server-sent events, aggregated into the same output) when
///   [`ModelOptions::stream`] says so, or by default when `max_tokens` is above 16,000.
/// - Stop reasons: `max_tokens` → `max_tokens`, `tool_use` → `tool_calls`, `refusal` →
///   `content_filter`, `model_context_window_exceeded` and a "prompt is too long" error →
///   `model_length`; HTTP 529 (overloaded) is retried.
pub struct AnthropicMessages {
    name: String,
    model: String,
    transport: Transport,
    config: GenerateConfig,
    stream: Option<bool>,
}

impl std::fmt::Debug for AnthropicMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicMessages")
            .field("name", &self.name)
            .field("base_url", &self.transport.shown_base_url())
            .finish_non_exhaustive()
    }
}

impl AnthropicMessages {
    pub(crate) fn new(
        name: &str,
        resolved: Resolved,
        options: &ModelOptions,
    ) -> Result<Self, ProviderError> {
        let mut headers = vec![("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned())];
        if let Some(key) = &resolved.key {
            headers.push(("x-api-key".to_owned(), key.clone()));
        }
        let transport = Transport::for_model(name, &resolved, headers, options)?;
        Ok(AnthropicMessages {
            name: name.to_owned(),
            model: resolved.model,
            transport,
            config: options.config.clone(),
            stream: options.stream,
        })
    }

    async fn run(&self, request: &GenerateRequest<'_>) -> Result<ModelOutput, ProviderError> {
        let (input, tools, tool_choice) = (request.input, request.tools, request.tool_choice);
        let invalid = |message: String| ProviderError::InvalidConversation {
            provider: self.transport.provider.clone(),
            message,
        };
        check_conversation(
            input,
            Rules {
                no_empty_assistant: true,
            },
        )
        .map_err(invalid)?;
        let config = merged(&self.config, request.config);
        request::thinking_budget(&config).map_err(|message| ProviderError::InvalidConfig {
            provider: self.transport.provider.clone(),
            message,
        })?;
        let mut body =
            request::build(&self.model, input, tools, tool_choice, &config).map_err(invalid)?;
        let started = Instant::now();
        let path = "/v1/messages";
        let max_tokens = body["max_tokens"].as_u64().unwrap_or(0);
        // Unset, a stream for long answers (which must stream) and for a listener that wants
        // the deltas.
        let streams = self.stream.unwrap_or_else(|| {
            max_tokens > STREAM_ABOVE_MAX_TOKENS || request.delta_observer().is_some()
        });
        let result = if streams {
            body["stream"] = serde_json::json!(true);
            self.transport
                .post_sse(path, &body, request, || {
                    stream::MessageStream::new(&self.transport.provider)
                        .reporting(Deltas::of(request))
                })
                .await
                .map(|s| s.finish(&self.model))
        } else {
            match self.transport.post_json(path, &body, request).await {
                Ok(bytes) => response::output(&bytes, &self.model).map_err(|message| {
                    Failure::Other(ProviderError::MalformedResponse {
                        provider: self.transport.provider.clone(),
                        message,
                    })
                }),
                Err(e) => Err(e),
            }
        };
        match result {
            Ok(mut out) => {
                out.time = Some(started.elapsed().as_secs_f64());
                restore_argument_names(&mut out, tools);
                Ok(out)
            }
            Err(Failure::Other(e)) => Err(e),
            Err(Failure::Status(s)) => match refusal_output(&self.model, &s) {
                Some(out) => Ok(out),
                None => Err(self.transport.status_error(&self.transport.url(path), &s)),
            },
        }
    }
}

/// The model calls tools with the parameter names the Anthropic dialect sent, which renames
/// those Anthropic rejects; its arguments are mapped back to the tools' own names before
/// anything validates them.
fn restore_argument_names(out: &mut ModelOutput, tools: &[Arc<ToolInfo>]) {
    let Some(calls) = out.message_mut().and_then(|m| m.tool_calls.as_mut()) else {
        return;
    };
    for call in calls.iter_mut().filter(|c| c.parse_error.is_none()) {
        let Some(info) = tools.iter().find(|t| t.name == call.function) else {
            continue;
        };
        let Ok(mut args) = call.arguments.to_value() else {
            continue;
        };
        let before = args.clone();
        actuator_dialect::restore_argument_names(Dialect::Anthropic, info, &mut args);
        if args != before
            && let Value::Object(map) = args
        {
            call.arguments = map.into();
        }
    }
}

/// "Prompt is too long" as a `model_length` output and content filtering as a
/// `content_filter` one, as the reference does.
fn refusal_output(model: &str, s: &StatusFailure) -> Option<ModelOutput> {
    if s.status != 400 && s.status != 413 {
        return None;
    }
    let lower = s.message.to_lowercase();
    let stop = if [
        "prompt is too long",
        "input is too long",
        "input length and `max_tokens` exceed context limit",
    ]
    .iter()
    .any(|p| lower.contains(p))
    {
        StopReason::ModelLength
    } else if lower.contains("content filtering") {
        StopReason::ContentFilter
    } else {
        return None;
    };
    Some(ModelOutput::from_content(model, s.message.clone()).with_stop_reason(stop))
}

impl Model for AnthropicMessages {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            self.run(&request)
                .await
                .map_err(|e| self.transport.model_error(e))
        })
    }
}
