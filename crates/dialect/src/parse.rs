//! Parsing a provider's raw tool call arguments, with the reference's recovery rules.

use actuator_model::{ToolArguments, ToolCall};
use actuator_tool_core::{MAX_ARGUMENT_DEPTH, ToolInfo};
use serde_json::{Map, Value};

const _: () = assert!(MAX_ARGUMENT_DEPTH == 100, "DEPTH_DETAILS names the limit");

/// The most raw argument bytes shown in a parse error before they are middle-truncated.
pub const MAX_SHOWN_ARGUMENT_BYTES: usize = 16 * 1024;

/// Parses a provider's raw argument text into a [`ToolCall`], never failing and never
/// panicking:
///
/// 1. text starting with `{` is parsed as JSON; a complete object followed only by stray `"`
///    and whitespace is recovered; nesting deeper than 100 and any other failure set
///    `parse_error` (`Error parsing the following tool call arguments:…`), with the raw text
///    middle-truncated to 16 KiB;
/// 2. any other non-empty text is assigned to the tool's first parameter (a JSON scalar or
///    array where it parses as one, else the raw string), when the tool is known and has one;
/// 3. anything else gives no arguments.
///
/// ```
/// use actuator_dialect::parse_tool_call;
/// let call = parse_tool_call("c1", "add", Some(r#"{"x": 1, "y": 2}""#), &[]);
/// assert_eq!(call.arguments.get("y"), Some(serde_json::json!(2)));
/// assert!(call.parse_error.is_none());
/// let bad = parse_tool_call("c2", "add", Some(r#"{"x": 1,"#), &[]);
/// assert!(bad.parse_error.unwrap().starts_with("Error parsing the following tool call arguments:"));
/// ```
pub fn parse_tool_call(
    id: &str,
    function: &str,
    arguments: Option<&str>,
    tools: &[ToolInfo],
) -> ToolCall {
    let mut call = ToolCall::new(id, function, Value::Null);
    let raw = arguments.unwrap_or_default();
    let text = raw.trim();
    if text.starts_with('{') {
        match parse_object(text) {
            Ok(map) => call.arguments = ToolArguments::from_parsed(map),
            Err(details) => {
                call.parse_error = Some(format!(
                    "Error parsing the following tool call arguments:\n\n{}\n\nError details: {details}",
                    shown_arguments(raw)
                ));
            }
        }
        return call;
    }
    if text.is_empty() {
        return call;
    }
    let first_param = tools
        .iter()
        .find(|t| t.name == function)
        .and_then(|t| t.parameters.properties.iter().next());
    if let Some((param, schema)) = first_param {
        // A boolean, number or null parameter reads the text as the reference's YAML would
        // (`True`, `yes`, `~`, `0x1f` …); anything else is read as JSON, else kept as text.
        if takes_scalar(schema) {
            let value =
                crate::yaml_scalar::resolve(text).unwrap_or_else(|| Value::String(text.to_owned()));
            call.arguments = one_argument(param, value);
            return call;
        }
        let parsed = serde_json::from_str::<Value>(text);
        let too_deep = match &parsed {
            Err(e) => e.to_string().contains("recursion limit exceeded"),
            // Inside the arguments object the value is one level deeper.
            Ok(v) => !depth_ok(&Value::Array(vec![v.clone()])),
        };
        if too_deep {
            call.parse_error = Some(format!(
                "Error parsing the following tool call arguments:\n\n{}\n\nError details: {DEPTH_DETAILS}",
                shown_arguments(raw)
            ));
            return call;
        }
        let value = parsed.unwrap_or_else(|_| Value::String(text.to_owned()));
        call.arguments = one_argument(param, value);
    }
    call
}

fn one_argument(param: &str, value: Value) -> ToolArguments {
    let mut map = Map::with_capacity(1);
    map.insert(param.to_owned(), value);
    ToolArguments::from_parsed(map)
}

/// Whether a parameter's schema is a boolean, number, integer or null type (alone, in a type
/// list, or in every branch of an `anyOf`).
fn takes_scalar(schema: &Value) -> bool {
    let scalar = |t: &str| matches!(t, "boolean" | "number" | "integer" | "null");
    match schema.get("type") {
        Some(Value::String(t)) => scalar(t),
        Some(Value::Array(types)) => {
            !types.is_empty() && types.iter().all(|t| t.as_str().is_some_and(scalar))
        }
        _ => match schema.get("anyOf") {
            Some(Value::Array(branches)) => {
                !branches.is_empty() && branches.iter().all(takes_scalar)
            }
            _ => false,
        },
    }
}

fn depth_ok(value: &Value) -> bool {
    actuator_tool_core::check_nesting_depth(value).is_ok()
}

const DEPTH_DETAILS: &str = "arguments exceed the maximum supported nesting depth of 100";

/// Parses a JSON object, recovering one followed only by stray `"` and whitespace.
fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    let direct = serde_json::from_str::<Value>(text);
    let value = match direct {
        Ok(v) => v,
        Err(err) => {
            if err.to_string().contains("recursion limit exceeded") {
                return Err(DEPTH_DETAILS.to_owned());
            }
            let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            match stream.next() {
                Some(Ok(v @ Value::Object(_))) => {
                    let rest = &text[stream.byte_offset()..];
                    if rest.chars().all(|c| c == '"' || c.is_whitespace()) {
                        tracing::info!("recovered tool call arguments followed by stray quotes");
                        v
                    } else {
                        return Err(err.to_string());
                    }
                }
                _ => return Err(err.to_string()),
            }
        }
    };
    if !depth_ok(&value) {
        return Err(DEPTH_DETAILS.to_owned());
    }
    match value {
        Value::Object(map) => Ok(map),
        other => Err(format!("expected a JSON object, found {other}")),
    }
}

/// The raw arguments as shown in a parse error: middle-truncated beyond 16 KiB.
fn shown_arguments(raw: &str) -> String {
    if raw.len() <= MAX_SHOWN_ARGUMENT_BYTES {
        return raw.to_owned();
    }
    let mut head_end = MAX_SHOWN_ARGUMENT_BYTES / 2;
    while !raw.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = raw.len() - (MAX_SHOWN_ARGUMENT_BYTES - MAX_SHOWN_ARGUMENT_BYTES / 2);
    while !raw.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}{}\n\n(arguments middle-truncated from {} bytes)",
        &raw[..head_end],
        &raw[tail_start..],
        raw.len()
    )
}
