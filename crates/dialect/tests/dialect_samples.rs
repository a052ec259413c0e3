//! Sample tools for the dialect tests, shared by `dialect.rs` and `dialect_openai_spec.rs`
//! (included there with `#[path]`). On its own this target has no tests.

#![allow(dead_code, missing_docs)]

use std::collections::BTreeMap;

use actuator_tool_core::{ToolInfo, ToolParams};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde_json::{Value, json};

/// A tool from hand-written pieces: `properties` (an object), `required`, `$defs` (an object).
pub fn tool(name: &str, properties: Value, required: &[&str], defs: Value) -> ToolInfo {
    let mut params = ToolParams::default();
    if let Value::Object(props) = properties {
        params.properties = props;
    }
    params.required = required.iter().map(|s| (*s).to_owned()).collect();
    if let Value::Object(defs) = defs {
        params.defs = defs;
    }
    ToolInfo::new(name, format!("The {name} tool."), params)
}

/// A tool from a Rust type, with the schema settings Actuator uses (2020-12, inline
/// subschemas, recursive types in `$defs`).
pub fn derived<T: JsonSchema>(name: &str) -> ToolInfo {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let value = serde_json::to_value(&schema).expect("a schema serializes");
    let parameters = ToolParams::from_value(&value).expect("an object schema");
    ToolInfo::new(name, format!("The {name} tool."), parameters)
}

/// A tree: recursive through `$defs`.
#[derive(JsonSchema, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
pub struct Node {
    /// The value at this node.
    pub value: i64,
    /// The subtrees.
    pub children: Vec<Node>,
}

/// An enum with data: schemars renders it as a `oneOf`.
#[derive(JsonSchema, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Nothing.
    Empty,
    /// A circle.
    Circle { radius: f64 },
    /// A square.
    Square(u32),
}

/// A unit enum.
#[derive(JsonSchema, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

fn ten() -> u32 {
    10
}

/// The kind of parameters a real tool has.
#[derive(JsonSchema, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
pub struct Realistic {
    /// The file to read.
    pub path: String,
    /// How many lines, at most.
    #[serde(default = "ten")]
    pub limit: u32,
    /// Where to start.
    pub offset: Option<u64>,
    /// The unit of the readings.
    pub unit: Option<Unit>,
    /// What to draw.
    pub shape: Shape,
    /// A point.
    pub point: (f32, f32),
    /// A tree.
    pub tree: Option<Node>,
    /// Labels to attach.
    #[serde(default)]
    pub labels: Vec<String>,
}

/// Labelled: a map parameter, which OpenAI strict mode cannot express.
#[derive(JsonSchema, serde::Deserialize, serde::Serialize, Debug, PartialEq)]
pub struct WithMap {
    /// The command to run.
    pub command: String,
    /// Environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// Every sample, by name.
pub fn samples() -> Vec<(&'static str, ToolInfo)> {
    vec![
        ("no_params", tool("ping", json!({}), &[], json!({}))),
        (
            "optional_params",
            tool(
                "read_file",
                json!({
                    "path": {"type": "string", "description": "The file to read."},
                    "limit": {"type": "integer", "format": "uint32", "minimum": 0, "default": 10},
                    "encoding": {"type": ["string", "null"], "description": "The encoding"},
                    "mode": {"type": "string", "enum": ["text", "binary"]},
                    "unit": {"type": ["string", "null"], "enum": ["lines", "bytes", null]},
                    "since": {"type": "string", "format": "date-time", "description": "Only newer."}
                }),
                &["path"],
                json!({}),
            ),
        ),
        (
            "nested_objects",
            tool(
                "create_user",
                json!({
                    "user": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "minLength": 1, "maxLength": 80},
                            "address": {
                                "type": "object",
                                "properties": {
                                    "street": {"type": "string"},
                                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"}
                                },
                                "required": ["street"]
                            }
                        },
                        "required": ["name"]
                    },
                    "pets": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"kind": {"type": "string"}, "age": {"type": "integer"}},
                            "required": ["kind"]
                        },
                        "minItems": 0,
                        "uniqueItems": true
                    },
                    "contact": {
                        "anyOf": [
                            {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]},
                            {"type": "object", "properties": {"phone": {"type": "string"}}, "required": ["phone"]}
                        ]
                    }
                }),
                &["user", "contact"],
                json!({}),
            ),
        ),
        (
            "one_of",
            tool(
                "draw",
                json!({
                    "shape": {
                        "description": "What to draw.",
                        "oneOf": [
                            {"type": "string", "enum": ["empty"]},
                            {"type": "object", "properties": {"circle": {"type": "number", "exclusiveMinimum": 0}}, "required": ["circle"], "additionalProperties": false},
                            {"type": "object", "properties": {"square": {"type": "integer", "exclusiveMinimum": 0}}, "required": ["square"], "additionalProperties": false}
                        ]
                    },
                    "color": {
                        "oneOf": [
                            {"type": "string", "const": "red", "description": "Red."},
                            {"type": "string", "const": "green", "description": "Green."}
                        ]
                    }
                }),
                &["shape"],
                json!({}),
            ),
        ),
        (
            "formats",
            tool(
                "schedule",
                json!({
                    "when": {"type": "string", "format": "date-time"},
                    "day": {"type": "string", "format": "date"},
                    "id": {"type": "string", "format": "uuid"},
                    "site": {"type": "string", "format": "uri"},
                    "count": {"type": "integer", "format": "int64"},
                    "small": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                    "ratio": {"type": "number", "format": "double", "multipleOf": 0.5, "exclusiveMaximum": 1}
                }),
                &["when", "day", "id", "site", "count", "small", "ratio"],
                json!({}),
            ),
        ),
        (
            "recursion",
            tool(
                "sum_tree",
                json!({
                    "tree": {"$ref": "#/$defs/Node", "description": "The tree to sum."},
                    "extra": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
                }),
                &["tree"],
                json!({
                    "Node": {
                        "type": "object",
                        "properties": {
                            "value": {"type": "integer"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                        },
                        "required": ["value", "children"]
                    }
                }),
            ),
        ),
        (
            "enums",
            tool(
                "configure",
                json!({
                    "mode": {"const": "fast"},
                    "version": {"type": "integer", "const": 2},
                    "level": {"type": "integer", "enum": [1, 2, 3], "description": "How loud"},
                    "flag": {"enum": [true, "auto"]},
                    "tone": {"type": ["string", "null"], "enum": ["low", "high", null]}
                }),
                &["mode", "version", "level", "flag", "tone"],
                json!({}),
            ),
        ),
        (
            "map",
            tool(
                "run",
                json!({
                    "command": {"type": "string"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Environment variables."}
                }),
                &["command"],
                json!({}),
            ),
        ),
        (
            "tuple",
            tool(
                "move_to",
                json!({
                    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "minItems": 2, "maxItems": 2},
                    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2, "maxItems": 2}
                }),
                &["point", "pair"],
                json!({}),
            ),
        ),
        (
            "any_value",
            tool(
                "store",
                json!({"key": {"type": "string"}, "value": true}),
                &["key", "value"],
                json!({}),
            ),
        ),
        (
            "unsupported_keywords",
            tool(
                "filter",
                json!({
                    "query": {
                        "type": "string",
                        "title": "Query",
                        "examples": ["name:bob", "age:>3"],
                        "$comment": "internal",
                        "deprecated": true
                    },
                    "rule": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a"],
                        "additionalProperties": false,
                        "dependentRequired": {"b": ["a"]},
                        "not": {"required": ["c"]}
                    },
                    "both": {"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 9}]},
                    "single": {"allOf": [{"type": "string", "maxLength": 3}], "description": "One allOf."},
                    "$schema_inside": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "boolean"}
                }),
                &["query", "rule", "both", "single", "$schema_inside"],
                json!({}),
            ),
        ),
        (
            "names",
            tool(
                "9lives",
                json!({"dry-run": {"type": "boolean"}, "ok_name": {"type": "string"}}),
                &["dry-run", "ok_name"],
                json!({}),
            ),
        ),
        (
            "malformed",
            tool(
                "broken",
                json!({
                    "a": 5,
                    "b": {"type": 7, "properties": [], "required": "x", "enum": "y"},
                    "c": {"$ref": "#/$defs/Missing"},
                    "d": {"$ref": "https://example.com/schema.json"},
                    "e": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x", "y"]},
                    "f": {"anyOf": {"type": "string"}, "items": 3, "format": 1, "description": 2}
                }),
                &["a", "b", "c", "d", "e", "f"],
                json!({}),
            ),
        ),
        ("realistic", derived::<Realistic>("read_tree")),
        ("with_map", derived::<WithMap>("run_command")),
    ]
}

/// A sample by name.
pub fn sample(name: &str) -> ToolInfo {
    samples()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, info)| info)
        .expect("a sample with that name")
}

/// Arbitrary JSON biased towards schema keywords: malformed schemas, mostly.
pub fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        prop_oneof![
            Just("type"),
            Just("object"),
            Just("string"),
            Just("null"),
            Just("integer"),
            Just("#/$defs/A"),
            Just("#"),
            Just("date-time"),
            Just("x"),
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let key = prop_oneof![
            Just("type"),
            Just("properties"),
            Just("required"),
            Just("items"),
            Just("prefixItems"),
            Just("anyOf"),
            Just("oneOf"),
            Just("allOf"),
            Just("$ref"),
            Just("enum"),
            Just("const"),
            Just("format"),
            Just("additionalProperties"),
            Just("$defs"),
            Just("A"),
            Just("description"),
            Just("exclusiveMinimum"),
            Just("nullable"),
            Just("default"),
            Just("not"),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6).prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}
