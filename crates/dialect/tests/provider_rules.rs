//! The provider rules that reject a whole request with a 400, one test each: the dialect
//! repairs the schema (and says so in its report) or, for OpenAI strict mode, falls back to
//! `"strict": false` with the reason.

#![allow(clippy::unwrap_used)]

use actuator_dialect::{ChangeKind, gemini, openai_strict};
use actuator_tool_core::{ToolInfo, ToolParams};
use serde_json::{Value, json};

fn tool(properties: Value) -> ToolInfo {
    let names: Vec<String> = properties.as_object().unwrap().keys().cloned().collect();
    let params =
        ToolParams::from_value(&json!({"properties": properties, "required": names})).unwrap();
    ToolInfo::new("t", "A tool.", params)
}

fn has(report: &actuator_dialect::DialectReport, path: &str, kind: ChangeKind) -> bool {
    report
        .changes
        .iter()
        .any(|c| c.path == path && c.kind == kind)
}

#[test]
fn openai_strict_falls_back_when_an_enum_value_is_not_of_the_declared_type() {
    let info = tool(json!({"n": {"type": "integer", "enum": ["1", "2"], "description": "N."}}));
    let rendered = openai_strict(&info);
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    let change = rendered
        .report
        .changes
        .iter()
        .find(|c| c.path == "/properties/n/enum")
        .unwrap();
    assert_eq!(change.kind, ChangeKind::Unsupported);
    assert!(
        change.detail.contains("\"1\" is not of the schema's type"),
        "{change}"
    );
    // Values that fit (and null beside a type list) stay strict.
    for fitting in [
        json!({"type": "integer", "enum": [1, 2], "description": "N."}),
        json!({"type": "number", "enum": [1, 2.5], "description": "N."}),
        json!({"type": ["string", "null"], "enum": ["a", null], "description": "N."}),
        json!({"enum": ["a", 1], "type": ["string", "integer"], "description": "N."}),
    ] {
        let rendered = openai_strict(&tool(json!({"n": fitting})));
        assert_eq!(
            rendered.tool["function"]["strict"],
            json!(true),
            "{fitting}"
        );
    }
}

#[test]
fn gemini_moves_an_enum_on_a_non_string_type_to_the_description() {
    let rendered = gemini(&tool(
        json!({"n": {"type": "integer", "enum": ["1", "2"], "description": "N."}}),
    ));
    let n = &rendered.tool["parameters"]["properties"]["n"];
    assert!(n.get("enum").is_none(), "{n}");
    assert_eq!(n["type"], json!("integer"));
    assert!(
        n["description"]
            .as_str()
            .unwrap()
            .contains("Allowed values:"),
        "{n}"
    );
    assert!(has(
        &rendered.report,
        "/properties/n/enum",
        ChangeKind::MovedToDescription
    ));
    // A string enum stays an enum.
    let rendered = gemini(&tool(
        json!({"s": {"type": "string", "enum": ["a", "b"], "description": "S."}}),
    ));
    assert_eq!(
        rendered.tool["parameters"]["properties"]["s"]["enum"],
        json!(["a", "b"])
    );
}

#[test]
fn gemini_gives_an_object_without_properties_no_type() {
    let rendered = gemini(&tool(json!({
        "xs": {"type": "array", "items": {"type": "object"}, "description": "Rows."}
    })));
    let items = &rendered.tool["parameters"]["properties"]["xs"]["items"];
    assert!(items.get("type").is_none(), "{items}");
    assert_eq!(items["description"], json!("A JSON object."));
    assert!(has(
        &rendered.report,
        "/properties/xs/items/type",
        ChangeKind::Rewritten
    ));
    // A map (additionalProperties with a schema) likewise.
    let rendered = gemini(&tool(json!({
        "tags": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Tags."}
    })));
    let tags = &rendered.tool["parameters"]["properties"]["tags"];
    assert!(tags.get("type").is_none(), "{tags}");
    assert!(tags.get("properties").is_none(), "{tags}");
    // An object with properties keeps its type.
    let rendered = gemini(&tool(json!({
        "p": {"type": "object", "properties": {"x": {"type": "integer"}}, "description": "P."}
    })));
    assert_eq!(
        rendered.tool["parameters"]["properties"]["p"]["type"],
        json!("object")
    );
}

#[test]
fn gemini_drops_required_on_a_schema_without_properties() {
    let rendered = gemini(&tool(json!({
        "o": {"type": "object", "required": ["a"], "description": "O."}
    })));
    let o = &rendered.tool["parameters"]["properties"]["o"];
    assert!(o.get("required").is_none(), "{o}");
    assert!(has(
        &rendered.report,
        "/properties/o/required",
        ChangeKind::Dropped
    ));
}

#[test]
fn gemini_drops_properties_on_a_schema_that_is_not_an_object() {
    let rendered = gemini(&tool(json!({
        "data": {"type": "string", "properties": {"x": {"type": "integer"}}, "required": ["x"], "description": "D."}
    })));
    let data = &rendered.tool["parameters"]["properties"]["data"];
    assert!(data.get("properties").is_none(), "{data}");
    assert!(data.get("required").is_none(), "{data}");
    assert_eq!(data["type"], json!("string"));
    assert!(has(
        &rendered.report,
        "/properties/data/properties",
        ChangeKind::Dropped
    ));
}
