//! Streamed Messages (`"stream": true`): events aggregated into the same [`ModelOutput`] a
//! whole message gives, their deltas reported as they arrive to an observer that wants them.

use actuator_model::ModelOutput;
use serde::Deserialize;
use serde_json::Value;

use super::response::{Block, Usage, assemble, usage};
use crate::deltas::Deltas;
use crate::error::{ProviderError, snippet};
use crate::http::{Failure, SseSink, StatusFailure};

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {},
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<DeltaUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: ErrorBody,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct StartMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DeltaUsage {
    #[serde(default)]
    output_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug)]
enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// The events of one streamed message so far.
#[derive(Debug, Default)]
pub(crate) struct MessageStream<'o> {
    provider: String,
    deltas: Deltas<'o>,
    id: Option<String>,
    model: Option<String>,
    blocks: Vec<(usize, Partial)>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl<'o> MessageStream<'o> {
    pub(crate) fn new(provider: &str) -> Self {
        MessageStream {
            provider: provider.to_owned(),
            ..MessageStream::default()
        }
    }

    /// Reports each delta to `deltas` as it is read.
    pub(crate) fn reporting(mut self, deltas: Deltas<'o>) -> Self {
        self.deltas = deltas;
        self
    }

    fn malformed(&self, data: &str, why: &str) -> Failure {
        Failure::Other(ProviderError::MalformedResponse {
            provider: self.provider.clone(),
            message: format!("a stream event {why}: {}", snippet(data, 300)),
        })
    }

    fn block(&mut self, index: usize) -> Option<&mut Partial> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    /// The aggregated output. Tool input arrives as JSON text, so it goes through
    /// `parse_tool_call` (malformed input is a `parse_error`, as for OpenAI).
    pub(crate) fn finish(self, model_name: &str) -> ModelOutput {
        let model = self.model.unwrap_or_else(|| model_name.to_owned());
        let mut blocks = Vec::new();
        let mut parsed = Vec::new();
        for (_, partial) in self.blocks {
            match partial {
                Partial::Text(text) => blocks.push(Block::Text { text }),
                Partial::Thinking {
                    thinking,
                    signature,
                } => {
                    blocks.push(Block::Thinking {
                        thinking,
                        signature,
                    });
                }
                Partial::Redacted(data) => blocks.push(Block::RedactedThinking { data }),
                Partial::ToolUse { id, name, json } => {
                    let json = if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    };
                    parsed.push(actuator_dialect::parse_tool_call(
                        &id,
                        &name,
                        Some(&json),
                        &[],
                    ));
                }
                Partial::Other => {}
            }
        }
        let (mut message, mut stop) = assemble(&model, blocks, self.stop.as_deref());
        if !parsed.is_empty() {
            message
                .tool_calls
                .get_or_insert_with(Vec::new)
                .extend(parsed);
            if stop == actuator_model::StopReason::Stop {
                stop = actuator_model::StopReason::ToolCalls;
            }
        }
        let mut out = ModelOutput::from_message(model, message, stop);
        out.usage = self.usage.as_ref().map(usage);
        out.metadata = self.id.map(|id| serde_json::json!({"id": id}));
        out
    }
}

impl SseSink for MessageStream<'_> {
    fn event(&mut self, _event: &str, data: &str) -> Result<bool, Failure> {
        if data.trim().is_empty() {
            return Ok(false);
        }
        let event: Event = serde_json::from_str(data)
            .map_err(|e| self.malformed(data, &format!("is not a Messages stream event ({e})")))?;
        match event {
            Event::MessageStart { message } => {
                self.id = message.id;
                self.model = message.model;
                self.usage = message.usage;
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let text = |key: &str| content_block[key].as_str().unwrap_or_default().to_owned();
                let partial = match content_block["type"].as_str() {
                    Some("text") => {
                        let start = text("text");
                        self.deltas.text(&start);
                        Partial::Text(start)
                    }
                    Some("thinking") => Partial::Thinking {
                        thinking: text("thinking"),
                        signature: content_block["signature"]
                            .as_str()
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned),
                    },
                    Some("redacted_thinking") => Partial::Redacted(text("data")),
                    Some("tool_use") => {
                        let (id, name) = (text("id"), text("name"));
                        // Named as it starts, as OpenAI's first chunk of a call names it.
                        self.deltas.tool_call(Some(&id), Some(&name), "");
                        Partial::ToolUse {
                            id,
                            name,
                            // A start block's input is `{}`; the input arrives as deltas.
                            json: String::new(),
                        }
                    }
                    _ => Partial::Other,
                };
                self.blocks.push((index, partial));
            }
            Event::ContentBlockDelta { index, delta } => {
                let deltas = self.deltas;
                let Some(block) = self.block(index) else {
                    return Err(
                        self.malformed(data, "continues a content block that never started")
                    );
                };
                match (block, delta) {
                    (Partial::Text(t), Delta::Text { text }) => {
                        deltas.text(&text);
                        t.push_str(&text);
                    }
                    (Partial::ToolUse { id, name, json }, Delta::InputJson { partial_json }) => {
                        deltas.tool_call(Some(id), Some(name), &partial_json);
                        json.push_str(&partial_json);
                    }
                    (Partial::Thinking { thinking, .. }, Delta::Thinking { thinking: more }) => {
                        deltas.reasoning(&more);
                        thinking.push_str(&more);
                    }
                    (Partial::Thinking { signature, .. }, Delta::Signature { signature: s }) => {
                        signature.get_or_insert_with(String::new).push_str(&s);
                    }
                    _ => {}
                }
            }
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop = delta.stop_reason;
                }
                if let Some(n) = usage.and_then(|u| u.output_tokens) {
                    self.usage.get_or_insert_with(Usage::default).output_tokens = n;
                }
            }
            Event::MessageStop {} => return Ok(true),
            Event::Error { error } => {
                let kind = error.kind.unwrap_or_default();
                let status = match kind.as_str() {
                    "overloaded_error" => 529,
                    "rate_limit_error" => 429,
                    "invalid_request_error" => 400,
                    "authentication_error" => 401,
                    "permission_error" => 403,
                    "not_found_error" => 404,
                    _ => 500,
                };
                return Err(Failure::Status(StatusFailure {
                    status,
                    retry_after: None,
                    message: error.message.unwrap_or_else(|| kind.clone()),
                    code: Some(kind.clone()),
                    kind: Some(kind),
                }));
            }
            Event::ContentBlockStop {} | Event::Ping {} | Event::Other => {}
        }
        Ok(false)
    }

    fn complete(&self) -> bool {
        false
    }
}
