//! Messages API responses to [`ModelOutput`]: text, thinking (signatures kept for replay),
//! tool use, usage with cache tokens, stop reasons.

use actuator_model::{
    ChatMessageAssistant, MessageContent, MessageSource, ModelOutput, ModelUsage, StopReason,
    ToolCall, new_id,
};
use actuator_tool_core::Content;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub(crate) struct Message {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    pub content: Vec<Block>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

pub(crate) fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("end_turn" | "stop_sequence" | "pause_turn") | None => StopReason::Stop,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("tool_use") => StopReason::ToolCalls,
        Some("refusal") => StopReason::ContentFilter,
        Some("model_context_window_exceeded") => StopReason::ModelLength,
        Some(_) => StopReason::Unknown,
    }
}

pub(crate) fn usage(u: &Usage) -> ModelUsage {
    let write = u.cache_creation_input_tokens;
    let read = u.cache_read_input_tokens;
    ModelUsage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        total_tokens: u.input_tokens + u.output_tokens + write.unwrap_or(0) + read.unwrap_or(0),
        input_tokens_cache_write: write,
        input_tokens_cache_read: read,
        reasoning_tokens: None,
        total_cost: None,
    }
}

/// The blocks as message content and tool calls.
pub(crate) fn assemble(
    model: &str,
    blocks: Vec<Block>,
    stop: Option<&str>,
) -> (ChatMessageAssistant, StopReason) {
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text } => parts.push(Content::text(text)),
            Block::Thinking {
                thinking,
                signature,
            } => parts.push(Content::Reasoning {
                reasoning: thinking,
                signature,
                redacted: false,
                internal: None,
            }),
            Block::RedactedThinking { data } => parts.push(Content::Reasoning {
                reasoning: String::new(),
                signature: Some(data),
                redacted: true,
                internal: None,
            }),
            Block::ToolUse { id, name, input } => {
                let mut call = ToolCall::new(id, name, Value::Null);
                match input {
                    Value::Object(map) => call.arguments = map.into(),
                    Value::Null => {}
                    other => {
                        call.parse_error = Some(format!(
                            "Error parsing the following tool call arguments:\n\n{other}\n\nError details: expected a JSON object"
                        ));
                    }
                }
                calls.push(call);
            }
            Block::Other => {}
        }
    }
    let only_text = parts.iter().all(|p| matches!(p, Content::Text { .. }));
    let content = if only_text {
        MessageContent::Text(parts.iter().filter_map(Content::as_text).collect())
    } else {
        MessageContent::Parts(parts)
    };
    let mut stop = stop_reason(stop);
    if !calls.is_empty() && stop == StopReason::Stop {
        stop = StopReason::ToolCalls;
    }
    (
        ChatMessageAssistant {
            id: new_id(),
            content,
            source: Some(MessageSource::Generate),
            metadata: None,
            tool_calls: (!calls.is_empty()).then_some(calls),
            model: Some(model.into()),
        },
        stop,
    )
}

pub(crate) fn output(body: &[u8], model_name: &str) -> Result<ModelOutput, String> {
    let message: Message = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the body is not a Messages API message ({e}): {}",
            crate::error::snippet(&String::from_utf8_lossy(body), 500)
        )
    })?;
    let model = message
        .model
        .clone()
        .unwrap_or_else(|| model_name.to_owned());
    let (assistant, stop) = assemble(&model, message.content, message.stop_reason.as_deref());
    let mut out = ModelOutput::from_message(model, assistant, stop);
    out.usage = message.usage.as_ref().map(usage);
    out.metadata = message.id.map(|id| serde_json::json!({"id": id}));
    Ok(out)
}
