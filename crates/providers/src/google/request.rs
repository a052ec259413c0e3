//! `generateContent` request bodies: system text as `systemInstruction`, turns as `user` and
//! `model` contents, tool calls and results as `functionCall` and `functionResponse` parts
//! (the results of one turn in one user content), thought signatures replayed where they came.

use std::sync::Arc;

use actuator_dialect::Dialect;
use actuator_model::{ChatMessage, ChatMessageAssistant, GenerateConfig, MessageContent};
use actuator_tool_core::{Content, Media, MediaSource, ToolChoice, ToolInfo};
use serde_json::{Map, Value, json};

/// What an empty text part is sent as: Gemini rejects a part with no data.
const NO_CONTENT: &str = "(no content)";

pub(crate) fn build(
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &GenerateConfig,
) -> Result<Value, String> {
    let mut body = Map::new();
    let system: Vec<String> = input
        .iter()
        .filter_map(|m| match m {
            ChatMessage::System(s) => Some(s.content.text()),
            _ => None,
        })
        .filter(|t| !t.is_empty())
        .collect();
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    body.insert("contents".into(), Value::Array(contents(input)?));
    if !tools.is_empty() && *tool_choice != ToolChoice::None {
        let declarations: Vec<Value> = tools
            .iter()
            .map(|info| {
                let mut rendered = actuator_dialect::gemini(info);
                if !rendered.report.is_empty() {
                    tracing::debug!(tool = %info.name, report = %rendered.report, "Gemini dialect changed the tool's schema");
                }
                if let Some(parameters) = rendered.tool.get_mut("parameters") {
                    api_types(parameters);
                }
                rendered.tool
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
        let calling = match tool_choice {
            ToolChoice::Any => json!({"mode": "ANY"}),
            ToolChoice::Function { name } => {
                json!({"mode": "ANY", "allowedFunctionNames": [Dialect::Gemini.function_name(name)]})
            }
            ToolChoice::Auto | ToolChoice::None => json!({"mode": "AUTO"}),
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": calling}),
        );
    }
    let generation = generation_config(config);
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Ok(Value::Object(body))
}

/// The dialect's schema with its types as the API's `Type` enum names (`"string"` is
/// `"STRING"`), as Google's SDK describes `Schema.type`. Only schema nodes are walked (a
/// property named `type` is a schema, not a type), never literal values (`enum`, `default`).
fn api_types(schema: &mut Value) {
    let Value::Object(node) = schema else {
        return;
    };
    for (key, value) in node.iter_mut() {
        match key.as_str() {
            "type" => {
                if let Value::String(t) = value {
                    *t = t.to_ascii_uppercase();
                }
            }
            "properties" => {
                if let Value::Object(properties) = value {
                    properties.values_mut().for_each(api_types);
                }
            }
            "items" => api_types(value),
            "anyOf" => {
                if let Value::Array(branches) = value {
                    branches.iter_mut().for_each(api_types);
                }
            }
            _ => {}
        }
    }
}

/// `generationConfig`: sampling, limits, thinking and structured output.
fn generation_config(config: &GenerateConfig) -> Map<String, Value> {
    let mut g = Map::new();
    if let Some(n) = config.max_tokens {
        g.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(t) = config.temperature {
        g.insert("temperature".into(), json!(t));
    }
    if let Some(p) = config.top_p {
        g.insert("topP".into(), json!(p));
    }
    if let Some(stop) = config.stop_seqs.as_ref().filter(|s| !s.is_empty()) {
        g.insert("stopSequences".into(), json!(stop));
    }
    if let Some(seed) = config.seed {
        g.insert("seed".into(), json!(seed));
    }
    // A thinking budget (the reference's `reasoning_tokens`), with the thoughts' summaries
    // returned so that they are recorded; 0 turns thinking off.
    if let Some(budget) = config.reasoning_tokens {
        g.insert(
            "thinkingConfig".into(),
            json!({"thinkingBudget": budget, "includeThoughts": budget > 0}),
        );
    }
    if let Some(schema) = &config.response_schema {
        g.insert("responseMimeType".into(), json!("application/json"));
        g.insert("responseJsonSchema".into(), schema.json_schema.clone());
    }
    g
}

/// The turns: consecutive messages of one role merged into one content (Gemini wants them
/// alternating), tool results as `functionResponse` parts of a user content.
fn contents(input: &[ChatMessage]) -> Result<Vec<Value>, String> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in input {
        let (role, parts) = match m {
            ChatMessage::System(_) => continue,
            ChatMessage::User(u) => ("user", content_parts(&u.content)?),
            ChatMessage::Assistant(a) => ("model", model_parts(a)?),
            ChatMessage::Tool(t) => {
                let response = match &t.error {
                    Some(e) => json!({"error": e.message}),
                    None => json!({"output": t.content.text()}),
                };
                let name = t.function.as_deref().unwrap_or_default();
                let mut call = json!({
                    "name": Dialect::Gemini.function_name(name),
                    "response": response,
                });
                if let Some(id) = &t.tool_call_id {
                    call["id"] = json!(id);
                }
                ("user", vec![json!({"functionResponse": call})])
            }
        };
        match turns.last_mut() {
            Some((last, parts_so_far)) if *last == role => parts_so_far.extend(parts),
            _ => turns.push((role, parts)),
        }
    }
    Ok(turns
        .into_iter()
        .map(|(role, mut parts)| {
            if parts.is_empty() {
                parts.push(json!({"text": NO_CONTENT}));
            }
            json!({"role": role, "parts": parts})
        })
        .collect())
}

/// A model turn: its text and media, then its calls. A signed reasoning block's signature goes
/// on the part after it, or on the turn's first call when it has calls (as Gemini requires);
/// thought text is not replayed, and reasoning without a signature (another provider's) is
/// left out.
fn model_parts(message: &ChatMessageAssistant) -> Result<Vec<Value>, String> {
    let has_calls = !message.calls().is_empty();
    let mut parts = Vec::new();
    let mut signature: Option<String> = None;
    let items: &[Content] = match &message.content {
        MessageContent::Text(t) => {
            if !t.is_empty() {
                parts.push(json!({"text": t}));
            }
            &[]
        }
        MessageContent::Parts(p) => p,
    };
    for item in items {
        if let Content::Reasoning {
            signature: Some(s),
            internal,
            ..
        } = item
        {
            // Only Gemini's own signatures: another provider's would be refused as corrupt.
            if super::response::is_gemini(internal.as_ref()) {
                signature = Some(s.clone());
            }
            continue;
        }
        let Some(mut part) = part_of(item)? else {
            continue;
        };
        if !has_calls && let Some(s) = signature.take() {
            part["thoughtSignature"] = json!(s);
        }
        parts.push(part);
    }
    for (i, call) in message.calls().iter().enumerate() {
        let args = call
            .arguments
            .to_value()
            .map_err(|e| format!("the arguments of call {} cannot be read: {e}", call.id))?;
        // Under the name the declaration was sent with (the dialect repairs names Gemini
        // rejects).
        let name = Dialect::Gemini.function_name(&call.function);
        let mut part = json!({"functionCall": {"id": call.id, "name": name, "args": args}});
        if i == 0
            && let Some(s) = signature.take()
        {
            part["thoughtSignature"] = json!(s);
        }
        parts.push(part);
    }
    Ok(parts)
}

fn content_parts(content: &MessageContent) -> Result<Vec<Value>, String> {
    match content {
        MessageContent::Text(t) if t.is_empty() => Ok(Vec::new()),
        MessageContent::Text(t) => Ok(vec![json!({"text": t})]),
        MessageContent::Parts(parts) => {
            let mut out = Vec::new();
            for p in parts {
                if let Some(part) = part_of(p)? {
                    out.push(part);
                }
            }
            Ok(out)
        }
    }
}

/// One content item as a part; `None` for what Gemini is not sent (reasoning, empty text).
fn part_of(content: &Content) -> Result<Option<Value>, String> {
    Ok(match content {
        Content::Text { text, .. } if text.is_empty() => None,
        Content::Text { text, .. } => Some(json!({"text": text})),
        Content::Image(media)
        | Content::Document(media)
        | Content::Audio(media)
        | Content::Video(media) => Some(media_part(media)),
        Content::Reasoning { .. } => None,
        _ => None,
    })
}

fn media_part(media: &Media) -> Value {
    match &media.source {
        MediaSource::Url { url } => {
            json!({"fileData": {"mimeType": media.media_type, "fileUri": url}})
        }
        MediaSource::Base64 { data } => {
            json!({"inlineData": {"mimeType": media.media_type, "data": data}})
        }
    }
}
