//! The OpenAI OpenAPI spec as a test oracle, shared by the dialect tests here and the catalogue
//! tests of the `actuator-tests` package (included there with `#[path]`).
//!
//! The spec is read from `specs/openai-openapi.subset.json` of this repository (the schemas the
//! tests use, cut from the full file; see `specs/SOURCES.md`), or from the file named by
//! `ACTUATOR_OPENAI_SPEC` (the full file works too). A missing spec fails the tests: it is the
//! oracle, not an optional extra.
#![allow(dead_code, clippy::panic, clippy::unwrap_used)]

use std::sync::OnceLock;

use actuator_dialect as dialect;
use jsonschema::Validator;
use serde_json::{Map, Value, json};

/// `specs/openai-openapi.subset.json` of this repository, unless `ACTUATOR_OPENAI_SPEC` names
/// the file. The repository root is two levels above a crate (`crates/<name>/`) and one above
/// the `actuator-tests` package (`tests/`), which includes this file too.
fn spec_path() -> String {
    if let Ok(path) = std::env::var("ACTUATOR_OPENAI_SPEC") {
        return path;
    }
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = ["../specs", "../../specs"]
        .map(|dir| manifest.join(dir).join("openai-openapi.subset.json"));
    candidates
        .iter()
        .find(|p| p.exists())
        .unwrap_or(&candidates[1])
        .display()
        .to_string()
}

/// The schemas the tests check against.
pub struct Spec {
    pub function_object: Validator,
    /// `None` when the spec has no `ChatCompletionTool`.
    pub chat_completion_tool: Option<Validator>,
    /// The spec's schemas, for checking field names.
    pub schemas: Map<String, Value>,
}

/// The compiled spec, loaded once.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(load_spec)
}

/// Reads and compiles the spec; a missing or broken spec is a test failure with directions.
#[allow(clippy::panic)]
fn load_spec() -> Spec {
    let path = spec_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read the OpenAI OpenAPI spec at {path}: {err}. These tests need it as their \
             oracle: it is part of the repository (see specs/SOURCES.md to remake it) or point \
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
pub fn nullable_to_null_type(value: &mut Value) {
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

/// The validation errors of `instance`, with their paths.
pub fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
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

/// Asserts that the OpenAI strict rendering of `info` is a valid `FunctionObject` (and
/// `ChatCompletionTool`), with only the field names the spec declares.
pub fn check(name: &str, info: &actuator_tool_core::ToolInfo) {
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
