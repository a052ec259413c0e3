//! Google's Gemini API (`generateContent`).

mod request;
pub(crate) mod response;
pub(crate) mod stream;

use std::sync::Arc;
use std::time::Instant;

use actuator_dialect::Dialect;
use actuator_model::{BoxFuture, GenerateConfig, GenerateRequest, Model, ModelError, ModelOutput};
use actuator_tool_core::ToolInfo;

use crate::check::{Rules, check_conversation};
use crate::deltas::Deltas;
use crate::error::ProviderError;
use crate::http::{Failure, StatusFailure, Transport};
use crate::options::{ModelOptions, merged};
use crate::resolve::{Kind, Resolved};

/// A model reached through the Gemini API (`POST {base_url}/models/{model}:generateContent`,
/// or `:streamGenerateContent?alt=sse`), made by [`get_model`](crate::get_model) for `google/…`:
/// Google AI Studio's endpoint (`…/v1beta`) with `GOOGLE_API_KEY` (or `GEMINI_API_KEY`) sent
/// as `x-goog-api-key`, or Vertex AI with `GOOGLE_GENAI_USE_VERTEXAI=true`,
/// `GOOGLE_CLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION` and an access token in
/// `GOOGLE_CLOUD_ACCESS_TOKEN` (sent as a bearer token), or an express-mode API key. Vertex's
/// service-account and application-default credentials are not read: give the token.
///
/// - System messages become `systemInstruction`; turns are `user` and `model` contents,
///   consecutive messages of one role merged; a call is a `functionCall` part (its id kept, or
///   made when Gemini gives none) and its result a `functionResponse` part with `output`, or
///   `error` for a failed call, as the reference sends them.
/// - Tools go out through [`actuator_dialect::gemini`] as `functionDeclarations`; `ToolChoice`
///   maps to `AUTO`, `ANY`, or `ANY` with `allowedFunctionNames`. A function name Gemini
///   rejects is sent repaired ([`Dialect::function_name`]), and calls come back under the
///   tool's own name.
/// - Thinking: `reasoning_tokens` is `thinkingConfig.thinkingBudget` (0 turns it off), with the
///   thoughts' summaries returned as reasoning. Thought signatures are kept and replayed on the
///   part they came with (a turn's first call when it has calls); other providers' reasoning
///   is not sent.
/// - Structured output: `response_schema` is `responseJsonSchema` with `application/json`.
/// - Usage: input excludes cached tokens (`input_tokens_cache_read`), output includes the
///   thinking (`reasoning_tokens`).
/// - Finish reasons as the reference maps them (`SAFETY`, `RECITATION`, … →
///   `content_filter`; `MALFORMED_FUNCTION_CALL` → `unknown`, with the model told in its turn);
///   a blocked prompt is a `content_filter` output.
/// - Streamed when [`ModelOptions::stream`] says so or an observer wants the deltas.
pub struct GoogleGemini {
    name: String,
    model: String,
    transport: Transport,
    config: GenerateConfig,
    stream: Option<bool>,
}

impl std::fmt::Debug for GoogleGemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleGemini")
            .field("name", &self.name)
            .field("base_url", &self.transport.shown_base_url())
            .finish_non_exhaustive()
    }
}

impl GoogleGemini {
    pub(crate) fn new(
        name: &str,
        resolved: Resolved,
        options: &ModelOptions,
    ) -> Result<Self, ProviderError> {
        let mut headers = Vec::new();
        if let Some(key) = &resolved.key {
            headers.push(match resolved.kind {
                Kind::Google { bearer: true } => {
                    ("authorization".to_owned(), format!("Bearer {key}"))
                }
                _ => ("x-goog-api-key".to_owned(), key.clone()),
            });
        }
        let transport = Transport::for_model(name, &resolved, headers, options)?;
        Ok(GoogleGemini {
            name: name.to_owned(),
            model: resolved.model,
            transport,
            config: options.config.clone(),
            stream: options.stream,
        })
    }

    async fn run(&self, request: &GenerateRequest<'_>) -> Result<ModelOutput, ProviderError> {
        let invalid = |message: String| ProviderError::InvalidConversation {
            provider: self.transport.provider.clone(),
            message,
        };
        check_conversation(
            request.input,
            Rules {
                no_empty_assistant: false,
            },
        )
        .map_err(invalid)?;
        let config = merged(&self.config, request.config);
        let body = request::build(request.input, request.tools, request.tool_choice, &config)
            .map_err(invalid)?;
        let started = Instant::now();
        let streams = self
            .stream
            .unwrap_or_else(|| request.delta_observer().is_some());
        let model = &self.model;
        let result = if streams {
            let path = format!("/models/{model}:streamGenerateContent?alt=sse");
            self.transport
                .post_sse(&path, &body, request, || {
                    stream::ContentStream::new(&self.transport.provider, Deltas::of(request))
                })
                .await
                .map(|s| s.finish(model))
                .map_err(|e| (e, path))
        } else {
            let path = format!("/models/{model}:generateContent");
            match self.transport.post_json(&path, &body, request).await {
                Ok(bytes) => response::parse(&bytes)
                    .map(|r| response::output(r, model))
                    .map_err(|message| {
                        Failure::Other(ProviderError::MalformedResponse {
                            provider: self.transport.provider.clone(),
                            message,
                        })
                    }),
                Err(e) => Err(e),
            }
            .map_err(|e| (e, path))
        };
        match result {
            Ok(mut out) => {
                out.time = Some(started.elapsed().as_secs_f64());
                restore_function_names(&mut out, request.tools);
                Ok(out)
            }
            Err((Failure::Other(e), _)) => Err(e),
            Err((Failure::Status(s), path)) => match too_long(model, &s) {
                Some(out) => Ok(out),
                None => Err(self.transport.status_error(&self.transport.url(&path), &s)),
            },
        }
    }
}

/// The model calls a tool by the name its declaration was sent with, which the Gemini dialect
/// repairs where Gemini rejects it; the call is mapped back to the tool's own name.
fn restore_function_names(out: &mut ModelOutput, tools: &[Arc<ToolInfo>]) {
    let Some(calls) = out.message_mut().and_then(|m| m.tool_calls.as_mut()) else {
        return;
    };
    for call in calls.iter_mut() {
        let own = tools.iter().find(|t| {
            let sent = Dialect::Gemini.function_name(&t.name);
            sent != t.name.as_str() && sent == call.function.as_str()
        });
        if let Some(tool) = own {
            call.function = tool.name.as_str().into();
        }
    }
}

/// A prompt over the context window as a `model_length` output, as the reference does.
fn too_long(model: &str, s: &StatusFailure) -> Option<ModelOutput> {
    let lower = s.message.to_lowercase();
    (s.status == 400
        && (lower.contains("exceeds the maximum number of tokens")
            || lower.contains("input token count")))
    .then(|| {
        ModelOutput::from_content(model, s.message.clone())
            .with_stop_reason(actuator_model::StopReason::ModelLength)
    })
}

impl Model for GoogleGemini {
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
