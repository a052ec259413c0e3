//! The bottom of the dialect crate, shared by the schema helpers and the walker: `$ref`
//! resolution, the kind of a JSON value, and which keywords never reject a value.

use serde_json::Value;

/// Resolves a local reference (`#`, `#/$defs/Name`, any `#/json/pointer`) against the root
/// schema. Returns the target and its JSON pointer; `None` for remote or dangling references.
pub(crate) fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let fragment = reference.strip_prefix('#')?;
    let pointer = percent_decode(fragment)?;
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        return None;
    }
    root.pointer(&pointer).map(|target| (target, pointer))
}

/// Decodes `%XX` escapes of a URI fragment; `None` when the result is not UTF-8 or an escape is
/// cut short.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A short name for the JSON type of a value, for messages.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Keywords that only annotate a schema; they may sit next to anything without changing which
/// values it accepts.
pub(crate) fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "description" | "title" | "default" | "examples" | "example" | "deprecated" | "$comment"
    )
}

/// Keywords that never reject a value: dropping one loses nothing Actuator's validation would
/// enforce.
pub(crate) fn is_non_assertion(keyword: &str) -> bool {
    is_annotation(keyword)
        || matches!(
            keyword,
            "$schema"
                | "$id"
                | "$anchor"
                | "$dynamicAnchor"
                | "$vocabulary"
                | "readOnly"
                | "writeOnly"
                | "contentEncoding"
                | "contentMediaType"
                | "contentSchema"
        )
}
