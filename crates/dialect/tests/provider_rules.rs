//! The provider rules that reject a whole request with a 400, one test each: the dialect
//! repairs the schema (and says so in its report) or, for OpenAI strict mode, falls back to
//! `"strict": false` with the reason.

#![allow(clippy::unwrap_used)]

use actuator_dialect::{
    ChangeKind, Dialect, anthropic, gemini, openai_strict, restore_argument_names,
    send_argument_names,
};
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

#[test]
fn anthropic_renames_parameter_names_outside_its_pattern_and_maps_them_back() {
    let info = tool(json!({
        "año": {"type": "integer"},
        "filter[id]": {"type": "string"},
        "ok.name-1": {"type": "string"},
        "x".repeat(65): {"type": "string"}
    }));
    let rendered = anthropic(&info);
    let schema = &rendered.tool["input_schema"];
    let sent: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[2], "ok.name-1", "an accepted name is kept");
    for name in &sent {
        assert!(
            name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
            "{name}"
        );
    }
    assert!(
        sent[0].starts_with("a_o_") && sent[1].starts_with("filter_id__"),
        "{sent:?}"
    );
    // `required` follows the renaming.
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        sent.iter().map(|s| s.as_str()).collect::<Vec<_>>()
    );
    assert_eq!(rendered.report.of_kind(ChangeKind::Renamed).count(), 3);
    assert!(has(
        &rendered.report,
        "/properties/filter[id]",
        ChangeKind::Renamed
    ));

    // The model's arguments, under the names it was given, come back under the tool's own.
    let mut args = json!({sent[0].clone(): 2024, sent[1].clone(): "7", "ok.name-1": "k"});
    restore_argument_names(Dialect::Anthropic, &info, &mut args);
    assert_eq!(
        args,
        json!({"ok.name-1": "k", "año": 2024, "filter[id]": "7"})
    );
    // Replayed in the history, the call goes back under the names the model was given.
    send_argument_names(Dialect::Anthropic, &info, &mut args);
    assert_eq!(
        args,
        json!({sent[0].clone(): 2024, sent[1].clone(): "7", "ok.name-1": "k"})
    );
    // Other dialects send the names as they are, and restore nothing.
    let mut untouched = json!({sent[0].clone(): 1});
    restore_argument_names(Dialect::OpenAiStrict, &info, &mut untouched);
    assert_eq!(untouched, json!({sent[0].clone(): 1}));
    assert!(
        openai_strict(&info).tool["function"]["parameters"]["properties"]
            .get("año")
            .is_some()
    );
}

#[test]
fn anthropic_leaves_names_alone_when_a_repair_would_collide() {
    let wire =
        anthropic(&tool(json!({"a b": {"type": "string"}}))).tool["input_schema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
    // A tool that already has a parameter named as the repair of another.
    let info = tool(json!({"a b": {"type": "string"}, wire.clone(): {"type": "string"}}));
    let rendered = anthropic(&info);
    assert!(
        rendered.tool["input_schema"]["properties"]
            .get("a b")
            .is_some()
    );
    assert!(has(
        &rendered.report,
        "/properties/a b",
        ChangeKind::Unsupported
    ));
    let mut args = json!({wire.clone(): "x"});
    restore_argument_names(Dialect::Anthropic, &info, &mut args);
    assert_eq!(args, json!({wire: "x"}));
}

fn with_top(extra: Value) -> ToolInfo {
    let mut schema = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    });
    schema
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ToolInfo::new("t", "A tool.", ToolParams::pass_through(&schema).unwrap())
}

#[test]
fn anthropic_and_openai_drop_any_of_at_the_top_level() {
    let info = with_top(json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}));
    let a = anthropic(&info);
    assert!(a.tool["input_schema"].get("anyOf").is_none(), "{}", a.tool);
    assert!(has(&a.report, "/anyOf", ChangeKind::Dropped));
    let o = openai_strict(&info);
    let params = &o.tool["function"]["parameters"];
    assert!(params.get("anyOf").is_none(), "{params}");
    assert_eq!(o.tool["function"]["strict"], json!(true));
    assert!(has(&o.report, "/anyOf", ChangeKind::Dropped));
    // Also when strict mode falls back and the schema otherwise goes out unchanged.
    let info = with_top(json!({"oneOf": [{"required": ["a"]}], "patternProperties": {"^x": {}}}));
    let o = openai_strict(&info);
    assert_eq!(o.tool["function"]["strict"], json!(false));
    assert!(o.tool["function"]["parameters"].get("oneOf").is_none());
    assert!(
        o.tool["function"]["parameters"]
            .get("patternProperties")
            .is_some()
    );
    assert!(has(&o.report, "/oneOf", ChangeKind::Dropped));
    // OpenAI also rejects `enum` and `not` there; Anthropic takes them.
    let info = with_top(json!({"not": {"required": ["a", "b"]}}));
    assert!(
        openai_strict(&info).tool["function"]["parameters"]
            .get("not")
            .is_none()
    );
    assert!(anthropic(&info).tool["input_schema"].get("not").is_some());
}

#[test]
fn anthropic_merges_an_all_of_at_the_top_level_where_it_can() {
    let info = with_top(json!({"allOf": [{"minProperties": 1}]}));
    let a = anthropic(&info);
    assert!(a.tool["input_schema"].get("allOf").is_none());
    assert_eq!(a.tool["input_schema"]["minProperties"], json!(1));
    assert!(has(&a.report, "/allOf", ChangeKind::Rewritten));
    // Parts that clash with the schema are dropped.
    let info = with_top(json!({"allOf": [{"properties": {"c": {"type": "string"}}}]}));
    let a = anthropic(&info);
    assert!(a.tool["input_schema"].get("allOf").is_none());
    assert!(a.tool["input_schema"]["properties"].get("c").is_none());
    assert!(has(&a.report, "/allOf", ChangeKind::Dropped));
}

#[test]
fn openai_strict_falls_back_for_an_array_without_items() {
    let rendered = openai_strict(&tool(json!({"xs": {"type": "array", "description": "X."}})));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    assert!(has(
        &rendered.report,
        "/properties/xs",
        ChangeKind::Unsupported
    ));
    let rendered = openai_strict(&tool(
        json!({"xs": {"type": "array", "items": {"type": "string"}, "description": "X."}}),
    ));
    assert_eq!(rendered.tool["function"]["strict"], json!(true));
}

#[test]
fn openai_strict_falls_back_past_its_documented_limits() {
    let many: serde_json::Map<String, Value> = (0..5001)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let rendered = openai_strict(&tool(Value::Object(many)));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    assert!(
        rendered
            .report
            .changes
            .iter()
            .any(|c| c.kind == ChangeKind::Unsupported
                && c.detail.contains("5001 object properties"))
    );

    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let rendered = openai_strict(&tool(json!({"e": {"type": "string", "enum": values}})));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));

    // One enum of more than 250 values totalling more than 15,000 characters.
    let long: Vec<String> = (0..300).map(|i| format!("{i:0>60}")).collect();
    let rendered = openai_strict(&tool(json!({"e": {"type": "string", "enum": long}})));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    assert!(has(
        &rendered.report,
        "/properties/e/enum",
        ChangeKind::Unsupported
    ));
    // Names and values together past 120,000 characters (enums of 200 values each).
    let props: serde_json::Map<String, Value> = (0..11)
        .map(|p| {
            let values: Vec<String> = (0..200).map(|i| format!("{p}-{i:0>60}")).collect();
            (format!("e{p}"), json!({"type": "string", "enum": values}))
        })
        .collect();
    let rendered = openai_strict(&tool(Value::Object(props)));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    assert!(
        rendered
            .report
            .changes
            .iter()
            .any(|c| c.detail.contains("characters (strict mode allows 120000)")),
        "{}",
        rendered.report
    );

    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"d": deep}, "required": ["d"]});
    }
    let rendered = openai_strict(&tool(json!({"d": deep})));
    assert_eq!(rendered.tool["function"]["strict"], json!(false));
    assert!(
        rendered
            .report
            .changes
            .iter()
            .any(|c| c.detail.contains("nested more than 10"))
    );
}

#[test]
fn gemini_repairs_a_function_name_it_rejects() {
    let info = ToolInfo::new("21st_magic_builder", "Build.", ToolParams::default());
    let rendered = gemini(&info);
    let sent = rendered.tool["name"].as_str().unwrap();
    assert_ne!(sent, "21st_magic_builder");
    assert!(
        sent.starts_with("_21st_magic_builder_") && sent.len() <= 64,
        "{sent}"
    );
    assert_eq!(Dialect::Gemini.function_name(&info.name), sent);
    assert!(has(&rendered.report, "", ChangeKind::Renamed));
    // Too long once prefixed: cut, and still distinct from a name cut the same way.
    let long = format!("9{}", "a".repeat(63));
    let other = format!("9{}b", "a".repeat(62));
    let (l, o) = (
        Dialect::Gemini.function_name(&long),
        Dialect::Gemini.function_name(&other),
    );
    assert!(l.len() <= 64 && o.len() <= 64 && l != o);
    // An accepted name is sent as it is, and so are parameter names (Gemini documents no limit).
    let rendered = gemini(&tool(json!({"dry-run": {"type": "boolean"}})));
    assert_eq!(rendered.tool["name"], json!("t"));
    assert!(
        rendered.tool["parameters"]["properties"]
            .get("dry-run")
            .is_some()
    );
    assert!(
        rendered
            .report
            .of_kind(ChangeKind::Renamed)
            .next()
            .is_none()
    );
}

#[test]
fn gemini_moves_an_enum_with_an_empty_string_to_the_description() {
    let rendered = gemini(&tool(
        json!({"s": {"type": "string", "enum": ["a", ""], "description": "S."}}),
    ));
    let s = &rendered.tool["parameters"]["properties"]["s"];
    assert!(s.get("enum").is_none(), "{s}");
    assert!(
        s["description"].as_str().unwrap().contains(r#""a", """#),
        "{s}"
    );
    let change = rendered
        .report
        .changes
        .iter()
        .find(|c| c.path == "/properties/s/enum")
        .unwrap();
    assert_eq!(change.kind, ChangeKind::MovedToDescription);
    assert!(change.detail.contains("empty string"), "{change}");
}

#[test]
fn gemini_gives_an_array_without_items_an_empty_items_schema() {
    let rendered = gemini(&tool(json!({"xs": {"type": "array", "description": "X."}})));
    assert_eq!(
        rendered.tool["parameters"]["properties"]["xs"]["items"],
        json!({})
    );
    assert!(has(
        &rendered.report,
        "/properties/xs/items",
        ChangeKind::Rewritten
    ));
}
