//! OpenAI's Responses API (`POST {base_url}/responses`): input items in, output items back,
//! reasoning items replayed with their encrypted content.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::{
    ChatCompletionChoice, ChatMessage, ChatMessageAssistant, GenerateConfig, MessageContent,
    MessageSource, ModelOutput, ModelUsage, StopReason, new_id,
};
use actuator_tool_core::{Content, Media, MediaSource, ToolChoice, ToolInfo};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::response::tool_call;

/// Whether `model` (OpenAI's name) is a reasoning model whose reasoning is replayed.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let o_series = m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit());
    o_series || m.starts_with("gpt-5") || m.contains("codex")
}

/// The request body and, per tool, whether it went out strict.
pub(crate) fn build(
    model: &str,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &GenerateConfig,
    strict_tools: bool,
) -> Result<(Value, HashMap<String, bool>), String> {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let mut items = Vec::new();
    for m in input {
        items.extend(message_items(m)?);
    }
    body.insert("input".into(), Value::Array(items));
    let mut strict = HashMap::new();
    if !tools.is_empty() && *tool_choice != ToolChoice::None {
        let rendered: Vec<Value> = tools
            .iter()
            .map(|info| {
                let (parameters, is_strict) = if strict_tools {
                    let r = actuator_dialect::openai_strict(info);
                    let is_strict = r.tool["function"]["strict"] == Value::Bool(true);
                    if !r.report.is_empty() {
                        tracing::debug!(tool = %info.name, strict = is_strict, report = %r.report, "OpenAI dialect changed the tool's schema");
                    }
                    (r.tool["function"]["parameters"].clone(), is_strict)
                } else {
                    (info.parameters.to_value(), false)
                };
                strict.insert(info.name.clone(), is_strict);
                json!({
                    "type": "function",
                    "name": info.name,
                    "description": info.description,
                    "parameters": parameters,
                    "strict": is_strict,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(rendered));
        body.insert(
            "tool_choice".into(),
            match tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Any => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Function { name } => json!({"type": "function", "name": name}),
            },
        );
        if let Some(parallel) = config.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    if let Some(n) = config.max_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if let Some(t) = config.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = config.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(effort) = &config.reasoning_effort {
        body.insert("reasoning".into(), json!({"effort": effort}));
    }
    if let Some(schema) = &config.response_schema {
        // The Responses API's structured output: `text.format`, the Chat Completions
        // `json_schema` object's fields flattened beside its type.
        let mut format = serde_json::Map::new();
        format.insert("type".into(), json!("json_schema"));
        format.insert("name".into(), json!(schema.name));
        if let Some(description) = &schema.description {
            format.insert("description".into(), json!(description));
        }
        format.insert("schema".into(), schema.json_schema.clone());
        if let Some(strict) = schema.strict {
            format.insert("strict".into(), json!(strict));
        }
        body.insert("text".into(), json!({"format": format}));
    }
    // Nothing is kept on OpenAI's side; reasoning comes back encrypted, to be replayed.
    body.insert("store".into(), json!(false));
    if is_reasoning_model(model) {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    Ok((Value::Object(body), strict))
}

fn message_items(m: &ChatMessage) -> Result<Vec<Value>, String> {
    Ok(match m {
        ChatMessage::System(s) => {
            vec![json!({"type": "message", "role": "system", "content": s.content.text()})]
        }
        ChatMessage::User(u) => {
            vec![json!({"type": "message", "role": "user", "content": user_content(&u.content)?})]
        }
        ChatMessage::Assistant(a) => {
            let mut items = Vec::new();
            if let MessageContent::Parts(parts) = &a.content {
                for part in parts {
                    // Only reasoning that came from the Responses API (it has an item id) can
                    // be replayed to it.
                    if let Content::Reasoning {
                        reasoning,
                        signature,
                        internal: Some(internal),
                        ..
                    } = part
                        && let Some(id) = internal.get("id").and_then(Value::as_str)
                    {
                        let summary: Vec<Value> = if reasoning.is_empty() {
                            Vec::new()
                        } else {
                            vec![json!({"type": "summary_text", "text": reasoning})]
                        };
                        let mut item = json!({"type": "reasoning", "id": id, "summary": summary});
                        if let Some(sig) = signature {
                            item["encrypted_content"] = json!(sig);
                        }
                        items.push(item);
                    }
                }
            }
            let text = a.content.text();
            if !text.is_empty() {
                items.push(json!({"type": "message", "role": "assistant", "content": text}));
            }
            for call in a.calls() {
                items.push(json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.function,
                    "arguments": call.arguments.as_json(),
                }));
            }
            items
        }
        ChatMessage::Tool(t) => {
            let output = match &t.error {
                Some(e) => format!("Error: {}", e.message),
                None => t.content.text(),
            };
            vec![json!({
                "type": "function_call_output",
                "call_id": t.tool_call_id.as_deref().unwrap_or_default(),
                "output": output,
            })]
        }
    })
}

fn user_content(content: &MessageContent) -> Result<Value, String> {
    let parts = match content {
        MessageContent::Text(t) => return Ok(json!(t)),
        MessageContent::Parts(parts) => parts,
    };
    let url = |media: &Media| match &media.source {
        MediaSource::Url { url } => url.clone(),
        MediaSource::Base64 { data } => format!("data:{};base64,{data}", media.media_type),
    };
    let mut out = Vec::new();
    for part in parts {
        match part {
            Content::Text { text, .. } => out.push(json!({"type": "input_text", "text": text})),
            Content::Image(media) => {
                out.push(json!({"type": "input_image", "image_url": url(media), "detail": "auto"}));
            }
            Content::Document(media) => {
                let mut file = json!({"type": "input_file", "file_data": url(media)});
                if let Some(name) = &media.filename {
                    file["filename"] = json!(name);
                }
                out.push(file);
            }
            Content::Audio(_) | Content::Video(_) => {
                return Err("the Responses API does not accept audio or video input".into());
            }
            _ => {}
        }
    }
    Ok(Value::Array(out))
}

#[derive(Debug, Deserialize)]
struct Response {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Incomplete>,
    #[serde(default)]
    output: Vec<Value>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct Incomplete {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<Value>,
    #[serde(default)]
    output_tokens_details: Option<Value>,
}

/// The output of a whole Responses API body.
pub(crate) fn output(
    body: &[u8],
    model_name: &str,
    tools: &[Arc<ToolInfo>],
    strict: &HashMap<String, bool>,
) -> Result<ModelOutput, String> {
    let snippet = || crate::error::snippet(&String::from_utf8_lossy(body), 500);
    let response: Response = serde_json::from_slice(body).map_err(|e| {
        format!(
            "the body is not a Responses API response ({e}): {}",
            snippet()
        )
    })?;
    from_response(response, model_name, tools, strict)
}

/// The output of a response object a stream's last event carried.
pub(crate) fn output_value(
    response: Value,
    model_name: &str,
    tools: &[Arc<ToolInfo>],
    strict: &HashMap<String, bool>,
) -> Result<ModelOutput, String> {
    let snippet = crate::error::snippet(&response.to_string(), 500);
    let response: Response = serde_json::from_value(response).map_err(|e| {
        format!("the stream's response is not a Responses API response ({e}): {snippet}")
    })?;
    from_response(response, model_name, tools, strict)
}

fn from_response(
    response: Response,
    model_name: &str,
    tools: &[Arc<ToolInfo>],
    strict: &HashMap<String, bool>,
) -> Result<ModelOutput, String> {
    if response.status.as_deref() == Some("failed") {
        let error = response.error.unwrap_or(Value::Null);
        return Err(format!(
            "the response failed: {}",
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no error given")
        ));
    }
    let model = response
        .model
        .clone()
        .unwrap_or_else(|| model_name.to_owned());
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    let mut refused = false;
    for item in &response.output {
        let text = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for c in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match c.get("type").and_then(Value::as_str) {
                        Some("output_text") => parts.push(Content::text(text(c, "text"))),
                        Some("refusal") => {
                            refused = true;
                            parts.push(Content::text(text(c, "refusal")));
                        }
                        _ => {}
                    }
                }
            }
            Some("function_call") => {
                let arguments = text(item, "arguments");
                let call_id = text(item, "call_id");
                calls.push(tool_call(
                    Some(&call_id),
                    &text(item, "name"),
                    Some(&arguments),
                    tools,
                    strict,
                ));
            }
            Some("reasoning") => {
                let summary: Vec<String> = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|s| text(s, "text"))
                    .collect();
                let encrypted = item.get("encrypted_content").and_then(Value::as_str);
                parts.push(Content::Reasoning {
                    reasoning: summary.join("\n\n"),
                    signature: encrypted.map(str::to_owned),
                    redacted: summary.is_empty() && encrypted.is_some(),
                    internal: Some(json!({"id": text(item, "id")})),
                });
            }
            _ => {}
        }
    }
    let mut stop = match response
        .incomplete_details
        .and_then(|d| d.reason)
        .as_deref()
    {
        Some("max_output_tokens") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(_) => StopReason::Unknown,
        None if refused => StopReason::ContentFilter,
        None if !calls.is_empty() => StopReason::ToolCalls,
        None => StopReason::Stop,
    };
    if refused {
        stop = StopReason::ContentFilter;
    }
    let only_text = parts.iter().all(|p| matches!(p, Content::Text { .. }));
    let content = if only_text {
        MessageContent::Text(parts.iter().filter_map(Content::as_text).collect())
    } else {
        MessageContent::Parts(parts)
    };
    let usage = response.usage.map(|u| {
        let detail = |v: &Option<Value>, key: &str| {
            v.as_ref().and_then(|d| d.get(key)).and_then(Value::as_u64)
        };
        let cached = detail(&u.input_tokens_details, "cached_tokens");
        let written = detail(&u.input_tokens_details, "cache_write_tokens");
        ModelUsage {
            // As the reference counts: input excludes what was read from or written to the cache.
            input_tokens: u
                .input_tokens
                .saturating_sub(cached.unwrap_or(0) + written.unwrap_or(0)),
            output_tokens: u.output_tokens,
            total_tokens: u.total_tokens.unwrap_or(u.input_tokens + u.output_tokens),
            input_tokens_cache_write: written,
            input_tokens_cache_read: cached,
            reasoning_tokens: detail(&u.output_tokens_details, "reasoning_tokens"),
            total_cost: None,
        }
    });
    Ok(ModelOutput {
        model: model.as_str().into(),
        choices: vec![ChatCompletionChoice {
            message: ChatMessageAssistant {
                id: new_id(),
                content,
                source: Some(MessageSource::Generate),
                metadata: None,
                tool_calls: (!calls.is_empty()).then_some(calls),
                model: Some(model.into()),
            },
            stop_reason: stop,
        }],
        usage,
        time: None,
        metadata: response.id.map(|id| json!({"id": id})),
        completion: None,
    })
}
