//! Streamed Chat Completions (`"stream": true`): chunks aggregated into the same
//! [`ModelOutput`] a whole response gives, their deltas reported as they arrive to an
//! observer that wants them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use actuator_model::ModelOutput;
use actuator_tool_core::ToolInfo;
use serde::Deserialize;

use super::response::{ChatReasoning, Usage, assemble, tool_call, usage};
use crate::deltas::Deltas;
use crate::http::{Failure, SseSink, read_failure};

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Debug, Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The chunks of one streamed response so far.
#[derive(Debug, Default)]
pub(crate) struct ChatStream<'o> {
    provider: String,
    deltas: Deltas<'o>,
    id: Option<String>,
    model: Option<String>,
    text: String,
    refusal: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    calls: BTreeMap<usize, PartialCall>,
    finish: Option<String>,
    usage: Option<Usage>,
}

impl SseSink for ChatStream<'_> {
    fn event(&mut self, _event: &str, data: &str) -> Result<bool, Failure> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let value: serde_json::Value =
            serde_json::from_str(data).map_err(|e| malformed(&self.provider, data, &e))?;
        if value.get("error").is_some() {
            // A mid-stream error: read like an error body (a 400 for a request the provider
            // refuses, so a content filter block becomes an output; else a server failure).
            let bad_request = value["error"]["type"] == "invalid_request_error";
            let status = if bad_request { 400 } else { 500 };
            return Err(Failure::Status(read_failure(status, None, data.as_bytes())));
        }
        let chunk: Chunk =
            serde_json::from_value(value).map_err(|e| malformed(&self.provider, data, &e))?;
        self.id = self.id.take().or(chunk.id);
        self.model = self.model.take().or(chunk.model);
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let d = choice.delta;
            if let Some(t) = d.content {
                self.deltas.text(&t);
                self.text.push_str(&t);
            }
            if let Some(r) = d.refusal {
                self.deltas.text(&r);
                self.refusal.get_or_insert_with(String::new).push_str(&r);
            }
            if let Some(r) = d.reasoning_content {
                self.deltas.reasoning(&r);
                self.reasoning_content
                    .get_or_insert_with(String::new)
                    .push_str(&r);
            }
            if let Some(r) = d.reasoning {
                self.deltas.reasoning(&r);
                self.reasoning.get_or_insert_with(String::new).push_str(&r);
            }
            for call in d.tool_calls.unwrap_or_default() {
                let partial = self.calls.entry(call.index).or_default();
                if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                    partial.id = Some(id);
                }
                let mut fragment = None;
                if let Some(f) = call.function {
                    if let Some(name) = f.name {
                        partial.name.push_str(&name);
                    }
                    if let Some(args) = f.arguments {
                        partial.arguments.push_str(&args);
                        fragment = Some(partial.arguments.len() - args.len());
                    }
                }
                // Later chunks of a call carry only its index: the delta names the call by
                // what the first ones said.
                self.deltas.tool_call(
                    partial.id.as_deref(),
                    Some(&partial.name),
                    fragment.map_or("", |from| &partial.arguments[from..]),
                );
            }
            if choice.finish_reason.is_some() {
                self.finish = choice.finish_reason;
            }
        }
        Ok(false)
    }

    /// Servers that leave out `[DONE]` have still said why they stopped.
    fn complete(&self) -> bool {
        self.finish.is_some()
    }
}

fn malformed(provider: &str, data: &str, e: &serde_json::Error) -> Failure {
    Failure::Other(crate::error::ProviderError::MalformedResponse {
        provider: provider.to_owned(),
        message: format!(
            "a stream event is not a chat completion chunk ({e}): {}",
            crate::error::snippet(data, 300)
        ),
    })
}

impl<'o> ChatStream<'o> {
    pub(crate) fn new(provider: &str) -> Self {
        ChatStream {
            provider: provider.to_owned(),
            ..ChatStream::default()
        }
    }

    /// Reports each delta to `deltas` as it is read.
    pub(crate) fn reporting(mut self, deltas: Deltas<'o>) -> Self {
        self.deltas = deltas;
        self
    }

    /// The aggregated output.
    pub(crate) fn finish(
        self,
        model_name: &str,
        tools: &[Arc<ToolInfo>],
        strict: &HashMap<String, bool>,
    ) -> ModelOutput {
        let model = self.model.unwrap_or_else(|| model_name.to_owned());
        let calls = self
            .calls
            .into_values()
            .map(|c| tool_call(c.id.as_deref(), &c.name, Some(&c.arguments), tools, strict))
            .collect();
        let choice = assemble(
            &model,
            self.text,
            self.refusal,
            ChatReasoning::from_fields(self.reasoning_content, self.reasoning),
            calls,
            self.finish.as_deref(),
        );
        ModelOutput {
            model: model.into(),
            choices: vec![choice],
            usage: self.usage.as_ref().map(usage),
            time: None,
            metadata: self.id.map(|id| serde_json::json!({"id": id})),
            completion: None,
        }
    }
}
