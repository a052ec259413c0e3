//! Every tool of the corpus (`tests/corpus/`, over three thousand real-world tool definitions)
//! rendered through every dialect and checked against its provider's documented rules
//! (`provider_check`): each rendering is one the provider accepts, or, for OpenAI, a non-strict
//! fallback whose report says why. The OpenAI renderings are also checked against the
//! official API description (`openai_spec`), the Anthropic ones against the `ToolParam` of the
//! request schema made from Anthropic's SDK. What the dialects had to do is summed up per
//! dialect in a snapshot.

#![allow(missing_docs, clippy::unwrap_used, clippy::panic)]

mod corpus;
mod openai_spec;
mod provider_check;

use std::collections::BTreeMap;

use actuator_dialect::{ChangeKind, Dialect};
use serde_json::{Value, json};

/// Anthropic's `ToolParam`, from the request schema generated from its official SDK
/// (`specs/anthropic/messages-request.schema.json`, see `specs/SOURCES.md`).
fn anthropic_tool_param() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../specs/anthropic/messages-request.schema.json"
    );
    let request: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let root = json!({"$ref": "#/$defs/ToolParam", "$defs": request["$defs"]});
    jsonschema::draft202012::new(&root).unwrap()
}

fn check(dialect: Dialect, tool: &Value) -> provider_check::Violations {
    match dialect {
        Dialect::Mcp => provider_check::mcp(tool),
        Dialect::OpenAiStrict => provider_check::openai(tool),
        Dialect::Anthropic => provider_check::anthropic(tool),
        Dialect::Gemini => provider_check::gemini(tool),
        other => panic!("no checker for {other}"),
    }
}

#[test]
fn every_corpus_tool_renders_as_its_provider_accepts() {
    let (tools, left_out) = corpus::corpus();
    assert!(tools.len() >= 1000, "only {} corpus tools", tools.len());
    let spec = openai_spec::spec();
    let tool_param = anthropic_tool_param();
    let mut failures = Vec::new();
    // dialect -> (tools changed, tools falling back, change kind -> tools)
    let mut summary: BTreeMap<&str, (usize, usize, BTreeMap<&str, usize>)> = BTreeMap::new();
    for (source, info) in &tools {
        for dialect in Dialect::ALL {
            let rendered = dialect.render(info);
            let violations = check(dialect, &rendered.tool);
            if !violations.is_empty() {
                failures.push(format!(
                    "{source} {} ({dialect}): {violations:?}",
                    info.name
                ));
            }
            let entry = summary.entry(dialect.name()).or_default();
            if !rendered.report.is_empty() {
                entry.0 += 1;
            }
            if dialect == Dialect::Anthropic {
                let errs = openai_spec::errors(&tool_param, &rendered.tool);
                if !errs.is_empty() {
                    failures.push(format!("{source} {}: ToolParam: {errs:?}", info.name));
                }
            }
            if dialect == Dialect::OpenAiStrict {
                let function = &rendered.tool["function"];
                if function["strict"] == json!(false) {
                    entry.1 += 1;
                    let why = rendered.report.of_kind(ChangeKind::Unsupported).count();
                    if why == 0 {
                        failures.push(format!(
                            "{source} {}: non-strict without a reason",
                            info.name
                        ));
                    }
                }
                let errs = openai_spec::errors(&spec.function_object, function);
                if !errs.is_empty() {
                    failures.push(format!("{source} {}: FunctionObject: {errs:?}", info.name));
                }
                if let Some(tool) = &spec.chat_completion_tool {
                    let errs = openai_spec::errors(tool, &rendered.tool);
                    if !errs.is_empty() {
                        failures.push(format!(
                            "{source} {}: ChatCompletionTool: {errs:?}",
                            info.name
                        ));
                    }
                }
            }
            let mut kinds: Vec<&str> = rendered
                .report
                .changes
                .iter()
                .map(|c| c.kind.as_str())
                .collect();
            kinds.sort_unstable();
            kinds.dedup();
            for kind in kinds {
                *entry.2.entry(kind).or_default() += 1;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} renderings break their provider's rules:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let summary: BTreeMap<&str, Value> = summary
        .into_iter()
        .map(|(d, (changed, fallback, kinds))| {
            let mut entry = json!({"tools_changed": changed, "tools_by_change_kind": kinds});
            if d == Dialect::OpenAiStrict.name() {
                entry["tools_non_strict"] = json!(fallback);
            }
            (d, entry)
        })
        .collect();
    insta::assert_json_snapshot!(
        "corpus_summary",
        json!({"tools": tools.len(), "left_out": left_out, "dialects": summary})
    );
}

/// The checkers are the oracle: each catches what its provider rejects.
#[test]
fn the_checkers_catch_what_providers_reject() {
    let strict = |parameters: Value| json!({"type": "function", "function": {"name": "t", "description": "", "parameters": parameters, "strict": true}});
    let open =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    assert!(!provider_check::openai(&strict(open)).is_empty());
    let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
    assert!(provider_check::openai(&strict(closed.clone())).is_empty());
    let mut optional = closed.clone();
    optional["required"] = json!([]);
    assert!(!provider_check::openai(&strict(optional)).is_empty());
    let mut stray_enum = closed.clone();
    stray_enum["properties"]["a"] = json!({"type": "integer", "enum": ["1"]});
    assert!(!provider_check::openai(&strict(stray_enum)).is_empty());
    let mut keyword = closed.clone();
    keyword["properties"]["a"] = json!({"type": "string", "minLength": 1});
    assert!(!provider_check::openai(&strict(keyword)).is_empty());
    let mut top_any_of = closed.clone();
    top_any_of["anyOf"] = json!([{"required": ["a"]}]);
    assert!(!provider_check::openai(&strict(top_any_of.clone())).is_empty());
    let mut untyped_array = closed.clone();
    untyped_array["properties"]["a"] = json!({"type": "array"});
    assert!(!provider_check::openai(&strict(untyped_array)).is_empty());

    let anthropic = |schema: Value| json!({"name": "t", "description": "", "input_schema": schema});
    assert!(provider_check::anthropic(&anthropic(closed.clone())).is_empty());
    let mut bad_key = closed;
    bad_key["properties"] = json!({"año": {"type": "string"}});
    bad_key["required"] = json!([]);
    assert!(!provider_check::anthropic(&anthropic(bad_key)).is_empty());
    assert!(
        !provider_check::anthropic(&anthropic(
            json!({"type": "object", "properties": {"a": {"type": 7}}})
        ))
        .is_empty()
    );
    assert!(!provider_check::anthropic(&anthropic(json!({"properties": {}}))).is_empty());
    assert!(!provider_check::anthropic(&anthropic(top_any_of)).is_empty());

    let tool_param = anthropic_tool_param();
    assert!(tool_param.is_valid(&anthropic(json!({"type": "object"}))));
    assert!(!tool_param.is_valid(&json!({"input_schema": {"type": "object"}})));
    assert!(!tool_param.is_valid(&json!({"name": "t", "input_schema": {}, "extra": 1})));

    let gemini = |name: &str, parameters: Value| json!({"name": name, "description": "", "parameters": parameters});
    let fine = json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}}, "required": ["a"]});
    assert!(provider_check::gemini(&gemini("t", fine.clone())).is_empty());
    assert!(!provider_check::gemini(&gemini("9t", fine)).is_empty());
    for bad in [
        json!({"type": "object", "properties": {"a": {"type": "integer", "enum": ["1"]}}}),
        json!({"type": "object", "properties": {"a": {"type": "object"}}}),
        json!({"type": "object", "properties": {"a": {"type": "array"}}}),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}),
        json!({"type": "object", "properties": {"a": {"type": "string", "additionalProperties": false}}}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x", ""]}}}),
    ] {
        assert!(
            !provider_check::gemini(&gemini("t", bad.clone())).is_empty(),
            "{bad}"
        );
    }
}
