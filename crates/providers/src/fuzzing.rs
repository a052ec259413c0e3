//! What the fuzz target drives: the response, error-body and stream-event parsers of both
//! providers on arbitrary bytes. They must never panic; whatever they accept must be a
//! well-formed output.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_tool_core::{ToolInfo, ToolParams};
use serde_json::json;

use crate::http::{SseSink, read_failure};

fn tools() -> (Vec<Arc<ToolInfo>>, HashMap<String, bool>) {
    let mut p = ToolParams::default();
    p.properties.insert("x".into(), json!({"type": "integer"}));
    p.properties
        .insert("note".into(), json!({"type": "string"}));
    p.required = vec!["x".into()];
    let add = Arc::new(ToolInfo::new("add", "Add.", p));
    let strict = HashMap::from([("add".to_owned(), true)]);
    (vec![add], strict)
}

/// Feeds `bytes` to every parser: as a whole response body (Chat Completions, Responses,
/// Messages), as an
/// error body, and, split into server-sent events at blank lines, as a stream of each
/// provider (then aggregated). Panics only when an invariant breaks.
pub fn parse_everything(bytes: &[u8]) {
    let (tools, strict) = tools();
    #[cfg(feature = "openai")]
    if let Ok(out) = crate::openai::response::output(bytes, "fuzz", &tools, &strict) {
        assert!(
            !out.choices.is_empty(),
            "an accepted Chat Completions response has a choice"
        );
    }
    #[cfg(feature = "openai")]
    if let Ok(out) = crate::openai::responses::output(bytes, "fuzz", &tools, &strict) {
        assert_eq!(out.choices.len(), 1);
    }
    #[cfg(feature = "anthropic")]
    if let Ok(out) = crate::anthropic::response::output(bytes, "fuzz") {
        assert_eq!(out.choices.len(), 1);
    }
    #[cfg(feature = "google")]
    if let Ok(response) = crate::google::response::parse(bytes) {
        assert_eq!(
            crate::google::response::output(response, "fuzz")
                .choices
                .len(),
            1
        );
    }
    for status in [400, 429, 529] {
        let failure = read_failure(status, None, bytes);
        assert!(!failure.message.is_empty(), "an error always has a message");
    }
    // The bytes as a raw event stream, whole and in small chunks: the same events either way.
    let mut by_chunks = Vec::new();
    let mut chunked = crate::sse::SseParser::new(1 << 16);
    let chunked_ok = bytes
        .chunks(7)
        .try_for_each(|c| chunked.feed(c, &mut by_chunks))
        .is_ok();
    let mut whole = Vec::new();
    let whole_ok = crate::sse::SseParser::new(1 << 16)
        .feed(bytes, &mut whole)
        .is_ok();
    if chunked_ok && whole_ok {
        assert_eq!(by_chunks, whole, "chunking does not change the events");
    }
    let text = String::from_utf8_lossy(bytes);
    let events: Vec<(&str, &str)> = text
        .split("\n\n")
        .map(|block| {
            let mut event = "";
            let mut data = "";
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data = v.trim_start();
                }
            }
            (event, data)
        })
        .collect();
    #[cfg(feature = "openai")]
    {
        let mut sink = crate::openai::stream::ChatStream::new("fuzz");
        let mut done = false;
        for (event, data) in &events {
            match sink.event(event, data) {
                Ok(true) => {
                    done = true;
                    break;
                }
                Ok(false) => {}
                Err(_) => break,
            }
        }
        if done || sink.complete() {
            let out = sink.finish("fuzz", &tools, &strict);
            assert_eq!(out.choices.len(), 1);
        }
    }
    #[cfg(feature = "openai")]
    {
        let mut sink = crate::openai::responses_stream::ResponsesStream::new("fuzz");
        for (event, data) in &events {
            match sink.event(event, data) {
                Ok(true) => break,
                Ok(false) => {}
                Err(_) => break,
            }
        }
        if sink.complete()
            && let Ok(out) = sink.finish("fuzz", &tools, &strict)
        {
            assert_eq!(out.choices.len(), 1);
        }
    }
    #[cfg(feature = "anthropic")]
    {
        let mut sink = crate::anthropic::stream::MessageStream::new("fuzz");
        for (event, data) in &events {
            match sink.event(event, data) {
                Ok(true) => {
                    let out = sink.finish("fuzz");
                    assert_eq!(out.choices.len(), 1);
                    break;
                }
                Ok(false) => {}
                Err(_) => break,
            }
        }
    }
    #[cfg(feature = "google")]
    {
        let mut sink =
            crate::google::stream::ContentStream::new("fuzz", crate::deltas::Deltas::default());
        for (event, data) in &events {
            if sink.event(event, data).is_err() {
                break;
            }
        }
        assert_eq!(sink.finish("fuzz").choices.len(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::parse_everything;

    #[test]
    fn the_fuzz_entry_point_takes_garbage_and_real_shapes() {
        parse_everything(b"");
        parse_everything(b"\xff\xfe{{{");
        parse_everything(br#"{"choices": [{"message": {"content": "hi", "tool_calls": [{"function": {"name": "add", "arguments": "{\"x\": 1, \"note\": null}"}}]}}]}"#);
        parse_everything(br#"{"status": "incomplete", "output": [{"type": "reasoning", "summary": [7]}, {"type": "function_call", "name": "add", "arguments": "{"}]}"#);
        parse_everything(br#"{"content": [{"type": "tool_use", "id": "t", "name": "add", "input": 5}], "stop_reason": "tool_use"}"#);
        parse_everything(br#"{"candidates": [{"content": {"parts": [{"thought": true}, {"functionCall": {"name": "add", "args": 5}, "thoughtSignature": "s"}]}, "finishReason": "MALFORMED_FUNCTION_CALL"}], "usageMetadata": {"promptTokenCount": 3, "cachedContentTokenCount": 9}}"#);
        parse_everything(b"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"a\", \"thought\": true}]}}]}\n\ndata: {\"candidates\": []}\n\n");
        parse_everything(b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"tool_calls\": [{\"index\": 3, \"function\": {\"arguments\": \"{\"}}]}, \"finish_reason\": \"length\"}]}\n\ndata: [DONE]\n\n");
        parse_everything(b"data: {\"type\": \"response.output_item.done\", \"item\": {\"type\": \"function_call\", \"name\": \"add\", \"arguments\": \"{\"}}\n\ndata: {\"type\": \"response.completed\", \"response\": {\"output\": []}}\n\n");
        parse_everything(b"data: {\"type\": \"response.completed\", \"response\": 3}\n\n");
        parse_everything(b"event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 9, \"delta\": {\"type\": \"text_delta\", \"text\": \"x\"}}\n\n");
        parse_everything(b"event: message_start\ndata: {\"type\": \"message_start\", \"message\": {}}\n\nevent: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"tool_use\", \"id\": \"a\", \"name\": \"add\", \"input\": {}}}\n\nevent: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"input_json_delta\", \"partial_json\": \"[1,\"}}\n\nevent: message_stop\ndata: {\"type\": \"message_stop\"}\n\n");
    }
}
