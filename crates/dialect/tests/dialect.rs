//! Tests of the provider schema dialects: snapshots of every sample in every dialect, and
//! targeted checks of each rule.

#![allow(missing_docs)]

#[path = "dialect_samples.rs"]
mod samples;

use actuator_dialect::{
    self as dialect, ChangeKind, Dialect, DialectReport, GEMINI_MAX_REF_DEPTH, Rendered,
    strip_strict_nulls,
};
use proptest::prelude::*;
use samples::{arb_json, sample, samples, tool};
use serde_json::{Value, json};

fn kinds_at(report: &DialectReport, path: &str) -> Vec<ChangeKind> {
    report
        .changes
        .iter()
        .filter(|c| c.path == path)
        .map(|c| c.kind)
        .collect()
}

fn strict_params(rendered: &Rendered) -> &Value {
    &rendered.tool["function"]["parameters"]
}

fn gemini_params(rendered: &Rendered) -> &Value {
    &rendered.tool["parameters"]
}

/// Every object schema in a value (the schema's own objects, not enum values).
fn objects(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Object(m) => {
            if m.get("type") == Some(&json!("object")) || m.contains_key("properties") {
                out.push(schema.clone());
            }
            for (k, v) in m {
                if k != "enum" && k != "const" && k != "default" && k != "examples" {
                    objects(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| objects(i, out)),
        _ => {}
    }
}

/// Every key used anywhere in a schema (as a keyword or a property name).
fn keys(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| keys(i, out)),
        _ => {}
    }
}

const STRICT_KEYWORDS: &[&str] = &[
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
const STRICT_FORMATS: &[&str] = &[
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
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "pattern",
    "anyOf",
];

/// The keywords a rendered schema uses that are not in `allowed`, with their paths; walks
/// schema positions only (`properties` values, `items`, `anyOf` members, `$defs` values).
fn foreign_keywords(schema: &Value, allowed: &[&str], path: &str, out: &mut Vec<String>) {
    let Value::Object(m) = schema else {
        return;
    };
    for (key, value) in m {
        let at = format!("{path}/{key}");
        if !allowed.contains(&key.as_str()) {
            out.push(at.clone());
        }
        if key == "format"
            && allowed == STRICT_KEYWORDS
            && !value.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f))
        {
            out.push(format!("{at} = {value}"));
        }
        if key == "format" && allowed == GEMINI_KEYWORDS {
            let ok = matches!(
                (m.get("type").and_then(Value::as_str), value.as_str()),
                (Some("string"), Some("date-time" | "enum"))
                    | (Some("integer"), Some("int32" | "int64"))
                    | (Some("number"), Some("float" | "double"))
            );
            if !ok {
                out.push(format!("{at} = {value}"));
            }
        }
        match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(subs)) => {
                for (name, sub) in subs {
                    foreign_keywords(sub, allowed, &format!("{at}/{name}"), out);
                }
            }
            ("anyOf", Value::Array(subs)) => {
                for (i, sub) in subs.iter().enumerate() {
                    foreign_keywords(sub, allowed, &format!("{at}/{i}"), out);
                }
            }
            ("items" | "additionalProperties", sub) => foreign_keywords(sub, allowed, &at, out),
            _ => {}
        }
    }
}

/// Checks the rendering of every dialect that promises a subset.
fn assert_subsets(name: &str, info: &actuator_tool_core::ToolInfo) {
    let strict = dialect::openai_strict(info);
    if strict.tool["function"]["strict"] == json!(true) {
        let mut foreign = Vec::new();
        foreign_keywords(strict_params(&strict), STRICT_KEYWORDS, "", &mut foreign);
        assert!(
            foreign.is_empty(),
            "{name}: strict rendering uses {foreign:?}"
        );
    }
    let gemini = dialect::gemini(info);
    let mut foreign = Vec::new();
    foreign_keywords(gemini_params(&gemini), GEMINI_KEYWORDS, "", &mut foreign);
    assert!(
        foreign.is_empty(),
        "{name}: Gemini rendering uses {foreign:?}"
    );
}

#[test]
fn renderings_stay_within_each_subset() {
    for (name, info) in samples() {
        assert_subsets(name, &info);
    }
}

#[test]
fn snapshots_of_every_sample() {
    for (name, info) in samples() {
        let mut all = serde_json::Map::new();
        for dialect in Dialect::ALL {
            let rendered = serde_json::to_value(dialect.render(&info)).expect("serializes");
            all.insert(dialect.name().to_owned(), rendered);
        }
        insta::assert_json_snapshot!(format!("render__{name}"), Value::Object(all));
    }
}

#[test]
fn mcp_is_the_schema_as_is() {
    for (name, info) in samples() {
        let rendered = dialect::mcp(&info);
        assert!(rendered.report.is_empty(), "{name}");
        assert_eq!(
            rendered.tool["inputSchema"],
            info.parameters_schema(),
            "{name}"
        );
        assert_eq!(rendered.tool["name"], json!(info.name));
        assert_eq!(rendered.tool["description"], json!(info.description));
    }
}

#[test]
fn anthropic_only_drops_dollar_schema_and_renames_what_it_rejects() {
    for (name, info) in samples() {
        let rendered = dialect::anthropic(&info);
        let schema = &rendered.tool["input_schema"];
        if name == "unsupported_keywords" {
            assert_eq!(
                kinds_at(&rendered.report, "/properties/$schema_inside/$schema"),
                [ChangeKind::Dropped]
            );
            // `$` is outside Anthropic's property names.
            assert_eq!(
                kinds_at(&rendered.report, "/properties/$schema_inside"),
                [ChangeKind::Renamed]
            );
            assert_eq!(rendered.report.changes.len(), 2);
            let (wire, sent) = schema["properties"]
                .as_object()
                .unwrap()
                .iter()
                .next_back()
                .unwrap();
            assert!(wire.starts_with("_schema_inside_"), "{wire}");
            assert_eq!(sent, &json!({"type": "boolean"}));
        } else if info.parameters.extra.contains_key("$schema") {
            // A top-level $schema (kept from the input schema) is the one change, reported.
            assert_eq!(
                kinds_at(&rendered.report, "/$schema"),
                [ChangeKind::Dropped],
                "{name}"
            );
            assert_eq!(rendered.report.changes.len(), 1, "{name}");
            let mut expected = info.parameters_schema();
            expected.as_object_mut().unwrap().remove("$schema");
            assert_eq!(schema, &expected, "{name}");
        } else {
            assert!(rendered.report.is_empty(), "{name}: {}", rendered.report);
            assert_eq!(schema, &info.parameters_schema(), "{name}");
        }
    }
}

#[test]
fn strict_makes_optional_params_nullable() {
    let rendered = dialect::openai_strict(&sample("optional_params"));
    let params = strict_params(&rendered);
    assert_eq!(rendered.tool["function"]["strict"], json!(true));
    assert_eq!(
        params["required"],
        json!(["path", "limit", "encoding", "mode", "unit", "since"])
    );
    assert_eq!(
        params["properties"]["path"],
        json!({"type": "string", "description": "The file to read."})
    );
    // Optional, not nullable: null joins the type (and the enum).
    assert_eq!(
        params["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(
        params["properties"]["mode"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        params["properties"]["mode"]["enum"],
        json!(["text", "binary", null])
    );
    // Already nullable: unchanged, only required.
    assert_eq!(
        params["properties"]["encoding"],
        json!({"type": ["string", "null"], "description": "The encoding"})
    );
    assert_eq!(
        params["properties"]["unit"]["enum"],
        json!(["lines", "bytes", null])
    );
    let report = &rendered.report;
    assert_eq!(
        kinds_at(report, "/properties/limit"),
        [ChangeKind::MadeNullable]
    );
    assert_eq!(
        kinds_at(report, "/properties/encoding"),
        [ChangeKind::MadeRequired]
    );
    assert_eq!(
        kinds_at(report, "/properties/unit"),
        [ChangeKind::MadeRequired]
    );
    assert_eq!(
        kinds_at(report, "/properties/since"),
        [ChangeKind::MadeNullable]
    );
    assert!(kinds_at(report, "/properties/path").is_empty());
    // The default moves to the description; date-time is a supported format.
    assert_eq!(
        kinds_at(report, "/properties/limit/default"),
        [ChangeKind::MovedToDescription]
    );
    assert_eq!(
        params["properties"]["limit"]["description"],
        json!("Default: 10.")
    );
    assert_eq!(params["properties"]["since"]["format"], json!("date-time"));
}

#[test]
fn strict_closes_every_object() {
    for name in [
        "nested_objects",
        "recursion",
        "one_of",
        "realistic",
        "enums",
        "tuple",
    ] {
        let rendered = dialect::openai_strict(&sample(name));
        assert_eq!(rendered.tool["function"]["strict"], json!(true), "{name}");
        let mut found = Vec::new();
        objects(strict_params(&rendered), &mut found);
        assert!(!found.is_empty());
        for object in found {
            assert_eq!(
                object["additionalProperties"],
                json!(false),
                "{name}: {object}"
            );
            let props: Vec<Value> = object["properties"]
                .as_object()
                .map(|p| p.keys().map(|k| json!(k)).collect())
                .unwrap_or_default();
            assert_eq!(object["required"], Value::Array(props), "{name}: {object}");
        }
    }
    let rendered = dialect::openai_strict(&sample("nested_objects"));
    let report = &rendered.report;
    for path in [
        "/properties/user",
        "/properties/user/properties/address",
        "/properties/pets/items",
        "/properties/contact/anyOf/0",
        "/properties/contact/anyOf/1",
    ] {
        assert!(
            kinds_at(report, path).contains(&ChangeKind::Closed),
            "{path}: {report}"
        );
    }
    assert_eq!(
        kinds_at(report, "/properties/user/properties/address/properties/zip"),
        [ChangeKind::MadeNullable]
    );
    assert_eq!(
        strict_params(&rendered)["properties"]["user"]["properties"]["address"]["properties"]["zip"],
        json!({"type": ["string", "null"], "pattern": "^[0-9]{5}$"})
    );
}

#[test]
fn one_of_becomes_any_of() {
    let info = sample("one_of");
    let strict = dialect::openai_strict(&info);
    let shape = &strict_params(&strict)["properties"]["shape"];
    assert!(shape.get("oneOf").is_none());
    assert_eq!(shape["anyOf"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        kinds_at(&strict.report, "/properties/shape/oneOf"),
        [ChangeKind::Rewritten]
    );
    // Optional with anyOf: a null branch is added.
    let color = &strict_params(&strict)["properties"]["color"];
    assert_eq!(color["anyOf"][2], json!({"type": "null"}));

    let gemini = dialect::gemini(&info);
    let shape = &gemini_params(&gemini)["properties"]["shape"];
    assert!(shape.get("oneOf").is_none());
    assert_eq!(shape["anyOf"].as_array().map(Vec::len), Some(3));
    // Exclusive bounds of integers become inclusive ones; of numbers, a sentence.
    assert_eq!(
        shape["anyOf"][2]["properties"]["square"],
        json!({"type": "integer", "minimum": 1})
    );
    assert_eq!(
        shape["anyOf"][1]["properties"]["circle"],
        json!({"type": "number", "description": "Greater than 0."})
    );
    // const became an enum.
    assert_eq!(
        gemini_params(&gemini)["properties"]["color"]["anyOf"][0],
        json!({"type": "string", "enum": ["red"], "description": "Red."})
    );
}

#[test]
fn formats_outside_each_subset_are_dropped() {
    let info = sample("formats");
    let strict = dialect::openai_strict(&info);
    let props = &strict_params(&strict)["properties"];
    assert_eq!(props["when"]["format"], json!("date-time"));
    assert_eq!(props["day"]["format"], json!("date"));
    assert_eq!(props["id"]["format"], json!("uuid"));
    assert_eq!(
        props["site"],
        json!({"type": "string", "description": "Format: uri."})
    );
    assert_eq!(props["count"], json!({"type": "integer"}));
    assert_eq!(
        props["small"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        props["ratio"],
        json!({"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 1})
    );
    assert_eq!(
        kinds_at(&strict.report, "/properties/site/format"),
        [ChangeKind::MovedToDescription]
    );
    assert_eq!(
        kinds_at(&strict.report, "/properties/small/format"),
        [ChangeKind::Dropped]
    );

    let gemini = dialect::gemini(&info);
    let props = &gemini_params(&gemini)["properties"];
    assert_eq!(props["when"]["format"], json!("date-time"));
    assert_eq!(
        props["day"],
        json!({"type": "string", "description": "Format: date."})
    );
    assert_eq!(
        props["id"],
        json!({"type": "string", "description": "Format: uuid."})
    );
    assert_eq!(props["count"]["format"], json!("int64"));
    assert_eq!(
        props["small"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        props["ratio"],
        json!({"type": "number", "format": "double", "description": "A multiple of 0.5. Less than 1."})
    );
}

#[test]
fn strict_keeps_recursive_refs() {
    let rendered = dialect::openai_strict(&sample("recursion"));
    let params = strict_params(&rendered);
    assert_eq!(rendered.tool["function"]["strict"], json!(true));
    // The $defs stay, closed.
    let node = &params["$defs"]["Node"];
    assert_eq!(node["additionalProperties"], json!(false));
    assert_eq!(
        node["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    // A $ref with a sibling description is inlined one level.
    let tree = &params["properties"]["tree"];
    assert_eq!(tree["description"], json!("The tree to sum."));
    assert_eq!(
        tree["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert_eq!(
        kinds_at(&rendered.report, "/properties/tree/$ref"),
        [ChangeKind::Inlined]
    );
    // An optional anyOf with a null branch already accepts null.
    assert_eq!(
        params["properties"]["extra"],
        json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
    );
    assert_eq!(
        kinds_at(&rendered.report, "/properties/extra"),
        [ChangeKind::MadeRequired]
    );
}

#[test]
fn gemini_inlines_refs_and_cuts_recursion() {
    let rendered = dialect::gemini(&sample("recursion"));
    let params = gemini_params(&rendered);
    let mut all = Vec::new();
    keys(params, &mut all);
    for forbidden in [
        "$ref",
        "$defs",
        "additionalProperties",
        "anyOf",
        "oneOf",
        "const",
    ] {
        assert!(
            !all.iter().any(|k| k == forbidden),
            "{forbidden} in {params}"
        );
    }
    // Follow `children.items` down until the placeholder.
    let mut node = &params["properties"]["tree"];
    assert_eq!(node["description"], json!("The tree to sum."));
    let mut levels = 0;
    while node.get("properties").is_some() {
        levels += 1;
        node = &node["properties"]["children"]["items"];
    }
    assert_eq!(levels, GEMINI_MAX_REF_DEPTH);
    assert_eq!(
        node,
        &json!({"type": "object", "description": "A nested Node; its fields are not described at this depth."})
    );
    // The optional tree: anyOf [Node, null] became the node, nullable.
    assert_eq!(params["properties"]["extra"]["nullable"], json!(true));
    assert_eq!(params["properties"]["extra"]["type"], json!("object"));
    let report = &rendered.report;
    assert_eq!(
        kinds_at(report, "/properties/tree/$ref"),
        [ChangeKind::Inlined]
    );
    assert_eq!(
        kinds_at(report, "/$defs/Node/properties/children/items/$ref"),
        [ChangeKind::Inlined, ChangeKind::RecursionCut]
    );
    assert_eq!(kinds_at(report, "/$defs"), [ChangeKind::Dropped]);
}

#[test]
fn gemini_enums_hold_strings() {
    let rendered = dialect::gemini(&sample("enums"));
    let props = &gemini_params(&rendered)["properties"];
    assert_eq!(props["mode"], json!({"type": "string", "enum": ["fast"]}));
    assert_eq!(
        props["version"],
        json!({"type": "integer", "description": "Must be 2."})
    );
    assert_eq!(
        props["level"],
        json!({"type": "integer", "description": "How loud. Allowed values: 1, 2, 3."})
    );
    assert_eq!(
        props["flag"],
        json!({"description": "Allowed values: true, \"auto\"."})
    );
    assert_eq!(
        props["tone"],
        json!({"type": "string", "nullable": true, "enum": ["low", "high"]})
    );
    let report = &rendered.report;
    assert_eq!(
        kinds_at(report, "/properties/mode/const"),
        [ChangeKind::Rewritten]
    );
    assert_eq!(
        kinds_at(report, "/properties/level/enum"),
        [ChangeKind::MovedToDescription]
    );
    assert_eq!(
        kinds_at(report, "/properties/tone/type"),
        [ChangeKind::Rewritten]
    );
}

#[test]
fn maps_fall_back_to_non_strict() {
    for name in ["map", "with_map", "any_value"] {
        let info = sample(name);
        let rendered = dialect::openai_strict(&info);
        assert_eq!(rendered.tool["function"]["strict"], json!(false), "{name}");
        assert_eq!(
            strict_params(&rendered),
            &info.parameters_schema(),
            "{name}"
        );
        assert!(!rendered.report.is_empty());
        assert!(
            rendered.report.changes.iter().all(
                |c| c.kind == ChangeKind::Unsupported && c.detail.contains("\"strict\": false")
            ),
            "{name}: {}",
            rendered.report
        );
    }
    let rendered = dialect::openai_strict(&sample("map"));
    assert_eq!(
        kinds_at(&rendered.report, "/properties/env/additionalProperties"),
        [ChangeKind::Unsupported]
    );

    let gemini = dialect::gemini(&sample("map"));
    assert_eq!(
        gemini_params(&gemini)["properties"]["env"],
        // Gemini rejects an object without properties: no type, the object in words.
        json!({
            "description": "Environment variables. A JSON object. Any property names are allowed; each value must match the JSON Schema {\"type\":\"string\"}."
        })
    );
}

#[test]
fn tuples_become_arrays_of_any_element() {
    let info = sample("tuple");
    for rendered in [dialect::openai_strict(&info), dialect::gemini(&info)] {
        let params = if rendered.tool.get("function").is_some() {
            strict_params(&rendered)
        } else {
            gemini_params(&rendered)
        };
        assert_eq!(
            params["properties"]["point"],
            json!({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2})
        );
        assert_eq!(
            params["properties"]["pair"]["items"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            kinds_at(&rendered.report, "/properties/pair/prefixItems"),
            [ChangeKind::Rewritten]
        );
    }
}

#[test]
fn tools_without_parameters() {
    let info = sample("no_params");
    for dialect in Dialect::ALL {
        assert!(dialect.render(&info).report.is_empty(), "{dialect}");
    }
    assert!(dialect::gemini(&info).tool.get("parameters").is_none());
    assert_eq!(
        strict_params(&dialect::openai_strict(&info)),
        &json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn names_gemini_rejects_are_repaired() {
    let rendered = dialect::gemini(&sample("names"));
    assert_eq!(kinds_at(&rendered.report, ""), [ChangeKind::Renamed]);
    assert_eq!(
        rendered.tool["name"],
        json!(Dialect::Gemini.function_name("9lives"))
    );
    // Gemini documents no limit on parameter names: sent as they are.
    assert!(kinds_at(&rendered.report, "/properties/dry-run").is_empty());
    assert!(kinds_at(&rendered.report, "/properties/ok_name").is_empty());
    assert!(
        gemini_params(&rendered)["properties"]
            .get("dry-run")
            .is_some()
    );
}

#[test]
fn malformed_schemas_are_reported() {
    let info = sample("malformed");
    for dialect in [Dialect::OpenAiStrict, Dialect::Gemini] {
        let report = dialect.render(&info).report;
        for path in [
            "/properties/a",
            "/properties/b/type",
            "/properties/c/$ref",
            "/properties/d/$ref",
        ] {
            assert!(
                kinds_at(&report, path).contains(&ChangeKind::Invalid),
                "{dialect} {path}: {report}"
            );
        }
    }
}

#[test]
fn report_reads_as_lines() {
    let report = dialect::openai_strict(&sample("formats")).report;
    let text = report.to_string();
    assert_eq!(text.lines().count(), report.changes.len());
    assert!(text.contains("/properties/site/format: moved_to_description: format 'uri'"));
    assert_eq!(report.of_kind(ChangeKind::Dropped).count(), 3);
}

#[test]
fn strict_renderings_are_valid_json_schema() {
    for (name, info) in samples() {
        for dialect in [Dialect::OpenAiStrict, Dialect::Anthropic] {
            let rendered = dialect.render(&info);
            let schema = if dialect == Dialect::OpenAiStrict {
                strict_params(&rendered).clone()
            } else {
                rendered.tool["input_schema"].clone()
            };
            if name == "malformed" {
                continue;
            }
            let compiled = jsonschema::draft202012::new(&schema);
            assert!(compiled.is_ok(), "{dialect} {name}: {:?}", compiled.err());
        }
    }
}

/// Arguments valid for the tool, with every optional property absent, become valid for the
/// strict rendering once those properties are `null`, and `strip_strict_nulls` gives the
/// original arguments back.
#[test]
fn strict_nulls_round_trip() {
    let info = sample("realistic");
    let original = info.parameters_schema();
    let strict = strict_params(&dialect::openai_strict(&info)).clone();
    let full = jsonschema::draft202012::new(&original).expect("compiles");
    let strict_validator = jsonschema::draft202012::new(&strict).expect("compiles");

    let args = json!({
        "path": "a.txt",
        "shape": {"circle": {"radius": 2.0}},
        "point": [1.0, 2.0],
        "tree": {"value": 1, "children": [{"value": 2, "children": []}]}
    });
    assert!(full.is_valid(&args));
    assert!(
        !strict_validator.is_valid(&args),
        "strict wants every property"
    );

    let mut sent = args.clone();
    for name in ["limit", "offset", "unit", "labels"] {
        sent[name] = Value::Null;
    }
    assert!(
        strict_validator.is_valid(&sent),
        "{:?}",
        strict_validator.validate(&sent).err()
    );
    assert!(!full.is_valid(&sent), "null is not a u32");

    let removed = strip_strict_nulls(&info, &mut sent);
    assert_eq!(removed, ["/limit", "/labels"]);
    // `offset` and `unit` are Options: their null stays, and means None.
    let mut expected = args;
    expected["offset"] = Value::Null;
    expected["unit"] = Value::Null;
    assert_eq!(sent, expected);
    assert!(full.is_valid(&sent));
    let typed: samples::Realistic = serde_json::from_value(sent).expect("deserializes");
    assert_eq!(typed.limit, 10);
    assert_eq!(typed.labels, Vec::<String>::new());
}

#[test]
fn strip_strict_nulls_follows_nesting() {
    let info = sample("nested_objects");
    let mut args = json!({
        "user": {"name": "Ann", "address": {"street": "Main", "zip": null}},
        "pets": [{"kind": "cat", "age": null}, {"kind": "dog", "age": 3}],
        "contact": {"phone": "123"}
    });
    let removed = strip_strict_nulls(&info, &mut args);
    assert_eq!(removed, ["/user/address/zip", "/pets/0/age"]);
    assert_eq!(args["user"]["address"], json!({"street": "Main"}));
    assert_eq!(args["pets"][0], json!({"kind": "cat"}));

    // Through $ref and the one matching anyOf branch; a required null is left alone.
    let info = tool(
        "t",
        json!({
            "a": {"$ref": "#/$defs/A"},
            "b": {"anyOf": [
                {"type": "object", "properties": {"x": {"type": "string"}, "o": {"type": "integer"}}, "required": ["x"]},
                {"type": "string"}
            ]},
            "req": {"type": "string"}
        }),
        &["a", "b", "req"],
        json!({"A": {"type": "object", "properties": {"o": {"type": "integer"}}}}),
    );
    let mut args = json!({"a": {"o": null}, "b": {"x": "1", "o": null}, "req": null});
    let removed = strip_strict_nulls(&info, &mut args);
    assert_eq!(removed, ["/a/o", "/b/o"]);
    assert_eq!(args, json!({"a": {}, "b": {"x": "1"}, "req": null}));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// No schema makes a dialect panic, and strict renderings keep the tool object's shape.
    #[test]
    fn never_panics(props in prop::collection::vec(("[a-c]", arb_json()), 0..4), defs in arb_json()) {
        let properties = Value::Object(props.into_iter().collect());
        let defs = json!({"A": defs});
        let info = tool("t", properties, &[], defs);
        for dialect in Dialect::ALL {
            let rendered = dialect.render(&info);
            prop_assert!(rendered.tool.is_object());
            let _ = rendered.report.to_string();
        }
        assert_subsets("random", &info);
        let strict = dialect::openai_strict(&info);
        prop_assert!(strict.tool["function"]["parameters"].is_object());
        prop_assert!(strict.tool["function"]["strict"].is_boolean());
        let mut args = json!({"a": null, "b": {"c": null}, "c": [null]});
        let _ = strip_strict_nulls(&info, &mut args);
    }
}
