//! Sampling requests and answers ↔ their MCP wire form (`sampling/createMessage`), both ways:
//! our server asks a client's model, and our client answers a server.

use actuator_tool_core::{SamplingMessage, SamplingRequest, SamplingResult, SamplingRole};
use rmcp::ErrorData;
use serde_json::{Value, json};

use crate::convert::{content_from_mcp, content_to_mcp};

fn role_name(role: SamplingRole) -> &'static str {
    match role {
        SamplingRole::User => "user",
        SamplingRole::Assistant => "assistant",
    }
}

/// A content block, or the first of a list of them (2025-11-25 allows lists).
fn first_block(content: &Value) -> Value {
    match content {
        Value::Array(blocks) => blocks.first().cloned().unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// The `sampling/createMessage` parameters of `request`.
pub(crate) fn request_to_wire(request: &SamplingRequest) -> Value {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| json!({"role": role_name(m.role), "content": content_to_mcp(&m.content)}))
        .collect();
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = &request.system_prompt {
        params["systemPrompt"] = json!(system);
    }
    if let Some(temperature) = request.temperature {
        params["temperature"] = json!(temperature);
    }
    if !request.stop_sequences.is_empty() {
        params["stopSequences"] = json!(request.stop_sequences);
    }
    params
}

/// A server's `sampling/createMessage` parameters as a request; `Err` (invalid params) when
/// they are not a sampling request.
pub(crate) fn request_from_wire(params: &Value) -> Result<SamplingRequest, ErrorData> {
    let invalid = |what: &str| ErrorData::invalid_params(format!("sampling request: {what}"), None);
    let messages = params["messages"]
        .as_array()
        .ok_or_else(|| invalid("messages must be a list"))?
        .iter()
        .map(|m| {
            let content = content_from_mcp(&first_block(&m["content"]));
            match m["role"].as_str() {
                Some("user") => Ok(SamplingMessage::user(content)),
                Some("assistant") => Ok(SamplingMessage::assistant(content)),
                _ => Err(invalid("a message's role must be user or assistant")),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let max_tokens = params["maxTokens"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| invalid("maxTokens must be a positive integer"))?;
    let mut request = SamplingRequest::new(messages, max_tokens);
    request.system_prompt = params["systemPrompt"].as_str().map(str::to_owned);
    request.temperature = params["temperature"].as_f64();
    request.stop_sequences = params["stopSequences"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(request)
}

/// An answer as the `sampling/createMessage` result.
pub(crate) fn result_to_wire(answer: &SamplingResult) -> Value {
    let mut out = json!({
        "role": role_name(answer.message.role),
        "content": content_to_mcp(&answer.message.content),
        "model": answer.model,
    });
    if let Some(reason) = &answer.stop_reason {
        out["stopReason"] = json!(reason);
    }
    out
}

/// A client's `sampling/createMessage` result as an answer.
pub(crate) fn result_from_wire(answer: &Value) -> SamplingResult {
    let mut result = SamplingResult::new(
        content_from_mcp(&first_block(&answer["content"])),
        answer["model"].as_str().unwrap_or_default(),
    );
    if let Some(reason) = answer["stopReason"].as_str() {
        result = result.stop_reason(reason);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_an_answer_survive_the_wire() {
        let request = SamplingRequest::new(
            [
                SamplingMessage::user("Name a colour."),
                SamplingMessage::assistant("Red."),
            ],
            20,
        )
        .system_prompt("One word.")
        .temperature(0.5);
        let back = request_from_wire(&request_to_wire(&request)).unwrap();
        assert_eq!(back, request);
        let answer = SamplingResult::new("Blue.", "scripted").stop_reason("endTurn");
        assert_eq!(result_from_wire(&result_to_wire(&answer)), answer);
    }

    #[test]
    fn a_malformed_request_is_invalid_params_naming_the_field() {
        let err = request_from_wire(&json!({"messages": [], "maxTokens": -1})).unwrap_err();
        assert!(err.message.contains("maxTokens"), "{}", err.message);
        let err = request_from_wire(&json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}], "maxTokens": 5})).unwrap_err();
        assert!(err.message.contains("role"), "{}", err.message);
    }
}
