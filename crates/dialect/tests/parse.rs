//! `parse_tool_call`: the recovery rules of the reference (§5).

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_dialect::parse_tool_call;
use actuator_model::ToolCallKind;
use actuator_tool_core::{ToolInfo, ToolParams};
use proptest::prelude::*;
use serde_json::json;

fn tool(name: &str, params: &[&str]) -> ToolInfo {
    let mut p = ToolParams::default();
    for name in params {
        p.properties.insert(
            (*name).into(),
            json!({"type": "string", "description": "d"}),
        );
    }
    ToolInfo::new(name, "d", p)
}

#[test]
fn json_objects_parse() {
    let c = parse_tool_call("c1", "add", Some("  {\"x\": 1, \"y\": [1, 2]}\n"), &[]);
    assert_eq!(c.id, "c1");
    assert_eq!(c.function, "add");
    assert_eq!(c.kind, ToolCallKind::Function);
    assert_eq!(
        c.arguments.to_value().unwrap(),
        json!({"x": 1, "y": [1, 2]})
    );
    assert!(c.parse_error.is_none());
}

#[test]
fn stray_quotes_after_an_object_are_recovered() {
    for raw in [r#"{}"""#, r#"{"a":1}""#, "{}\"\n\"", r#"{"a":1}" "#] {
        let c = parse_tool_call("c", "f", Some(raw), &[]);
        assert!(c.parse_error.is_none(), "{raw}: {:?}", c.parse_error);
    }
    assert_eq!(
        parse_tool_call("c", "f", Some(r#"{"a":1}""#), &[])
            .arguments
            .to_map()
            .unwrap()["a"],
        1
    );
}

#[test]
fn other_failures_are_parse_errors_with_no_arguments() {
    for raw in [
        "{}'",
        r#"{"a":1}{"a":2}"#,
        r#"{"a": 1"#,
        "{",
        r#"{"a": tru}"#,
    ] {
        let c = parse_tool_call("c", "f", Some(raw), &[]);
        let err = c.parse_error.unwrap_or_else(|| panic!("{raw} should fail"));
        assert!(
            err.starts_with(&format!(
                "Error parsing the following tool call arguments:\n\n{raw}\n\nError details: "
            )),
            "{err}"
        );
        assert!(c.arguments.is_empty());
    }
}

#[test]
fn deep_nesting_is_a_parse_error() {
    let raw = format!("{{\"a\": {}1{}}}", "[".repeat(100), "]".repeat(100));
    let c = parse_tool_call("c", "f", Some(&raw), &[]);
    assert!(
        c.parse_error.unwrap().ends_with(
            "Error details: arguments exceed the maximum supported nesting depth of 100"
        )
    );
    // Beyond serde_json's own recursion limit too.
    let raw = format!("{{\"a\": {}1{}}}", "[".repeat(5000), "]".repeat(5000));
    let c = parse_tool_call("c", "f", Some(&raw), &[]);
    assert!(
        c.parse_error
            .unwrap()
            .ends_with("arguments exceed the maximum supported nesting depth of 100")
    );
    // 99 arrays inside the object is 100 levels: accepted.
    let raw = format!("{{\"a\": {}1{}}}", "[".repeat(99), "]".repeat(99));
    assert!(
        parse_tool_call("c", "f", Some(&raw), &[])
            .parse_error
            .is_none()
    );
}

#[test]
fn non_object_text_nested_too_deep_is_a_parse_error() {
    // Found by the fuzzer: 100 nested arrays are 101 levels once inside the arguments object.
    let tools = [tool("bash", &["command"])];
    for depth in [100, 200] {
        let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let c = parse_tool_call("c", "bash", Some(&raw), &tools);
        assert!(c.arguments.is_empty());
        assert!(
            c.parse_error.unwrap().ends_with(
                "Error details: arguments exceed the maximum supported nesting depth of 100"
            ),
            "depth {depth}"
        );
    }
    let raw = format!("{}{}", "[".repeat(99), "]".repeat(99));
    let c = parse_tool_call("c", "bash", Some(&raw), &tools);
    assert!(c.parse_error.is_none());
    assert!(actuator_tool_core::check_nesting_depth(&c.arguments.to_value().unwrap()).is_ok());
}

#[test]
fn shown_arguments_are_middle_truncated() {
    let raw = format!("{{\"a\": \"{}", "é".repeat(20_000));
    let c = parse_tool_call("c", "f", Some(&raw), &[]);
    let err = c.parse_error.unwrap();
    assert!(
        err.contains(&format!(
            "\n\n(arguments middle-truncated from {} bytes)",
            raw.len()
        )),
        "{}",
        &err[..200]
    );
    assert!(err.len() < 17 * 1024 + 400);
}

#[test]
fn non_object_text_goes_to_the_first_parameter() {
    let tools = [tool("bash", &["command", "timeout"])];
    let cases = [
        ("true", json!(true)),
        ("42", json!(42)),
        ("[1, 2]", json!([1, 2])),
        ("hello world", json!("hello world")),
        ("'", json!("'")),
        ("\"quoted\"", json!("quoted")),
    ];
    for (raw, expected) in cases {
        let c = parse_tool_call("c", "bash", Some(raw), &tools);
        assert!(c.parse_error.is_none());
        assert_eq!(c.arguments.to_map().unwrap().len(), 1, "{raw}");
        assert_eq!(c.arguments.to_map().unwrap()["command"], expected, "{raw}");
    }
}

#[test]
fn anything_else_gives_no_arguments_and_no_error() {
    let tools = [tool("bash", &["command"]), tool("noargs", &[])];
    for (function, raw) in [
        ("bash", None),
        ("bash", Some("")),
        ("bash", Some("   ")),
        ("unknown", Some("ls")),
        ("noargs", Some("ls")),
    ] {
        let c = parse_tool_call("c", function, raw, &tools);
        assert!(c.arguments.is_empty(), "{function} {raw:?}");
        assert!(c.parse_error.is_none());
    }
}

proptest! {
    #[test]
    fn never_panics(raw in ".{0,300}", deep in 0usize..300) {
        let tools = [tool("f", &["a"])];
        let _ = parse_tool_call("c", "f", Some(&raw), &tools);
        let nested = format!("{{\"a\":{}{}", "[".repeat(deep), raw);
        let _ = parse_tool_call("c", "f", Some(&nested), &tools);
    }
}

#[test]
fn a_scalar_first_parameter_reads_the_text_as_the_reference_yaml_does() {
    let flag = ToolInfo::new(
        "toggle",
        "d",
        ToolParams::from_value(&json!({
            "properties": {"on": {"type": "boolean", "description": "d"}},
            "required": ["on"]
        }))
        .unwrap(),
    );
    let count = ToolInfo::new(
        "count",
        "d",
        ToolParams::from_value(&json!({
            "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "d"}}
        }))
        .unwrap(),
    );
    let arg = |name: &str, text: &str| {
        let tools = [flag.clone(), count.clone()];
        let call = parse_tool_call("c", name, Some(text), &tools);
        assert!(call.parse_error.is_none());
        call.arguments
            .to_map()
            .unwrap()
            .values()
            .next()
            .cloned()
            .unwrap()
    };
    assert_eq!(arg("toggle", "True"), json!(true));
    assert_eq!(arg("toggle", "off"), json!(false));
    assert_eq!(arg("count", "~"), json!(null));
    assert_eq!(arg("count", "0x1f"), json!(31));
    // PyYAML keeps these as strings; validation then reports them.
    assert_eq!(arg("count", "None"), json!("None"));
    assert_eq!(arg("count", "1e3"), json!("1e3"));
    // A string first parameter keeps today's reading: JSON, else the text.
    let tools = [tool("say", &["text"])];
    assert_eq!(
        parse_tool_call("c", "say", Some("True"), &tools)
            .arguments
            .to_map()
            .unwrap()["text"],
        json!("True")
    );
}

#[test]
fn a_parsed_call_keeps_its_object_so_the_executor_does_not_parse_it_again() {
    let call = parse_tool_call("c1", "add", Some(r#"{"x": 1, "y": 2}"#), &[]);
    assert!(call.arguments.keeps_parsed());
    assert_eq!(call.arguments.as_json(), r#"{"x":1,"y":2}"#);
    let bad = parse_tool_call("c2", "add", Some(r#"{"x": 1,"#), &[]);
    assert!(bad.parse_error.is_some() && bad.arguments.is_empty());
}
