//! The Responses API streamed (`"stream": true`): the events' deltas are for showing progress;
//! the answer is the `response` object the last event (`response.completed`, `.incomplete` or
//! `.failed`) carries, read as a whole body is. Items finished along the way
//! (`response.output_item.done`) stand in for an output the last event leaves empty. To an
//! observer that wants them, the text, reasoning and function-argument deltas are reported as
//! they arrive.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::ModelOutput;
use actuator_tool_core::ToolInfo;
use serde_json::{Value, json};

use super::responses::output_value;
use crate::deltas::Deltas;
use crate::error::ProviderError;
use crate::http::{Failure, SseSink, read_failure};

/// Reads one attempt's events.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream<'o> {
    provider: String,
    deltas: Deltas<'o>,
    /// The function calls begun (item id, call id, name): an arguments delta names its item
    /// only. Kept only when deltas are wanted.
    calls: Vec<(String, String, String)>,
    items: Vec<Value>,
    response: Option<Value>,
}

impl<'o> ResponsesStream<'o> {
    pub(crate) fn new(provider: &str) -> Self {
        ResponsesStream {
            provider: provider.to_owned(),
            ..ResponsesStream::default()
        }
    }

    /// Reports each delta to `deltas` as it is read.
    pub(crate) fn reporting(mut self, deltas: Deltas<'o>) -> Self {
        self.deltas = deltas;
        self
    }

    /// Reports the delta event `value` of kind `kind`, if it is one.
    fn report(&mut self, kind: &str, value: &Value) {
        let str_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let delta = value
            .get("delta")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => self.deltas.text(delta),
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                self.deltas.reasoning(delta);
            }
            "response.output_item.added" => {
                let item = &value["item"];
                if item["type"] == "function_call" {
                    let (id, call_id, name) = (
                        str_of(item, "id").unwrap_or_default(),
                        str_of(item, "call_id").unwrap_or_default(),
                        str_of(item, "name").unwrap_or_default(),
                    );
                    self.deltas.tool_call(Some(&call_id), Some(&name), "");
                    // Bounded as the response is: one entry per call the server starts.
                    self.calls.push((id, call_id, name));
                }
            }
            "response.function_call_arguments.delta" => {
                let item = value.get("item_id").and_then(Value::as_str);
                let call = self
                    .calls
                    .iter()
                    .rev()
                    .find(|(id, ..)| Some(id.as_str()) == item);
                let (id, name) = call.map_or((None, None), |(_, c, n)| {
                    (Some(c.as_str()), Some(n.as_str()))
                });
                self.deltas.tool_call(id, name, delta);
            }
            _ => {}
        }
    }

    /// The output of the finished stream.
    pub(crate) fn finish(
        self,
        model_name: &str,
        tools: &[Arc<ToolInfo>],
        strict: &HashMap<String, bool>,
    ) -> Result<ModelOutput, String> {
        let mut response = self
            .response
            .ok_or("the event stream ended without its response")?;
        let empty = response
            .get("output")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty && !self.items.is_empty() {
            response["output"] = Value::Array(self.items);
        }
        output_value(response, model_name, tools, strict)
    }

    fn malformed(&self, data: &str, why: &str) -> Failure {
        Failure::Other(ProviderError::MalformedResponse {
            provider: self.provider.clone(),
            message: format!(
                "a Responses API stream event cannot be read ({why}): {}",
                crate::error::snippet(data, 300)
            ),
        })
    }
}

impl SseSink for ResponsesStream<'_> {
    fn event(&mut self, _event: &str, data: &str) -> Result<bool, Failure> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(false);
        }
        let mut value: Value =
            serde_json::from_str(data).map_err(|e| self.malformed(data, &e.to_string()))?;
        let Some(kind) = value.get("type").and_then(Value::as_str) else {
            return Err(self.malformed(data, "no `type`"));
        };
        if self.deltas.wanted() {
            self.report(kind, &value);
        }
        match kind {
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = value["response"].take();
                if !response.is_object() {
                    return Err(self.malformed(data, "no `response` object"));
                }
                self.response = Some(response);
                Ok(true)
            }
            "response.output_item.done" => {
                let item = value["item"].take();
                if item.is_object() {
                    self.items.push(item);
                }
                Ok(false)
            }
            "error" => {
                // Read like an error body: a refused request is a 400 (so a content filter
                // becomes an output), anything else a server failure (retried).
                let code = value.get("code").cloned().unwrap_or(Value::Null);
                let message = value.get("message").cloned().unwrap_or(Value::Null);
                let invalid = code.as_str().is_some_and(|c| {
                    c.starts_with("invalid")
                        || c.contains("policy")
                        || c == "context_length_exceeded"
                });
                let status = if invalid { 400 } else { 500 };
                let body = json!({"error": {"code": code, "message": message, "type": if invalid { "invalid_request_error" } else { "server_error" }}});
                Err(Failure::Status(read_failure(
                    status,
                    None,
                    body.to_string().as_bytes(),
                )))
            }
            _ => Ok(false),
        }
    }

    fn complete(&self) -> bool {
        self.response.is_some()
    }
}
