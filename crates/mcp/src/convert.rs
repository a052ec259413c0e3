//! MCP wire values ↔ Actuator values: a server's tool result as [`ToolOutput`] (or the
//! recoverable error of an `isError` result), and MCP content blocks from and to [`Content`].
//!
//! Results are read from their JSON wire form (the protocol's shapes), so every content type
//! a server sends is handled the same whatever the SDK's Rust types look like.

use actuator_tool_core::{Content, Media, MediaSource, ToolError, ToolOutput};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Whether a MIME type names text a client can show as is (sent as a text resource).
fn is_textual(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/json" | "application/xml" | "application/yaml" | "application/javascript"
        )
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}

/// The text of one content block, as the reference's `tool_result_as_text` writes it.
fn block_text(block: &Value) -> Option<String> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => block.get("text").and_then(Value::as_str).map(str::to_owned),
        Some("image") => Some("(base64 encoded image omitted)".to_owned()),
        Some("audio") => Some("(base64 encoded audio omitted)".to_owned()),
        Some("resource_link") => Some(resource_link_text(block)),
        Some("resource") => block
            .get("resource")
            .and_then(|r| r.get("text"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

/// `{description} ({uri})`, as the reference shows a resource link (the name when there is
/// no description).
fn resource_link_text(block: &Value) -> String {
    let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
    let label = block
        .get("description")
        .or_else(|| block.get("title"))
        .or_else(|| block.get("name"))
        .and_then(Value::as_str)
        .unwrap_or(uri);
    format!("{label} ({uri})")
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn media(data: &str, mime: &str, filename: Option<&str>) -> Media {
    Media {
        source: MediaSource::Base64 {
            data: data.to_owned(),
        },
        media_type: mime.to_owned(),
        filename: filename.map(str::to_owned),
        internal: None,
    }
}

/// One MCP content block as Actuator content.
///
/// Text → text; image and audio → base64 media; an embedded text resource → its text; an
/// embedded blob → an image, audio or document by its MIME type (the URI as the file name); a
/// resource link → `{description} ({uri})`; anything else → its JSON as text, so nothing a
/// server returns is lost.
pub fn content_from_mcp(block: &Value) -> Content {
    let kind = str_field(block, "type").unwrap_or("");
    match kind {
        "text" => Content::text(str_field(block, "text").unwrap_or("")),
        "image" | "audio" => {
            let data = str_field(block, "data").unwrap_or("");
            let default = if kind == "image" {
                "image/png"
            } else {
                "audio/wav"
            };
            let mime = str_field(block, "mimeType").unwrap_or(default);
            let m = media(data, mime, None);
            if kind == "image" {
                Content::Image(m)
            } else {
                Content::Audio(m)
            }
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            if let Some(text) = str_field(resource, "text") {
                return Content::text(text);
            }
            let blob = str_field(resource, "blob").unwrap_or("");
            let mime = str_field(resource, "mimeType").unwrap_or("application/octet-stream");
            let m = media(blob, mime, str_field(resource, "uri"));
            if mime.starts_with("image/") {
                Content::Image(m)
            } else if mime.starts_with("audio/") {
                Content::Audio(m)
            } else if mime.starts_with("video/") {
                Content::Video(m)
            } else {
                Content::Document(m)
            }
        }
        "resource_link" => Content::text(resource_link_text(block)),
        _ => Content::text(block.to_string()),
    }
}

/// A `tools/call` result (its JSON form) as what the model sees.
///
/// `isError: true` is a recoverable `unknown` error whose message is the result's text (the
/// reference's `ToolError(tool_result_as_text(content))`). Otherwise one text block is plain
/// text output (truncated like any text), several blocks are a content list, and a result
/// with only `structuredContent` is that JSON as text.
pub fn output_from_result(result: &Value) -> Result<ToolOutput, ToolError> {
    let blocks: &[Value] = result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: Vec<String> = blocks.iter().filter_map(block_text).collect();
        return Err(ToolError::new(text.join("\n\n")));
    }
    if blocks.is_empty() {
        return Ok(match result.get("structuredContent") {
            Some(structured) => ToolOutput::Text(structured.to_string().into()),
            None => ToolOutput::default(),
        });
    }
    if let [only] = blocks
        && str_field(only, "type") == Some("text")
    {
        return Ok(ToolOutput::Text(
            str_field(only, "text").unwrap_or("").into(),
        ));
    }
    Ok(ToolOutput::Content(
        blocks.iter().map(content_from_mcp).collect(),
    ))
}

/// Actuator content as an MCP content block (what our server sends).
pub fn content_to_mcp(content: &Content) -> Value {
    let base64_of = |m: &Media| match &m.source {
        MediaSource::Base64 { data } => Some(data.clone()),
        MediaSource::Url { url } => url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
            .map(|(_, data)| data.to_owned()),
    };
    let url_of = |m: &Media| match &m.source {
        MediaSource::Url { url } => url.clone(),
        MediaSource::Base64 { .. } => String::new(),
    };
    match content {
        Content::Text { text, .. } => json!({"type": "text", "text": text}),
        Content::Image(m) | Content::Audio(m) => {
            let kind = if matches!(content, Content::Image(_)) {
                "image"
            } else {
                "audio"
            };
            match base64_of(m) {
                Some(data) => json!({"type": kind, "data": data, "mimeType": m.media_type}),
                None => {
                    json!({"type": "resource_link", "uri": url_of(m), "name": kind, "mimeType": m.media_type})
                }
            }
        }
        Content::Video(m) | Content::Document(m) => {
            let uri = m.filename.clone().unwrap_or_else(|| url_of(m));
            let uri = if uri.is_empty() {
                "file:///document".to_owned()
            } else {
                uri
            };
            // A textual document travels as a text resource, which every client can show.
            let text = base64_of(m)
                .filter(|_| is_textual(&m.media_type))
                .and_then(|blob| STANDARD.decode(blob).ok())
                .and_then(|bytes| String::from_utf8(bytes).ok());
            if let Some(text) = text {
                return json!({"type": "resource", "resource": {
                    "uri": uri, "mimeType": m.media_type, "text": text}});
            }
            match base64_of(m) {
                Some(blob) => json!({"type": "resource", "resource": {
                    "uri": uri, "mimeType": m.media_type, "blob": blob}}),
                None => {
                    json!({"type": "resource_link", "uri": uri, "name": m.filename.clone().unwrap_or_else(|| "document".into()), "mimeType": m.media_type})
                }
            }
        }
        // Reasoning, tool use, data (and any kind added later): MCP has no block for them, so
        // they travel as their JSON.
        _ => {
            let mut obj = Map::new();
            obj.insert("type".into(), "text".into());
            obj.insert(
                "text".into(),
                serde_json::to_string(content).unwrap_or_default().into(),
            );
            Value::Object(obj)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_content_type_maps() {
        let result = json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "aW1n", "mimeType": "image/png"},
            {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "test://b.pdf", "mimeType": "application/pdf", "blob": "cGRm"}},
            {"type": "resource_link", "uri": "test://c", "name": "c", "description": "The C file"}
        ]});
        let ToolOutput::Content(items) = output_from_result(&result).unwrap() else {
            panic!("a content list");
        };
        assert_eq!(items[0], Content::text("hi"));
        assert_eq!(items[1], Content::image_base64("aW1n", "image/png"));
        assert!(matches!(&items[2], Content::Audio(m) if m.media_type == "audio/wav"));
        assert_eq!(items[3], Content::text("inside"));
        assert!(
            matches!(&items[4], Content::Document(m) if m.filename.as_deref() == Some("test://b.pdf"))
        );
        assert_eq!(items[5], Content::text("The C file (test://c)"));
    }

    #[test]
    fn is_error_is_a_recoverable_error_with_the_text() {
        let result = json!({"isError": true, "content": [
            {"type": "text", "text": "no such file"}, {"type": "image", "data": "x", "mimeType": "image/png"}]});
        let err = output_from_result(&result).unwrap_err();
        assert_eq!(
            err.message(),
            "no such file\n\n(base64 encoded image omitted)"
        );
    }

    #[test]
    fn one_text_block_is_text_and_structured_only_is_json() {
        let one = json!({"content": [{"type": "text", "text": "7"}]});
        assert_eq!(
            output_from_result(&one).unwrap(),
            ToolOutput::Text("7".into())
        );
        let structured = json!({"content": [], "structuredContent": {"sum": 7}});
        assert_eq!(
            output_from_result(&structured).unwrap(),
            ToolOutput::Text(r#"{"sum":7}"#.into())
        );
    }

    #[test]
    fn a_textual_document_is_a_text_resource_and_a_binary_one_a_blob() {
        let doc = |mime: &str, bytes: &[u8]| {
            Content::Document(Media {
                source: MediaSource::Base64 {
                    data: base64_encode(bytes),
                },
                media_type: mime.to_owned(),
                filename: Some("test://r".to_owned()),
                internal: None,
            })
        };
        let text = content_to_mcp(&doc("text/plain; charset=utf-8", b"hello"));
        assert_eq!(text["resource"]["text"], "hello");
        assert_eq!(text["resource"]["uri"], "test://r");
        let json_doc = content_to_mcp(&doc("application/json", br#"{"a":1}"#));
        assert_eq!(json_doc["resource"]["text"], r#"{"a":1}"#);
        // Not UTF-8, or not a textual type: a blob, as before.
        let bad = content_to_mcp(&doc("text/plain", &[0xff, 0xfe]));
        assert!(bad["resource"].get("blob").is_some());
        let pdf = content_to_mcp(&doc("application/pdf", b"%PDF"));
        assert_eq!(pdf["resource"]["blob"], base64_encode(b"%PDF"));
    }

    #[test]
    fn content_round_trips_through_mcp_blocks() {
        for c in [
            Content::text("hi"),
            Content::image_base64("aW1n", "image/png"),
        ] {
            assert_eq!(content_from_mcp(&content_to_mcp(&c)), c);
        }
    }
}
