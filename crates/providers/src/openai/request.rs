//! Chat Completions request bodies: messages, tools (through the dialect renderers), tool
//! choice and generation settings.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateConfig, MessageContent};
use actuator_tool_core::{Content, Media, MediaSource, ToolChoice, ToolInfo};
use serde_json::{Map, Value, json};

/// The request body, and for each offered tool whether it went out in strict mode (its
/// `null` arguments are then stripped).
pub(crate) struct Built {
    pub body: Value,
    pub strict: HashMap<String, bool>,
}

pub(crate) struct Flavor {
    /// OpenAI takes `max_completion_tokens` and `reasoning_effort`; compatible servers mostly
    /// know only `max_tokens`.
    pub openai: bool,
    pub strict_tools: bool,
}

pub(crate) fn build(
    model: &str,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &GenerateConfig,
    flavor: &Flavor,
) -> Result<Built, String> {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let messages = input.iter().map(message).collect::<Result<Vec<_>, _>>()?;
    body.insert("messages".into(), Value::Array(messages));
    let mut strict = HashMap::new();
    if !tools.is_empty() && *tool_choice != ToolChoice::None {
        let rendered: Vec<Value> = tools
            .iter()
            .map(|info| {
                let (tool, is_strict) = tool(info, flavor.strict_tools);
                strict.insert(info.name.clone(), is_strict);
                tool
            })
            .collect();
        body.insert("tools".into(), Value::Array(rendered));
        body.insert("tool_choice".into(), choice(tool_choice));
        if let Some(parallel) = config.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    if let Some(n) = config.max_tokens {
        let key = if flavor.openai {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(n));
    }
    if let Some(t) = config.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = config.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(stop) = &config.stop_seqs
        && !stop.is_empty()
    {
        body.insert("stop".into(), json!(stop));
    }
    if let Some(seed) = config.seed {
        body.insert("seed".into(), json!(seed));
    }
    if let Some(effort) = &config.reasoning_effort
        && flavor.openai
    {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    Ok(Built {
        body: Value::Object(body),
        strict,
    })
}

/// A tool: strict through the dialect when asked and the schema allows it, else the schema as
/// is with `"strict": false` left out.
fn tool(info: &ToolInfo, strict: bool) -> (Value, bool) {
    if strict {
        let rendered = actuator_dialect::openai_strict(info);
        let is_strict = rendered.tool["function"]["strict"] == Value::Bool(true);
        if !rendered.report.is_empty() {
            tracing::debug!(tool = %info.name, strict = is_strict, report = %rendered.report, "OpenAI dialect changed the tool's schema");
        }
        return (rendered.tool, is_strict);
    }
    let tool = json!({
        "type": "function",
        "function": {
            "name": info.name,
            "description": info.description,
            "parameters": info.parameters.to_value(),
        }
    });
    (tool, false)
}

fn choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Any => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Function { name } => json!({"type": "function", "function": {"name": name}}),
    }
}

fn message(m: &ChatMessage) -> Result<Value, String> {
    Ok(match m {
        ChatMessage::System(s) => json!({"role": "system", "content": s.content.text()}),
        ChatMessage::User(u) => json!({"role": "user", "content": user_content(&u.content)?}),
        ChatMessage::Assistant(a) => {
            let text = a.content.text();
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            let calls: Vec<Value> = a
                .calls()
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.function,
                            "arguments": Value::Object(c.arguments.clone()).to_string(),
                        }
                    })
                })
                .collect();
            let (think, fields) = reasoning_replay(&a.content);
            // Always a string, never `null`: OpenAI takes "" beside tool calls, and some
            // compatible servers (llama-cpp-python) reject `null`.
            out.insert("content".into(), json!(format!("{think}{text}")));
            out.extend(fields);
            if !calls.is_empty() {
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
        ChatMessage::Tool(t) => {
            let content = match &t.error {
                Some(e) => format!("Error: {}", e.message),
                None => t.content.text(),
            };
            json!({
                "role": "tool",
                "tool_call_id": t.tool_call_id.as_deref().unwrap_or_default(),
                "content": content,
            })
        }
    })
}

/// The reasoning of an assistant message as the Chat Completions server that produced it
/// sent it: the `reasoning_content` / `reasoning` fields it came in, or a `<think>` block
/// before the text. Reasoning from other providers (Anthropic's signed thinking, OpenAI
/// reasoning items) is theirs to replay and is left out, as is redacted reasoning.
fn reasoning_replay(content: &MessageContent) -> (String, Map<String, Value>) {
    let mut think = String::new();
    let mut fields = Map::new();
    let MessageContent::Parts(parts) = content else {
        return (think, fields);
    };
    for part in parts {
        let Content::Reasoning {
            reasoning,
            redacted: false,
            internal: Some(Value::String(source)),
            ..
        } = part
        else {
            continue;
        };
        match source.as_str() {
            "reasoning_content" | "reasoning" => {
                let field = fields.entry(source.clone()).or_insert_with(|| json!(""));
                if let Value::String(s) = field {
                    s.push_str(reasoning);
                }
            }
            "think" => think.push_str(&format!("<think>\n{reasoning}\n</think>\n")),
            _ => {}
        }
    }
    (think, fields)
}

fn user_content(content: &MessageContent) -> Result<Value, String> {
    let parts = match content {
        MessageContent::Text(t) => return Ok(json!(t)),
        MessageContent::Parts(parts) => parts,
    };
    let mut out = Vec::new();
    for part in parts {
        match part {
            Content::Text { text, .. } => out.push(json!({"type": "text", "text": text})),
            Content::Image(media) => {
                out.push(json!({"type": "image_url", "image_url": {"url": data_url(media)}}));
            }
            Content::Audio(media) => {
                let MediaSource::Base64 { data } = &media.source else {
                    return Err("audio must be base64 data for Chat Completions, not a URL".into());
                };
                let format =
                    if media.media_type.contains("mp3") || media.media_type.contains("mpeg") {
                        "mp3"
                    } else {
                        "wav"
                    };
                out.push(
                    json!({"type": "input_audio", "input_audio": {"data": data, "format": format}}),
                );
            }
            Content::Document(media) => {
                let mut file = Map::new();
                file.insert("file_data".into(), json!(data_url(media)));
                if let Some(name) = &media.filename {
                    file.insert("filename".into(), json!(name));
                }
                out.push(json!({"type": "file", "file": file}));
            }
            Content::Video(_) => {
                return Err("Chat Completions does not accept video content".into());
            }
            // Reasoning, server tool uses and provider data are not user input.
            _ => {}
        }
    }
    Ok(Value::Array(out))
}

fn data_url(media: &Media) -> String {
    match &media.source {
        MediaSource::Url { url } => url.clone(),
        MediaSource::Base64 { data } => format!("data:{};base64,{data}", media.media_type),
    }
}
