//! Chat Completions request bodies: messages, tools (through the dialect renderers), tool
//! choice and generation settings.
//!
//! The body is written straight from structs that borrow the conversation (`Serialize`), not
//! built as a `serde_json::Value` tree first: a tree copies every message's text into its own
//! allocation only to be written out and dropped, which was about half of a turn's client time
//! on a 100-message conversation (W6).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateConfig, MessageContent, ResponseSchema, ToolCall};
use actuator_tool_core::{Content, Media, MediaSource, ToolChoice, ToolInfo};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The request body, and for each offered tool whether it went out in strict mode (its
/// `null` arguments are then stripped).
pub(crate) struct Built<'a> {
    pub body: ChatRequest<'a>,
    pub strict: HashMap<String, bool>,
}

pub(crate) struct Flavor {
    /// OpenAI takes `max_completion_tokens` and `reasoning_effort`; compatible servers mostly
    /// know only `max_tokens`.
    pub openai: bool,
    pub strict_tools: bool,
    /// llama-cpp-python's server takes structured output as `{"type": "json_object",
    /// "schema": …}` and refuses `json_schema` (a 500 naming the literal).
    pub json_object_schema: bool,
}

/// A `CreateChatCompletionRequest`, borrowing the conversation. Fields left `None` are not
/// sent.
#[derive(Serialize)]
pub(crate) struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

impl ChatRequest<'_> {
    /// Asks for the answer as server-sent events, with usage in the last one.
    pub(crate) fn streamed(&mut self) {
        self.stream = Some(true);
        self.stream_options = Some(StreamOptions {
            include_usage: true,
        });
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Cow<'a, str>,
        /// The reasoning fields the server sent (`reasoning_content`, `reasoning`).
        #[serde(flatten)]
        reasoning: Map<String, Value>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<Value>),
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    /// The arguments as the JSON text the API takes (the call's own).
    arguments: &'a str,
}

pub(crate) fn build<'a>(
    model: &'a str,
    input: &'a [ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &'a GenerateConfig,
    flavor: &Flavor,
) -> Result<Built<'a>, String> {
    let messages = input.iter().map(message).collect::<Result<Vec<_>, _>>()?;
    let mut strict = HashMap::new();
    let offered = !tools.is_empty() && *tool_choice != ToolChoice::None;
    let rendered = offered.then(|| {
        tools
            .iter()
            .map(|info| {
                let (tool, is_strict) = tool(info, flavor.strict_tools);
                strict.insert(info.name.clone(), is_strict);
                tool
            })
            .collect()
    });
    let (max_completion_tokens, max_tokens) = match config.max_tokens {
        Some(n) if flavor.openai => (Some(n), None),
        n => (None, n),
    };
    let body = ChatRequest {
        model,
        messages,
        tools: rendered,
        tool_choice: offered.then(|| choice(tool_choice)),
        parallel_tool_calls: config.parallel_tool_calls.filter(|_| offered),
        max_completion_tokens,
        max_tokens,
        temperature: config.temperature,
        top_p: config.top_p,
        stop: config.stop_seqs.as_deref().filter(|s| !s.is_empty()),
        seed: config.seed,
        reasoning_effort: config.reasoning_effort.as_deref().filter(|_| flavor.openai),
        response_format: config
            .response_schema
            .as_ref()
            .map(|schema| response_format(schema, flavor)),
        stream: None,
        stream_options: None,
    };
    Ok(Built { body, strict })
}

/// Structured output as Chat Completions takes it (`ResponseFormatJsonSchema`), which
/// OpenAI-compatible servers (llama.cpp's, vLLM) follow too.
pub(crate) fn response_format(schema: &ResponseSchema, flavor: &Flavor) -> Value {
    if flavor.json_object_schema {
        return json!({"type": "json_object", "schema": schema.json_schema});
    }
    let mut json_schema = serde_json::Map::new();
    json_schema.insert("name".into(), json!(schema.name));
    if let Some(description) = &schema.description {
        json_schema.insert("description".into(), json!(description));
    }
    json_schema.insert("schema".into(), schema.json_schema.clone());
    if let Some(strict) = schema.strict {
        json_schema.insert("strict".into(), json!(strict));
    }
    json!({"type": "json_schema", "json_schema": json_schema})
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

/// A message's text, borrowed when it is plain text.
fn text(content: &MessageContent) -> Cow<'_, str> {
    match content {
        MessageContent::Text(t) => Cow::Borrowed(t),
        parts => Cow::Owned(parts.text()),
    }
}

fn call(c: &ToolCall) -> Result<Call<'_>, String> {
    let arguments = c.arguments.as_json();
    Ok(Call {
        id: &c.id,
        kind: "function",
        function: CallFunction {
            name: &c.function,
            arguments,
        },
    })
}

fn message(m: &ChatMessage) -> Result<Message<'_>, String> {
    Ok(match m {
        ChatMessage::System(s) => Message::System {
            content: text(&s.content),
        },
        ChatMessage::User(u) => Message::User {
            content: user_content(&u.content)?,
        },
        ChatMessage::Assistant(a) => {
            let (think, reasoning) = reasoning_replay(&a.content);
            // Always a string, never `null`: OpenAI takes "" beside tool calls, and some
            // compatible servers (llama-cpp-python) reject `null`.
            let content = if think.is_empty() {
                text(&a.content)
            } else {
                Cow::Owned(format!("{think}{}", a.content.text()))
            };
            Message::Assistant {
                content,
                reasoning,
                tool_calls: a.calls().iter().map(call).collect::<Result<_, _>>()?,
            }
        }
        ChatMessage::Tool(t) => Message::Tool {
            tool_call_id: t.tool_call_id.as_deref().unwrap_or_default(),
            content: match &t.error {
                Some(e) => Cow::Owned(format!("Error: {}", e.message)),
                None => text(&t.content),
            },
        },
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

fn user_content(content: &MessageContent) -> Result<UserContent<'_>, String> {
    let parts = match content {
        MessageContent::Text(t) => return Ok(UserContent::Text(t)),
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
    Ok(UserContent::Parts(out))
}

fn data_url(media: &Media) -> String {
    match &media.source {
        MediaSource::Url { url } => url.clone(),
        MediaSource::Base64 { data } => format!("data:{};base64,{data}", media.media_type),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actuator_model::{ChatMessageAssistant, ToolCallError};
    use actuator_tool_core::ToolErrorKind;

    #[test]
    fn every_kind_of_message_is_written_as_chat_completions_takes_it() {
        let mut thinking = Content::reasoning("Add them.");
        if let Content::Reasoning { internal, .. } = &mut thinking {
            *internal = Some(json!("reasoning_content"));
        }
        let mut assistant = ChatMessageAssistant::new(MessageContent::Parts(vec![
            thinking,
            Content::text("Adding."),
        ]));
        assistant.tool_calls = Some(vec![ToolCall::new("c1", "add", json!({"x": 1, "y": 2}))]);
        let input = vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("1 + 2?"),
            ChatMessage::user(MessageContent::Parts(vec![
                Content::text("And this?"),
                Content::image_base64("AAAA", "image/png"),
            ])),
            ChatMessage::Assistant(Box::new(assistant)),
            ChatMessage::tool("3", "c1", "add", None),
            ChatMessage::tool(
                "",
                "c2",
                "add",
                Some(ToolCallError {
                    kind: ToolErrorKind::Parsing,
                    message: "bad x".into(),
                }),
            ),
        ];
        let config = GenerateConfig::default().max_tokens(64);
        let flavor = Flavor {
            openai: true,
            strict_tools: false,
            json_object_schema: false,
        };
        let mut built = build("gpt", &input, &[], &ToolChoice::Auto, &config, &flavor).unwrap();
        built.body.streamed();
        let body = serde_json::to_value(&built.body).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "1 + 2?"},
                    {"role": "user", "content": [
                        {"type": "text", "text": "And this?"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    ]},
                    {"role": "assistant", "content": "Adding.", "reasoning_content": "Add them.",
                     "tool_calls": [{"id": "c1", "type": "function",
                                     "function": {"name": "add", "arguments": "{\"x\":1,\"y\":2}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "3"},
                    {"role": "tool", "tool_call_id": "c2", "content": "Error: bad x"},
                ],
                "max_completion_tokens": 64,
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
        // The keys go out in the order the API documents them, the role first.
        let text = serde_json::to_string(&built.body).unwrap();
        assert!(
            text.starts_with(r#"{"model":"gpt","messages":[{"role":"system""#),
            "{text}"
        );
    }
}
