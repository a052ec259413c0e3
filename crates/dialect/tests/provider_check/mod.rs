//! Each provider's documented rules for a tool object, encoded once as a checker: what its
//! API rejects with a 400 for the whole request. `provider_corpus.rs` runs every corpus tool's
//! renderings through them.
//!
//! Sources: OpenAI's Structured Outputs guide (supported keywords, every object closed with
//! every property required, the root an object, nesting and size limits), its API reference
//! (function names) and the errors its API returns (no `anyOf`, `oneOf`, `allOf`, `enum` or
//! `not` at the top level, "array schema missing items"); Anthropic's tool-use docs and the
//! errors its API returns (`input_schema` an object schema valid under draft 2020-12 without
//! `anyOf`, `oneOf` or `allOf` at the top level, property keys `^[a-zA-Z0-9_.-]{1,64}$`);
//! Gemini's `FunctionDeclaration` and `Schema` reference (names, the OpenAPI 3.0 subset) and
//! the errors its API returns (`properties should be non-empty for OBJECT type`,
//! `items: missing field`, `enum[N]: cannot be empty`, enums on strings only).
#![allow(dead_code, clippy::unwrap_used)]

use serde_json::{Map, Value};

/// A rule a rendering breaks, with the JSON pointer into the rendered schema.
pub type Violations = Vec<String>;

/// What `visit` calls on each schema object: the object, its pointer, its object level.
type Visitor<'a> = dyn FnMut(&Map<String, Value>, &str, usize) + 'a;

/// Visits every schema object in `schema`, with its pointer and how many objects enclose it
/// through `properties` (the root is level 1).
fn visit(schema: &Value, path: &str, objects: usize, f: &mut Visitor<'_>) {
    let Value::Object(m) = schema else { return };
    f(m, path, objects);
    for (key, val) in m {
        let here = format!("{path}/{key}");
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(named) = val {
                    let level = if key == "properties" { objects + 1 } else { 1 };
                    for (name, sub) in named {
                        visit(sub, &format!("{here}/{name}"), level, f);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else" => match val {
                Value::Array(list) => {
                    for (i, sub) in list.iter().enumerate() {
                        visit(sub, &format!("{here}/{i}"), objects, f);
                    }
                }
                sub => visit(sub, &here, objects, f),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(list) = val {
                    for (i, sub) in list.iter().enumerate() {
                        visit(sub, &format!("{here}/{i}"), objects, f);
                    }
                }
            }
            _ => {}
        }
    }
}

fn type_names(m: &Map<String, Value>) -> Vec<&str> {
    match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn fits(t: &str, v: &Value) -> bool {
    match v {
        Value::Null => t == "null",
        Value::Bool(_) => t == "boolean",
        Value::Number(n) => t == "number" || (t == "integer" && (n.is_i64() || n.is_u64())),
        Value::String(_) => t == "string",
        Value::Array(_) => t == "array",
        Value::Object(_) => t == "object",
    }
}

/// `^[a-zA-Z0-9_-]{1,64}$`: OpenAI's and Anthropic's function names.
pub fn plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

// ---- OpenAI -------------------------------------------------------------------------------

/// The keywords strict mode supports (Structured Outputs, "Supported schemas").
const OPENAI_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
];
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// An OpenAI chat-completions function tool. With `"strict": true` its parameters must be
/// within strict mode's subset; without, they only have to be an object schema.
pub fn openai(tool: &Value) -> Violations {
    let mut v = Vec::new();
    let function = &tool["function"];
    let name = function["name"].as_str().unwrap_or_default();
    if !plain_name(name) {
        v.push(format!("name '{name}' is not ^[a-zA-Z0-9_-]{{1,64}}$"));
    }
    let params = &function["parameters"];
    if let Err(e) = jsonschema::draft202012::meta::validate(params) {
        v.push(format!(
            "{}: not a valid JSON Schema: {e}",
            e.instance_path()
        ));
    }
    for key in ["anyOf", "oneOf", "allOf", "enum", "not"] {
        if params.get(key).is_some() {
            v.push(format!("/: {key} at the top level"));
        }
    }
    if function["strict"] != Value::Bool(true) {
        if params.get("type") != Some(&Value::from("object")) {
            v.push("/: parameters are not an object schema".into());
        }
        return v;
    }
    if params.get("type") != Some(&Value::from("object")) || params.get("anyOf").is_some() {
        v.push("/: the root must be an object, not anyOf".into());
    }
    let (mut properties, mut enum_values, mut text) = (0usize, 0usize, 0usize);
    visit(params, "", 1, &mut |m, path, objects| {
        for key in m.keys() {
            if !OPENAI_STRICT_KEYWORDS.contains(&key.as_str()) {
                v.push(format!(
                    "{path}: keyword '{key}' is not supported in strict mode"
                ));
            }
        }
        if let Some(Value::String(f)) = m.get("format")
            && !OPENAI_FORMATS.contains(&f.as_str())
        {
            v.push(format!(
                "{path}: format '{f}' is not supported in strict mode"
            ));
        }
        if m.contains_key("$ref") && m.len() > 1 {
            v.push(format!("{path}: $ref with sibling keywords"));
        }
        let typed = ["type", "enum", "const", "anyOf", "$ref"]
            .iter()
            .any(|k| m.contains_key(*k));
        if !typed {
            v.push(format!("{path}: a schema without a type"));
        }
        let types = type_names(m);
        if let Some(Value::Array(values)) = m.get("enum") {
            enum_values += values.len();
            text += values
                .iter()
                .filter_map(Value::as_str)
                .map(str::len)
                .sum::<usize>();
            if values.len() > 250 {
                let len: usize = values.iter().filter_map(Value::as_str).map(str::len).sum();
                if len > 15_000 {
                    let n = values.len();
                    v.push(format!(
                        "{path}: {n} enum values total {len} characters (past 250 values, at \
                         most 15,000)"
                    ));
                }
            }
            if !types.is_empty() {
                for value in values {
                    if !types.iter().any(|t| fits(t, value)) {
                        v.push(format!(
                            "{path}: enum value {value} is not of type {types:?}"
                        ));
                    }
                }
            }
        }
        if types.contains(&"array") && !m.contains_key("items") {
            v.push(format!("{path}: array schema missing items"));
        }
        let is_object = types.contains(&"object") || m.contains_key("properties");
        if is_object {
            if objects > 10 {
                v.push(format!(
                    "{path}: objects nested {objects} levels deep (at most 10)"
                ));
            }
            if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                v.push(format!(
                    "{path}: an object without additionalProperties: false"
                ));
            }
            let props = m.get("properties").and_then(Value::as_object);
            match props {
                None => v.push(format!("{path}: an object without properties")),
                Some(props) => {
                    properties += props.len();
                    text += props.keys().map(String::len).sum::<usize>();
                    let required: Vec<&str> = m
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    for name in props.keys() {
                        if !required.contains(&name.as_str()) {
                            v.push(format!("{path}: property '{name}' is not required"));
                        }
                    }
                }
            }
        }
    });
    if properties > 5000 {
        v.push(format!("/: {properties} properties (at most 5,000)"));
    }
    if enum_values > 1000 {
        v.push(format!("/: {enum_values} enum values (at most 1,000)"));
    }
    if text > 120_000 {
        v.push(format!(
            "/: {text} characters of names and enum values (at most 120,000)"
        ));
    }
    v
}

// ---- Anthropic ----------------------------------------------------------------------------

/// `^[a-zA-Z0-9_.-]{1,64}$`: Anthropic's property keys.
pub fn anthropic_key(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// An Anthropic Messages API tool: an object `input_schema` valid under JSON Schema 2020-12,
/// property keys `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn anthropic(tool: &Value) -> Violations {
    let mut v = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !plain_name(name) {
        v.push(format!("name '{name}' is not ^[a-zA-Z0-9_-]{{1,64}}$"));
    }
    let schema = &tool["input_schema"];
    if schema.get("type") != Some(&Value::from("object")) {
        v.push("/: input_schema.type must be \"object\"".into());
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if schema.get(key).is_some() {
            v.push(format!("/: {key} at the top level"));
        }
    }
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        v.push(format!(
            "{}: not a valid 2020-12 schema: {e}",
            e.instance_path()
        ));
    }
    if let Some(Value::Object(props)) = schema.get("properties") {
        for key in props.keys() {
            if !anthropic_key(key) {
                v.push(format!(
                    "/properties: key '{key}' is not ^[a-zA-Z0-9_.-]{{1,64}}$"
                ));
            }
        }
    }
    visit(schema, "", 1, &mut |m, path, _| {
        if m.contains_key("$schema") {
            v.push(format!("{path}: $schema"));
        }
    });
    v
}

// ---- Gemini -------------------------------------------------------------------------------

/// The fields of Gemini's `Schema`.
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const GEMINI_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// A Gemini function name: a letter or an underscore, then letters, digits, `_`, `.`, `-`
/// (the API also allows `:`; Vertex AI documents the narrower set), at most 64.
pub fn gemini_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// A Gemini `FunctionDeclaration`.
pub fn gemini(tool: &Value) -> Violations {
    let mut v = Vec::new();
    let name = tool["name"].as_str().unwrap_or_default();
    if !gemini_name(name) {
        v.push(format!("name '{name}' is not a Gemini function name"));
    }
    let Some(params) = tool.get("parameters") else {
        return v;
    };
    if params.get("type") != Some(&Value::from("object")) {
        v.push("/: parameters must be an object schema".into());
    }
    visit(params, "", 1, &mut |m, path, _| {
        for key in m.keys() {
            if !GEMINI_KEYWORDS.contains(&key.as_str()) {
                v.push(format!("{path}: '{key}' is not a field of Gemini's Schema"));
            }
        }
        let ty = match m.get("type") {
            None => None,
            Some(Value::String(t)) if GEMINI_TYPES.contains(&t.as_str()) => Some(t.as_str()),
            Some(other) => {
                v.push(format!("{path}: type {other} is not one Gemini type"));
                None
            }
        };
        if let Some(e) = m.get("enum") {
            let strings = e
                .as_array()
                .is_some_and(|vs| vs.iter().all(Value::is_string));
            if ty != Some("string") || !strings {
                v.push(format!(
                    "{path}: enum on {ty:?} or with values that are not strings"
                ));
            }
            match e.as_array() {
                Some(vs) if vs.is_empty() => v.push(format!("{path}: an empty enum")),
                Some(vs) if vs.contains(&Value::from("")) => {
                    v.push(format!("{path}: an empty string among the enum values"));
                }
                _ => {}
            }
        }
        let props = m.get("properties");
        if ty == Some("object") && !matches!(props, Some(Value::Object(p)) if !p.is_empty()) {
            v.push(format!("{path}: an object without properties"));
        }
        if props.is_some() && ty != Some("object") {
            v.push(format!("{path}: properties on {ty:?}"));
        }
        if let Some(Value::Array(required)) = m.get("required") {
            let props = props.and_then(Value::as_object);
            for r in required {
                if !props.is_some_and(|p| r.as_str().is_some_and(|r| p.contains_key(r))) {
                    v.push(format!("{path}: required {r} is not a property"));
                }
            }
        }
        if ty == Some("array") && !m.contains_key("items") {
            v.push(format!("{path}: an array without items"));
        }
        if let Some(Value::String(f)) = m.get("format") {
            let ok = match ty {
                Some("string") => matches!(f.as_str(), "enum" | "date-time"),
                Some("integer") => matches!(f.as_str(), "int32" | "int64"),
                Some("number") => matches!(f.as_str(), "float" | "double"),
                _ => false,
            };
            if !ok {
                v.push(format!("{path}: format '{f}' on {ty:?}"));
            }
        }
        for bound in ["minimum", "maximum"] {
            if m.get(bound).is_some_and(|b| !b.is_number()) {
                v.push(format!("{path}: {bound} is not a number"));
            }
        }
    });
    v
}

// ---- MCP ----------------------------------------------------------------------------------

/// An MCP `tools/list` entry: `inputSchema` an object schema.
pub fn mcp(tool: &Value) -> Violations {
    let mut v = Vec::new();
    if tool["inputSchema"].get("type") != Some(&Value::from("object")) {
        v.push("/: inputSchema.type must be \"object\"".into());
    }
    v
}
