//! Argument validation: exact messages, plurality, paths, closest causes, D14, D15, depth.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_tool_core::{ArgumentValidator, ToolErrorKind, ToolParams};
use serde_json::{Value, json};

fn validator(schema: Value) -> ArgumentValidator {
    let params = ToolParams::from_value(&schema).expect("valid params");
    ArgumentValidator::new("t", &params).expect("schema compiles")
}

fn xy() -> ArgumentValidator {
    validator(json!({
        "type": "object",
        "properties": {
            "x": {"type": "integer", "description": "x"},
            "y": {"type": "integer", "description": "y"}
        },
        "required": ["x", "y"]
    }))
}

fn message(v: &ArgumentValidator, args: Value) -> String {
    let err = v.validate(&args).expect_err("arguments should be rejected");
    assert_eq!(err.kind(), ToolErrorKind::Parsing);
    err.message().to_owned()
}

#[test]
fn valid_arguments_pass() {
    assert!(xy().validate(&json!({"x": 1, "y": 2})).is_ok());
}

#[test]
fn one_error_is_singular_and_names_the_argument() {
    assert_eq!(
        message(&xy(), json!({"x": "1", "y": 2})),
        "Found 1 validation error parsing tool input arguments:\n- x: '1' is not of type 'integer'"
    );
}

#[test]
fn several_errors_are_plural_and_all_reported() {
    assert_eq!(
        message(&xy(), json!({"x": "1", "z": 3})),
        "Found 3 validation errors parsing tool input arguments:\n\
         - x: '1' is not of type 'integer'\n\
         - y: 'y' is a required property\n\
         - z: Additional properties are not allowed ('z' was unexpected)"
    );
}

#[test]
fn reference_wordings() {
    let v = xy();
    assert!(
        message(&v, json!({"x": null, "y": 1})).ends_with("- x: None is not of type 'integer'")
    );
    assert!(message(&v, json!({"x": 1.5, "y": 1})).ends_with("- x: 1.5 is not of type 'integer'"));
    let mode = validator(json!({
        "type": "object",
        "properties": {"mode": {"type": "string", "enum": ["fast", "exact"], "description": "m"}},
        "required": ["mode"]
    }));
    assert!(
        message(&mode, json!({"mode": "slow"}))
            .ends_with("- mode: 'slow' is not one of ['fast', 'exact']")
    );
    assert!(
        message(&xy(), json!({"x": 1, "y": 1, "a": 1, "b": 2})).ends_with(
            "- (arguments): Additional properties are not allowed ('a', 'b' were unexpected)"
        )
    );
}

#[test]
fn nested_paths_are_named() {
    let v = validator(json!({
        "type": "object",
        "properties": {
            "filters": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["tags"],
                "description": "f"
            }
        },
        "required": ["filters"]
    }));
    assert_eq!(
        message(&v, json!({"filters": {"tags": ["a", 2]}})),
        "Found 1 validation error parsing tool input arguments:\n- filters.tags[1]: 2 is not of type 'string'"
    );
    assert!(
        message(&v, json!({"filters": {}}))
            .ends_with("- filters.tags: 'tags' is a required property")
    );
}

#[test]
fn any_of_names_its_closest_cause() {
    let v = validator(json!({
        "type": "object",
        "properties": {"mode": {
            "anyOf": [{"type": "string", "enum": ["fast", "exact"]}, {"type": "null"}],
            "description": "m"
        }},
        "required": []
    }));
    assert_eq!(
        message(&v, json!({"mode": "x"})),
        "Found 1 validation error parsing tool input arguments:\n\
         - mode: 'x' is not valid under any of the given schemas (closest match: 'x' is not one of ['fast', 'exact'])"
    );
    let one_of = validator(json!({
        "type": "object",
        "properties": {"shape": {
            "oneOf": [
                {"type": "object", "properties": {"circle": {"type": "number"}}, "required": ["circle"], "additionalProperties": false},
                {"type": "object", "properties": {"square": {"type": "number"}}, "required": ["square"], "additionalProperties": false}
            ],
            "description": "s"
        }},
        "required": ["shape"]
    }));
    let msg = message(&one_of, json!({"shape": {"circle": "big"}}));
    assert!(
        msg.ends_with("(closest match: shape.circle: 'big' is not of type 'number')"),
        "{msg}"
    );
}

#[test]
fn integral_floats_pass_as_integers() {
    assert!(xy().validate(&json!({"x": 1.0, "y": 2})).is_ok());
}

#[test]
fn declared_formats_are_checked() {
    let v = validator(json!({
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time", "description": "w"},
            "day": {"type": "string", "format": "date", "description": "d"},
            "id": {"type": "string", "format": "uuid", "description": "i"}
        },
        "required": ["when", "day", "id"]
    }));
    assert!(v
        .validate(&json!({"when": "2026-11-30T10:00:00Z", "day": "2026-11-30", "id": "67e55044-10b1-426f-9247-bb680e5fe0c8"}))
        .is_ok());
    assert_eq!(
        message(
            &v,
            json!({"when": "yesterday", "day": "2026-13-45", "id": "nope"})
        ),
        "Found 3 validation errors parsing tool input arguments:\n\
         - when: 'yesterday' is not a 'date-time'\n\
         - day: '2026-13-45' is not a 'date'\n\
         - id: 'nope' is not a 'uuid'"
    );
}

#[test]
fn deep_nesting_is_a_parsing_error_not_a_stack_overflow() {
    let v = validator(json!({
        "type": "object",
        "properties": {"data": {"description": "anything"}},
        "required": []
    }));
    let mut deep = json!(0);
    for _ in 0..1_000 {
        deep = json!([deep]);
    }
    let err = v.validate(&json!({ "data": deep })).unwrap_err();
    assert_eq!(
        err.message(),
        "Error parsing tool call arguments: arguments exceed the maximum supported nesting depth of 100"
    );
    // Exactly 100 levels (the arguments object counts as one) is accepted.
    let mut ok = json!(0);
    for _ in 0..99 {
        ok = json!([ok]);
    }
    assert!(v.validate(&json!({ "data": ok })).is_ok());
    // Dropping a very deep value must not overflow either.
    drop(err);
}

/// `value` wrapped in `levels` arrays.
fn nested(mut value: serde_json::Value, levels: usize) -> serde_json::Value {
    for _ in 0..levels {
        value = json!([value]);
    }
    value
}

#[test]
fn nesting_counts_containers_even_empty_ones_wherever_they_sit() {
    use actuator_tool_core::check_nesting_depth;
    // The arguments object is level 1: an empty container at level 100 passes, at 101 fails.
    for empty in [json!([]), json!({})] {
        assert!(check_nesting_depth(&json!({ "a": nested(empty.clone(), 98) })).is_ok());
        assert!(check_nesting_depth(&json!({ "a": nested(empty, 99) })).is_err());
    }
    // The deep branch is found behind scalars and shallow siblings, in objects and arrays.
    let deep = nested(json!(0), 100);
    let args = json!({ "n": 1, "s": "x", "flat": [1, 2, {}], "deep": [3, deep, []] });
    assert!(check_nesting_depth(&args).is_err());
    let ok = nested(json!(0), 97);
    let args = json!({ "n": 1, "s": "x", "flat": [1, 2, {}], "deep": [3, ok, []] });
    assert!(check_nesting_depth(&args).is_ok());
    // Scalars and `null` at the top are not containers.
    assert!(check_nesting_depth(&json!(null)).is_ok());
}

#[test]
fn a_validation_message_stays_small_whatever_the_model_sent() {
    let validator = ArgumentValidator::new(
        "sum",
        &ToolParams::from_value(&json!({
            "properties": {"xs": {"type": "array", "items": {"type": "integer"}, "description": "Numbers."}},
            "required": ["xs"]
        }))
        .unwrap(),
    )
    .unwrap();
    // 1,535 wrong items: the first 20 are listed, then the count of the rest.
    let wrong: Vec<Value> = (0..1535).map(|i| json!(format!("n{i}"))).collect();
    let message = validator
        .validate(&json!({"xs": wrong}))
        .unwrap_err()
        .message()
        .to_owned();
    assert!(message.starts_with("Found 1535 validation errors parsing tool input arguments:\n- xs[0]: 'n0' is not of type 'integer'"), "{message}");
    assert!(message.ends_with("\n… and 1,515 more errors"), "{message}");
    assert_eq!(message.lines().count(), 22);
    assert!(message.len() < 4096, "{} bytes", message.len());

    // Thousands of unexpected keys: a few dozen named, the rest counted.
    let mut args = serde_json::Map::new();
    args.insert("xs".into(), json!([1]));
    for i in 0..5000 {
        args.insert(format!("k{i}"), json!(i));
    }
    let message = validator
        .validate(&Value::Object(args))
        .unwrap_err()
        .message()
        .to_owned();
    assert!(
        message.contains("'k19', … and 4,980 more were unexpected)"),
        "{message}"
    );
    assert!(message.len() < 4096, "{} bytes", message.len());
}
