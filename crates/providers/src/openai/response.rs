//! Chat Completions response bodies to [`ModelOutput`]: text, refusals, tool calls (raw
//! arguments through `parse_tool_call`, strict-mode nulls stripped), usage and stop reasons.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::{
    ChatCompletionChoice, ChatMessageAssistant, MessageContent, MessageSource, ModelOutput,
    ModelUsage, StopReason, ToolCall, new_id,
};
use actuator_tool_core::{Content, ToolInfo};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub(crate) struct ChatResponse {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    pub message: ResponseMessage,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseMessage {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ResponseToolCall>>,
    /// vLLM, DeepSeek and others put reasoning here.
    #[serde(default)]
    pub reasoning_content: Option<String>,
    /// … and OpenRouter, Ollama and newer vLLM here.
    #[serde(default)]
    pub reasoning: Option<String>,
}

/// Reasoning a Chat Completions server returned, and where: the message field it came in
/// (`reasoning_content` or `reasoning`), or `think` for a `<think>` block leading the text.
/// The source is kept in the reasoning's `internal` so that it goes back the same way.
#[derive(Debug, Default)]
pub(crate) struct ChatReasoning {
    pub text: String,
    pub source: &'static str,
}

impl ChatReasoning {
    /// The reasoning of a message or a stream's deltas: `reasoning_content` first.
    pub fn from_fields(
        reasoning_content: Option<String>,
        reasoning: Option<String>,
    ) -> Option<Self> {
        match (reasoning_content, reasoning) {
            (Some(text), _) if !text.is_empty() => Some(ChatReasoning {
                text,
                source: "reasoning_content",
            }),
            (_, Some(text)) if !text.is_empty() => Some(ChatReasoning {
                text,
                source: "reasoning",
            }),
            _ => None,
        }
    }
}

/// Splits a `<think>…</think>` block that leads `text` (after white space) off it.
fn split_think(text: &str) -> Option<(ChatReasoning, String)> {
    let rest = text.trim_start().strip_prefix("<think>")?;
    let end = rest.find("</think>")?;
    let reasoning = rest[..end].trim();
    let after = rest[end + "</think>".len()..].trim_start();
    Some((
        ChatReasoning {
            text: reasoning.to_owned(),
            source: "think",
        },
        after.to_owned(),
    ))
}

#[derive(Debug, Deserialize)]
pub(crate) struct ResponseToolCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ResponseFunction>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ResponseFunction {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// The finish reason as a stop reason (`length` → `max_tokens`, `content_filter` →
/// `content_filter`, `tool_calls`/`function_call` → `tool_calls`).
pub(crate) fn stop_reason(finish: Option<&str>) -> StopReason {
    match finish {
        Some("stop") | None => StopReason::Stop,
        Some("length") => StopReason::MaxTokens,
        Some("tool_calls" | "function_call") => StopReason::ToolCalls,
        Some("content_filter") => StopReason::ContentFilter,
        Some(_) => StopReason::Unknown,
    }
}

/// Usage as Actuator counts it: input tokens exclude those read from the cache.
pub(crate) fn usage(u: &Usage) -> ModelUsage {
    let cached = u
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens);
    ModelUsage {
        input_tokens: u.prompt_tokens.saturating_sub(cached.unwrap_or(0)),
        output_tokens: u.completion_tokens,
        total_tokens: u
            .total_tokens
            .unwrap_or(u.prompt_tokens + u.completion_tokens),
        input_tokens_cache_write: None,
        input_tokens_cache_read: cached,
        reasoning_tokens: u
            .completion_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens),
        total_cost: None,
    }
}

/// A tool call from its raw parts: arguments through `parse_tool_call` (the recovery rules),
/// then strict mode's `null`s removed for a tool that went out strict.
pub(crate) fn tool_call(
    id: Option<&str>,
    name: &str,
    arguments: Option<&str>,
    tools: &[Arc<ToolInfo>],
    strict: &HashMap<String, bool>,
) -> ToolCall {
    let info = tools.iter().find(|t| t.name == name);
    let id = match id {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("call_{}", new_id()),
    };
    let known = info
        .map(|i| std::slice::from_ref(i.as_ref()))
        .unwrap_or_default();
    let mut call = actuator_dialect::parse_tool_call(&id, name, arguments, known);
    if let Some(info) = info
        && call.parse_error.is_none()
        && strict.get(name).copied().unwrap_or(false)
        && let Ok(mut args) = call.arguments.to_value()
    {
        actuator_dialect::strip_strict_nulls(info, &mut args);
        if let Value::Object(map) = args {
            call.arguments = map.into();
        }
    }
    call
}

/// The assistant message and stop reason of one choice.
pub(crate) fn assemble(
    model: &str,
    text: String,
    refusal: Option<String>,
    reasoning: Option<ChatReasoning>,
    calls: Vec<ToolCall>,
    finish: Option<&str>,
) -> ChatCompletionChoice {
    let mut stop = stop_reason(finish);
    let refused = refusal.as_deref().is_some_and(|r| !r.is_empty());
    let text = match refusal {
        Some(r) if refused => {
            stop = StopReason::ContentFilter;
            if text.is_empty() {
                r
            } else {
                format!("{text}\n{r}")
            }
        }
        _ => text,
    };
    // Some servers say `stop` when they called tools.
    if !calls.is_empty() && stop == StopReason::Stop {
        stop = StopReason::ToolCalls;
    }
    let (reasoning, text) = match reasoning {
        Some(r) => (Some(r), text),
        None => match split_think(&text) {
            Some((r, rest)) => (Some(r), rest),
            None => (None, text),
        },
    };
    let content = match reasoning.filter(|r| !r.text.is_empty()) {
        Some(reasoning) => {
            let mut parts = vec![Content::Reasoning {
                reasoning: reasoning.text,
                signature: None,
                redacted: false,
                internal: Some(reasoning.source.into()),
            }];
            if !text.is_empty() {
                parts.push(Content::text(text));
            }
            MessageContent::Parts(parts)
        }
        None => MessageContent::Text(text.into()),
    };
    ChatCompletionChoice {
        message: ChatMessageAssistant {
            id: new_id(),
            content,
            source: Some(MessageSource::Generate),
            metadata: None,
            tool_calls: (!calls.is_empty()).then_some(calls),
            model: Some(model.into()),
        },
        stop_reason: stop,
    }
}

/// The output of a whole (non-streamed) response body.
pub(crate) fn output(
    body: &[u8],
    model_name: &str,
    tools: &[Arc<ToolInfo>],
    strict: &HashMap<String, bool>,
) -> Result<ModelOutput, String> {
    let response: ChatResponse = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the body is not a Chat Completions response ({e}): {}",
            crate::error::snippet(&String::from_utf8_lossy(body), 500)
        )
    })?;
    if response.choices.is_empty() {
        return Err(format!(
            "the response has no choices: {}",
            crate::error::snippet(&String::from_utf8_lossy(body), 500)
        ));
    }
    let model = response
        .model
        .clone()
        .unwrap_or_else(|| model_name.to_owned());
    let choices = response
        .choices
        .into_iter()
        .map(|choice| {
            let m = choice.message;
            let calls = m
                .tool_calls
                .unwrap_or_default()
                .into_iter()
                .filter_map(|c| {
                    let f = c.function?;
                    let name = f.name.unwrap_or_default();
                    Some(tool_call(
                        c.id.as_deref(),
                        &name,
                        f.arguments.as_deref(),
                        tools,
                        strict,
                    ))
                })
                .collect();
            assemble(
                &model,
                m.content.unwrap_or_default(),
                m.refusal,
                ChatReasoning::from_fields(m.reasoning_content, m.reasoning),
                calls,
                choice.finish_reason.as_deref(),
            )
        })
        .collect();
    Ok(ModelOutput {
        model: model.into(),
        choices,
        usage: response.usage.as_ref().map(usage),
        time: None,
        metadata: response.id.map(|id| serde_json::json!({"id": id})),
        completion: None,
    })
}
