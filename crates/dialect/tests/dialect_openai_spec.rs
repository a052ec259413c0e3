//! Checks `dialect::openai_strict` renderings against OpenAI's own API description: the inner
//! `function` object against `FunctionObject`, the whole tool against `ChatCompletionTool`.
//!
//! The spec is read from `specs/openai-openapi.subset.json` of this repository (the schemas the
//! tests use, cut from the full file; see `specs/SOURCES.md`), or from the file named by
//! `ACTUATOR_OPENAI_SPEC` (the full file works too). A missing spec fails the tests: it is the
//! oracle, not an optional extra.

#![allow(missing_docs)]

#[path = "dialect_samples.rs"]
mod samples;

mod openai_spec;

use actuator_dialect as dialect;
use openai_spec::{check, nullable_to_null_type, spec};
use proptest::prelude::*;
use samples::{arb_json, sample, samples, tool};
use serde_json::{Value, json};

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
