//! Checks `dialect::openai_strict` renderings against OpenAI's own API description: the inner
//! `function` object against `FunctionObject`, the whole tool against `ChatCompletionTool`.
//!
//! The spec is read from `shared/specs/openai-openapi.json` next to the repository (see
//! `shared/specs/SOURCES.md`), or from the file named by `ACTUATOR_OPENAI_SPEC`. A missing spec
//! fails the tests: it is the oracle, not an optional extra.

#![allow(missing_docs)]

#[path = "dialect_samples.rs"]
mod samples;

use std::sync::OnceLock;

use actuator_tool_core::dialect;
use jsonschema::Validator;
use proptest::prelude::*;
use samples::{arb_json, sample, samples, tool};
use serde_json::{Map, Value, json};

const DEFAULT_SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/specs/openai-openapi.json"
);

struct Spec {
    function_object: Validator,
    /// `None` when the spec has no `ChatCompletionTool`.
    chat_completion_tool: Option<Validator>,
    /// The spec's schemas, for checking field names.
    schemas: Map<String, Value>,
}

fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(load_spec)
}

/// Reads and compiles the spec; a missing or broken spec is a test failure with directions.
#[allow(clippy::panic)]
fn load_spec() -> Spec {
    let path = std::env::var("ACTUATOR_OPENAI_SPEC").unwrap_or_else(|_| DEFAULT_SPEC.to_owned());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read the OpenAI OpenAPI spec at {path}: {err}. These tests need it as their \
             oracle: put openai-openapi.json there (see shared/specs/SOURCES.md) or point \
             ACTUATOR_OPENAI_SPEC at a copy."
        )
    });
    let spec: Value = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("the OpenAI spec at {path} is not JSON: {err}"));
    let mut components = spec
        .get("components")
        .cloned()
        .unwrap_or_else(|| panic!("the OpenAI spec at {path} has no components"));
    nullable_to_null_type(&mut components);
    let schemas = components
        .get("schemas")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(|| panic!("the OpenAI spec at {path} has no components.schemas"));
    let compile = |name: &str| {
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": format!("#/components/schemas/{name}"),
            "components": components,
        });
        jsonschema::draft202012::new(&root)
            .unwrap_or_else(|err| panic!("{name} from {path} does not compile: {err}"))
    };
    assert!(
        schemas.contains_key("FunctionObject"),
        "the OpenAI spec at {path} has no FunctionObject schema"
    );
    Spec {
        function_object: compile("FunctionObject"),
        chat_completion_tool: schemas
            .contains_key("ChatCompletionTool")
            .then(|| compile("ChatCompletionTool")),
        schemas,
    }
}

/// OpenAPI 3.0's `"nullable": true`, which JSON Schema 2020-12 ignores, becomes a `"null"`
/// member of `type` (and of `enum`), or an `anyOf` with `{"type": "null"}` when there is no type.
fn nullable_to_null_type(value: &mut Value) {
    match value {
        Value::Object(m) => {
            if m.get("nullable") == Some(&Value::Bool(true)) {
                m.shift_remove("nullable");
                match m.get_mut("type") {
                    Some(Value::String(t)) => {
                        let t = std::mem::take(t);
                        m.insert("type".into(), json!([t, "null"]));
                    }
                    Some(Value::Array(types)) => {
                        if !types.contains(&json!("null")) {
                            types.push(json!("null"));
                        }
                    }
                    _ => {
                        let rest = std::mem::take(m);
                        m.insert("anyOf".into(), json!([rest, {"type": "null"}]));
                    }
                }
                if let Some(Value::Array(values)) = m.get_mut("enum")
                    && !values.contains(&Value::Null)
                {
                    values.push(Value::Null);
                }
            } else if m.get("nullable") == Some(&Value::Bool(false)) {
                m.shift_remove("nullable");
            }
            m.values_mut().for_each(nullable_to_null_type);
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_to_null_type),
        _ => {}
    }
}

fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The property names a spec schema declares.
fn declared(name: &str) -> Vec<String> {
    spec().schemas[name]["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn check(name: &str, info: &actuator_tool_core::ToolInfo) {
    let spec = spec();
    let tool = dialect::openai_strict(info).tool;
    let function = &tool["function"];
    let errs = errors(&spec.function_object, function);
    assert!(
        errs.is_empty(),
        "{name}: FunctionObject rejects {function}: {errs:?}"
    );
    // The spec leaves FunctionObject open; a misspelled field would pass. Check the names.
    let known = declared("FunctionObject");
    for key in function.as_object().map(|f| f.keys()).into_iter().flatten() {
        assert!(
            known.contains(key),
            "{name}: FunctionObject has no field {key}"
        );
    }
    if let Some(chat_tool) = &spec.chat_completion_tool {
        let errs = errors(chat_tool, &tool);
        assert!(
            errs.is_empty(),
            "{name}: ChatCompletionTool rejects {tool}: {errs:?}"
        );
        let known = declared("ChatCompletionTool");
        for key in tool.as_object().map(|t| t.keys()).into_iter().flatten() {
            assert!(
                known.contains(key),
                "{name}: ChatCompletionTool has no field {key}"
            );
        }
    }
}

#[test]
fn every_strict_rendering_is_a_function_object() {
    for (name, info) in samples() {
        check(name, &info);
    }
}

#[test]
fn odd_but_legal_tools_are_function_objects() {
    let long_name = "a".repeat(64);
    let cases = [
        tool(&long_name, json!({}), &[], json!({})),
        tool(
            "x",
            json!({"a": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}),
            &[],
            json!({}),
        ),
        tool(
            "deep",
            json!({"a": {"$ref": "#/$defs/A", "description": "a"}}),
            &["a"],
            json!({"A": {"$ref": "#/$defs/A", "description": "self"}}),
        ),
    ];
    for info in &cases {
        check(&info.name, info);
    }
    let mut empty_description = sample("no_params");
    empty_description.description = String::new();
    check("empty_description", &empty_description);
}

#[test]
fn the_spec_rejects_broken_tools() {
    let spec = spec();
    let tool = dialect::openai_strict(&sample("optional_params")).tool;

    let mut nameless = tool["function"].clone();
    nameless.as_object_mut().map(|f| f.shift_remove("name"));
    assert!(
        !spec.function_object.is_valid(&nameless),
        "a function without a name must be rejected"
    );

    let mut bad_strict = tool["function"].clone();
    bad_strict["strict"] = json!("yes");
    assert!(!spec.function_object.is_valid(&bad_strict));

    let mut bad_parameters = tool["function"].clone();
    bad_parameters["parameters"] = json!("{}");
    assert!(!spec.function_object.is_valid(&bad_parameters));

    if let Some(chat_tool) = &spec.chat_completion_tool {
        let mut wrong_type = tool.clone();
        wrong_type["type"] = json!("custom_function");
        assert!(!chat_tool.is_valid(&wrong_type));
        let mut no_function = tool.clone();
        no_function
            .as_object_mut()
            .map(|t| t.shift_remove("function"));
        assert!(!chat_tool.is_valid(&no_function));
        let mut nameless_tool = tool;
        nameless_tool["function"] = nameless;
        assert!(!chat_tool.is_valid(&nameless_tool));
    }
}

#[test]
fn nullable_becomes_a_null_type() {
    let mut v = json!({
        "a": {"type": "string", "nullable": true, "enum": ["x"]},
        "b": {"$ref": "#/x", "nullable": true},
        "c": {"type": ["integer"], "nullable": true},
        "d": {"type": "string", "nullable": false}
    });
    nullable_to_null_type(&mut v);
    assert_eq!(
        v,
        json!({
            "a": {"type": ["string", "null"], "enum": ["x", null]},
            "b": {"anyOf": [{"$ref": "#/x"}, {"type": "null"}]},
            "c": {"type": ["integer", "null"]},
            "d": {"type": "string"}
        })
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Whatever the schema, the rendering is a well-formed function tool.
    #[test]
    fn random_schemas_render_function_objects(
        props in prop::collection::vec(("[a-c]", arb_json()), 0..4),
        defs in arb_json(),
    ) {
        let info = tool("t", Value::Object(props.into_iter().collect()), &[], json!({"A": defs}));
        let rendered = dialect::openai_strict(&info).tool;
        let spec = spec();
        prop_assert!(spec.function_object.is_valid(&rendered["function"]), "{}", rendered);
        if let Some(chat_tool) = &spec.chat_completion_tool {
            prop_assert!(chat_tool.is_valid(&rendered), "{}", rendered);
        }
    }
}
