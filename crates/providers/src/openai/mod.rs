//! OpenAI Chat Completions, for OpenAI and every server that speaks it.

mod request;
pub(crate) mod response;
pub(crate) mod responses;
pub(crate) mod responses_stream;
pub(crate) mod stream;
mod structured;

use std::time::Instant;

use actuator_model::{
    BoxFuture, GenerateConfig, GenerateRequest, Model, ModelError, ModelOutput, StopReason,
};

use crate::check::{Rules, check_conversation};
use crate::deltas::Deltas;
use crate::error::ProviderError;
use crate::http::{Failure, StatusFailure, Transport};
use crate::options::{ModelOptions, merged};
use crate::resolve::{Kind, Resolved};

/// A model reached through OpenAI's Chat Completions API (`POST {base_url}/chat/completions`):
/// OpenAI itself (`openai/…`) or a compatible server (`openai-api/…`, `vllm/…`, `ollama/…`,
/// `llama-cpp/…`). Made by [`get_model`](crate::get_model).
///
/// - Tools go out through [`actuator_dialect::openai_strict`]: strict when the schema allows
///   it, else non-strict for that tool (the dialect's report is logged at `debug`); arguments
///   of a strict tool have their `null`s for optional parameters removed
///   ([`actuator_dialect::strip_strict_nulls`]). Raw argument text goes through
///   [`actuator_dialect::parse_tool_call`], so malformed arguments become a `parse_error` the
///   model is told about, not a failure.
/// - `ToolChoice` maps to `auto`, `required`, `none` or the named function;
///   `GenerateConfig::parallel_tool_calls` to `parallel_tool_calls`.
/// - OpenAI's reasoning models (`o1`, `o3`, `o4-mini`, `gpt-5…`, `…codex…`) use the
///   Responses API (`POST {base_url}/responses`, nothing stored, reasoning items replayed with
///   their encrypted content); [`ModelOptions::responses_api`] chooses for any model.
/// - With [`ModelOptions::stream`] the answer is streamed (server-sent events) and aggregated
///   into the same output: for Chat Completions, usage is asked for with
///   `stream_options.include_usage`; for the Responses API, the output is the response the
///   stream's last event carries.
/// - Stop reasons: `length` → `max_tokens`, `content_filter` and refusals → `content_filter`,
///   `tool_calls` → `tool_calls`; a context-window error (HTTP 400) is an output with stop
///   reason `model_length`, so react's overflow handling runs.
pub struct OpenAiChat {
    name: String,
    model: String,
    transport: Transport,
    flavor: request::Flavor,
    config: GenerateConfig,
    /// Whether to stream: as set, else when someone wants the deltas (as the reference's
    /// `on_stream` asks for a stream).
    stream: Option<bool>,
    responses_api: bool,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("name", &self.name)
            .field("base_url", &self.transport.shown_base_url())
            .finish_non_exhaustive()
    }
}

impl OpenAiChat {
    pub(crate) fn new(
        name: &str,
        resolved: Resolved,
        options: &ModelOptions,
    ) -> Result<Self, ProviderError> {
        let mut headers = Vec::new();
        if let Some(key) = &resolved.key {
            headers.push(("authorization".to_owned(), format!("Bearer {key}")));
        }
        let transport = Transport::for_model(name, &resolved, headers, options)?;
        let resolved_openai = resolved.kind == Kind::OpenAi;
        let model = resolved.model;
        Ok(OpenAiChat {
            name: name.to_owned(),
            model: model.clone(),
            transport,
            flavor: request::Flavor {
                openai: resolved_openai,
                strict_tools: options.strict_tools.unwrap_or(true),
                json_object_schema: name.starts_with("llama-cpp-python/"),
            },
            config: options.config.clone(),
            stream: options.stream,
            responses_api: options
                .responses_api
                .unwrap_or(resolved_openai && responses::is_reasoning_model(&model)),
        })
    }

    /// Whether this request is streamed: as the options say, else exactly when its observer
    /// wants deltas, which only a stream has.
    fn streams(&self, request: &GenerateRequest<'_>) -> bool {
        self.stream
            .unwrap_or_else(|| request.delta_observer().is_some())
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
                no_empty_assistant: false,
            },
        )
        .map_err(invalid)?;
        let (config, strict_answer) = structured::prepare(
            merged(&self.config, request.config),
            self.flavor.openai && self.flavor.strict_tools,
        );
        if self.responses_api {
            let mut out = self.run_responses(request, &config).await?;
            structured::restore(&mut out, strict_answer.as_ref());
            return Ok(out);
        }
        let built = request::build(
            &self.model,
            input,
            tools,
            tool_choice,
            &config,
            &self.flavor,
        )
        .map_err(invalid)?;
        let started = Instant::now();
        let path = "/chat/completions";
        let mut body = built.body;
        let result = if self.streams(request) {
            body.streamed();
            self.transport
                .post_sse(path, &body, request, || {
                    stream::ChatStream::new(&self.transport.provider).reporting(Deltas::of(request))
                })
                .await
                .map(|s| s.finish(&self.model, tools, &built.strict))
        } else {
            match self.transport.post_json(path, &body, request).await {
                Ok(bytes) => {
                    response::output(&bytes, &self.model, tools, &built.strict).map_err(|message| {
                        Failure::Other(ProviderError::MalformedResponse {
                            provider: self.transport.provider.clone(),
                            message,
                        })
                    })
                }
                Err(e) => Err(e),
            }
        };
        match result {
            Ok(mut out) => {
                out.time = Some(started.elapsed().as_secs_f64());
                structured::restore(&mut out, strict_answer.as_ref());
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

impl OpenAiChat {
    /// The Responses API's side of [`OpenAiChat::run`]: `config` is the request's, merged
    /// over the model's defaults.
    async fn run_responses(
        &self,
        request: &GenerateRequest<'_>,
        config: &GenerateConfig,
    ) -> Result<ModelOutput, ProviderError> {
        let (input, tools, tool_choice) = (request.input, request.tools, request.tool_choice);
        let (body, strict) = responses::build(
            &self.model,
            input,
            tools,
            tool_choice,
            config,
            self.flavor.strict_tools,
        )
        .map_err(|message| ProviderError::InvalidConversation {
            provider: self.transport.provider.clone(),
            message,
        })?;
        let started = Instant::now();
        let path = "/responses";
        let malformed = |message| ProviderError::MalformedResponse {
            provider: self.transport.provider.clone(),
            message,
        };
        let result = if self.streams(request) {
            let mut body = body;
            body["stream"] = serde_json::json!(true);
            self.transport
                .post_sse(path, &body, request, || {
                    responses_stream::ResponsesStream::new(&self.transport.provider)
                        .reporting(Deltas::of(request))
                })
                .await
                .map(|s| s.finish(&self.model, tools, &strict))
        } else {
            self.transport
                .post_json(path, &body, request)
                .await
                .map(|bytes| responses::output(&bytes, &self.model, tools, &strict))
        };
        match result {
            Ok(out) => {
                let mut out = out.map_err(malformed)?;
                out.time = Some(started.elapsed().as_secs_f64());
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

/// A context-window error or a content-filter block as an output (as the reference does), so
/// that react's overflow handling and refusal retries run.
fn refusal_output(model: &str, s: &StatusFailure) -> Option<ModelOutput> {
    if !(400..500).contains(&s.status) {
        return None;
    }
    let code = s.code.as_deref().unwrap_or_default();
    let lower = s.message.to_lowercase();
    let stop = if code == "context_length_exceeded"
        || [
            "maximum context length",
            "context length",
            "context window",
            "input length",
            "prompt is too long",
            "too many tokens",
        ]
        .iter()
        .any(|p| lower.contains(p))
    {
        StopReason::ModelLength
    } else if matches!(
        code,
        "invalid_prompt"
            | "content_policy_violation"
            | "content_filter"
            | "bio_policy"
            | "cyber_policy"
    ) || (s.kind.as_deref() == Some("invalid_request_error") && lower.contains("blocked"))
    {
        StopReason::ContentFilter
    } else {
        return None;
    };
    Some(ModelOutput::from_content(model, s.message.clone()).with_stop_reason(stop))
}

impl Model for OpenAiChat {
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
