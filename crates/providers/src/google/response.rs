//! `generateContent` responses to [`ModelOutput`]: text, thought summaries and signatures
//! (kept for replay), function calls, finish reasons, usage with cached and thinking tokens.
//! A streamed response is the same object in pieces: [`Aggregate`] joins them.

use actuator_model::{
    ChatMessageAssistant, MessageContent, MessageSource, ModelOutput, ModelUsage, StopReason,
    ToolCall, new_id,
};
use actuator_tool_core::Content;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Response {
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    pub model_version: Option<String>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub prompt_feedback: Option<PromptFeedback>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Candidate {
    #[serde(default)]
    pub content: Option<CandidateContent>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub finish_message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct CandidateContent {
    #[serde(default)]
    pub parts: Vec<Part>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Part {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub thought: Option<bool>,
    #[serde(default)]
    pub thought_signature: Option<String>,
    #[serde(default)]
    pub function_call: Option<FunctionCall>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct FunctionCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub args: Value,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageMetadata {
    #[serde(default)]
    pub prompt_token_count: u64,
    #[serde(default)]
    pub candidates_token_count: u64,
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    #[serde(default)]
    pub total_token_count: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptFeedback {
    #[serde(default)]
    pub block_reason: Option<String>,
}

/// Marks reasoning as Gemini's, so that only its own signatures are replayed to it.
fn gemini_internal() -> Value {
    json!({"provider": "google"})
}

/// Whether reasoning's `internal` marks it as Gemini's.
pub(crate) fn is_gemini(internal: Option<&Value>) -> bool {
    internal.is_some_and(|i| i["provider"] == "google")
}

/// Finish reasons as the reference maps them.
pub(crate) fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("STOP") | None => StopReason::Stop,
        Some("MAX_TOKENS") => StopReason::MaxTokens,
        Some(
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY",
        ) => StopReason::ContentFilter,
        Some(_) => StopReason::Unknown,
    }
}

/// Usage as Actuator counts it: input excludes what was read from the cache, output includes
/// the thinking (billed as output), and the total is Gemini's.
pub(crate) fn usage(u: &UsageMetadata) -> ModelUsage {
    let cached = u.cached_content_token_count;
    let thoughts = u.thoughts_token_count;
    let output = u.candidates_token_count + thoughts.unwrap_or(0);
    ModelUsage {
        input_tokens: u.prompt_token_count.saturating_sub(cached.unwrap_or(0)),
        output_tokens: output,
        total_tokens: u.total_token_count.unwrap_or(u.prompt_token_count + output),
        input_tokens_cache_write: None,
        input_tokens_cache_read: cached,
        reasoning_tokens: thoughts,
        total_cost: None,
    }
}

/// The parts of one answer as content and calls: thought text gathers into a reasoning block
/// that takes the next signature; a signature on any other part (a call's, as Gemini puts it
/// there) is kept as a reasoning block before that part's content.
pub(crate) fn assemble(
    model: &str,
    parts: Vec<Part>,
    finish: Option<&str>,
    finish_message: Option<&str>,
) -> (ChatMessageAssistant, StopReason) {
    let mut content = Vec::new();
    let mut calls = Vec::new();
    let mut thinking: Option<String> = None;
    let reasoning = |content: &mut Vec<Content>, text: String, signature: Option<String>| {
        content.push(Content::Reasoning {
            reasoning: text,
            signature,
            redacted: false,
            internal: Some(gemini_internal()),
        });
    };
    for part in parts {
        if part.thought == Some(true) {
            let text = thinking.get_or_insert_with(String::new);
            text.push_str(part.text.as_deref().unwrap_or_default());
            if let Some(signature) = part.thought_signature {
                let text = thinking.take().unwrap_or_default();
                reasoning(&mut content, text, Some(signature));
            }
            continue;
        }
        // A signature on the part after the thoughts signs them; thoughts with none stand alone.
        match (part.thought_signature, thinking.take()) {
            (Some(signature), text) => {
                reasoning(&mut content, text.unwrap_or_default(), Some(signature));
            }
            (None, Some(text)) => reasoning(&mut content, text, None),
            (None, None) => {}
        }
        if let Some(call) = part.function_call {
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .map_or_else(new_id, Into::into);
            let mut tool_call = ToolCall::new(id, call.name, Value::Null);
            match call.args {
                Value::Object(map) => tool_call.arguments = map.into(),
                Value::Null => {}
                other => {
                    tool_call.parse_error = Some(format!(
                        "Error parsing the following tool call arguments:\n\n{other}\n\nError details: expected a JSON object"
                    ));
                }
            }
            calls.push(tool_call);
        } else if let Some(text) = part.text {
            content.push(Content::text(text));
        }
    }
    if let Some(text) = thinking.take() {
        reasoning(&mut content, text, None);
    }
    if finish == Some("MALFORMED_FUNCTION_CALL") {
        // As the reference does: the model is told, in its own turn, that its call failed.
        content.push(Content::text(format!(
            "I attempted to call a tool but the call was malformed: {}",
            finish_message.unwrap_or("the function call could not be parsed")
        )));
    }
    let only_text = content.iter().all(|p| matches!(p, Content::Text { .. }));
    let message_content = if only_text {
        MessageContent::Text(content.iter().filter_map(Content::as_text).collect())
    } else {
        MessageContent::Parts(content)
    };
    let mut stop = stop_reason(finish);
    if !calls.is_empty() && stop == StopReason::Stop {
        stop = StopReason::ToolCalls;
    }
    (
        ChatMessageAssistant {
            id: new_id(),
            content: message_content,
            source: Some(MessageSource::Generate),
            metadata: None,
            tool_calls: (!calls.is_empty()).then_some(calls),
            model: Some(model.into()),
        },
        stop,
    )
}

/// The output of a whole response (or of the pieces of a stream, joined).
pub(crate) fn output(response: Response, model_name: &str) -> ModelOutput {
    let model = response
        .model_version
        .clone()
        .unwrap_or_else(|| model_name.to_owned());
    let candidate = response.candidates.into_iter().next().unwrap_or_default();
    let blocked = response
        .prompt_feedback
        .and_then(|f| f.block_reason)
        .filter(|_| candidate.content.is_none());
    let parts = candidate.content.map(|c| c.parts).unwrap_or_default();
    let (assistant, mut stop) = assemble(
        &model,
        parts,
        candidate.finish_reason.as_deref(),
        candidate.finish_message.as_deref(),
    );
    if blocked.is_some() {
        // The prompt itself was blocked: no candidate, a content filter.
        stop = StopReason::ContentFilter;
    }
    let mut out = ModelOutput::from_message(model, assistant, stop);
    out.usage = response.usage_metadata.as_ref().map(usage);
    out.metadata = response.response_id.map(|id| json!({"id": id}));
    if let Some(reason) = blocked {
        out.metadata
            .get_or_insert_with(|| json!({}))
            .as_object_mut()
            .map(|m| m.insert("block_reason".into(), json!(reason)));
    }
    out
}

/// Reads a whole response body: one with no candidate and no blocked prompt is not an
/// answer (every field is optional, so any JSON object would otherwise read as an empty one).
pub(crate) fn parse(body: &[u8]) -> Result<Response, String> {
    let shown = || crate::error::snippet(&String::from_utf8_lossy(body), 500);
    let response: Response = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the body is not a generateContent response ({e}): {}",
            shown()
        )
    })?;
    let blocked = response
        .prompt_feedback
        .as_ref()
        .is_some_and(|f| f.block_reason.is_some());
    if response.candidates.is_empty() && !blocked {
        return Err(format!(
            "the body is not a generateContent response (no candidate and no block reason): {}",
            shown()
        ));
    }
    Ok(response)
}

/// The pieces of a streamed response joined into one: adjacent text of one kind (thought or
/// not) concatenated, every other part kept, the last finish reason and usage.
#[derive(Debug, Default)]
pub(crate) struct Aggregate {
    pub(crate) response: Response,
    parts: Vec<Part>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
}

impl Aggregate {
    /// Adds one piece; returns its new text (thought, answer) for the deltas.
    pub(crate) fn push(&mut self, piece: Response) -> Vec<(bool, String)> {
        let mut fresh = Vec::new();
        if piece.usage_metadata.is_some() {
            self.response.usage_metadata = piece.usage_metadata;
        }
        if piece.model_version.is_some() {
            self.response.model_version = piece.model_version;
        }
        if piece.response_id.is_some() {
            self.response.response_id = piece.response_id;
        }
        if piece.prompt_feedback.is_some() {
            self.response.prompt_feedback = piece.prompt_feedback;
        }
        let Some(candidate) = piece.candidates.into_iter().next() else {
            return fresh;
        };
        if candidate.finish_reason.is_some() {
            self.finish_reason = candidate.finish_reason;
            self.finish_message = candidate.finish_message;
        }
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            let thought = part.thought == Some(true);
            if let (Some(text), None, None) =
                (&part.text, &part.function_call, &part.thought_signature)
                && let Some(last) = self.parts.last_mut()
                && last.function_call.is_none()
                && last.thought_signature.is_none()
                && (last.thought == Some(true)) == thought
                && let Some(so_far) = last.text.as_mut()
            {
                so_far.push_str(text);
                fresh.push((thought, text.clone()));
                continue;
            }
            if let (Some(text), None) = (&part.text, &part.function_call) {
                fresh.push((thought, text.clone()));
            }
            self.parts.push(part);
        }
        fresh
    }

    /// Whether a finish reason arrived (the stream has no end event of its own).
    pub(crate) fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The joined response.
    pub(crate) fn into_response(mut self) -> Response {
        self.response.candidates = vec![Candidate {
            content: Some(CandidateContent { parts: self.parts }),
            finish_reason: self.finish_reason,
            finish_message: self.finish_message,
        }];
        self.response
    }
}
