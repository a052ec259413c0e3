//! `cargo xtask specs`: cuts the part of OpenAI's OpenAPI description that the tests use out of
//! the full file, so the repository carries a few hundred kilobytes instead of 3.3 MB.
//!
//! The subset keeps the document's shape (`openapi`, `info`, `components.schemas.*`) so the
//! test loader reads it like the full file. It holds the named root schemas and every
//! component they `$ref`, transitively, each copied unchanged and in the full file's order. A
//! top-level `x-actuator-subset` records where it came from. See `specs/SOURCES.md`.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// The schemas kept when no `--schema` is given: the ones the dialect and catalogue tests
/// compile today, and the request, response and tool-call schemas that `specs/SOURCES.md`
/// names for checking a provider's wire format.
pub const DEFAULT_ROOTS: &[&str] = &[
    // used by crates/*/tests/openai_spec/mod.rs
    "FunctionObject",
    "ChatCompletionTool",
    // chat completions
    "CreateChatCompletionRequest",
    "CreateChatCompletionResponse",
    "CreateChatCompletionStreamResponse",
    "ChatCompletionMessageToolCall",
    "ChatCompletionRequestToolMessage",
    // responses
    "CreateResponse",
    "Response",
    "FunctionTool",
    "FunctionToolCall",
    "FunctionToolCallOutput",
    "ResponseStreamEvent",
];

const HELP: &str = "usage: cargo xtask specs --from PATH [options]

Extracts from OpenAI's full OpenAPI description (openai-openapi.json) the component schemas
the tests use and everything they $ref, transitively, and writes them as a smaller OpenAPI
document (openapi, info, components). See specs/SOURCES.md.

options:
  --from PATH     the full description: a file, or a folder holding openai-openapi.json
  --out FILE      where to write (default: specs/openai-openapi.subset.json in the repository)
  --schema NAME   a root schema to keep; repeat it. Default: the list in xtask/src/specs.rs
                  (FunctionObject, ChatCompletionTool, CreateChatCompletionRequest, ...)";

/// The entry point of `cargo xtask specs`.
pub fn main(args: &[String]) -> Result<(), String> {
    let mut from: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut roots: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => {
                println!("{HELP}");
                return Ok(());
            }
            "--from" => from = Some(PathBuf::from(value(a)?)),
            "--out" => out = Some(PathBuf::from(value(a)?)),
            "--schema" => roots.push(value(a)?),
            other => return Err(format!("unknown option '{other}'\n\n{HELP}")),
        }
    }
    let Some(mut from) = from else {
        return Err(format!("--from is required\n\n{HELP}"));
    };
    if from.is_dir() {
        from = from.join("openai-openapi.json");
    }
    if roots.is_empty() {
        roots = DEFAULT_ROOTS.iter().map(|s| (*s).to_owned()).collect();
    }
    let out = out.unwrap_or_else(|| {
        crate::measure::root()
            .join("specs")
            .join("openai-openapi.subset.json")
    });

    let text = fs::read_to_string(&from).map_err(|e| format!("{}: {e}", from.display()))?;
    let full: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", from.display()))?;
    let source = from
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let subset = extract(&full, &roots, &source)?;
    let kept = subset["components"]["schemas"]
        .as_object()
        .map_or(0, Map::len);
    let mut body = serde_json::to_string_pretty(&subset).map_err(|e| e.to_string())?;
    body.push('\n');
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    fs::write(&out, &body).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "wrote {} ({kept} schemas from {} roots, {} bytes)",
        out.display(),
        roots.len(),
        body.len()
    );
    Ok(())
}

/// The subset document: `openapi` and `info` as they are, a note on its origin, and the
/// components reachable from `roots` (in the order of the full file).
pub fn extract(full: &Value, roots: &[String], source: &str) -> Result<Value, String> {
    let components = full
        .get("components")
        .and_then(Value::as_object)
        .ok_or("the description has no components")?;
    let lookup = |section: &str, name: &str| {
        components
            .get(section)
            .and_then(|s| s.get(name))
            .ok_or_else(|| format!("no #/components/{section}/{name} in the description"))
    };

    // Walk the $ref graph from the roots; `kept` holds (section, name) pairs.
    let mut kept: BTreeSet<(String, String)> = BTreeSet::new();
    let mut todo: Vec<(String, String)> = roots
        .iter()
        .map(|r| ("schemas".to_owned(), r.clone()))
        .collect();
    while let Some(key) = todo.pop() {
        if kept.contains(&key) {
            continue;
        }
        let schema = lookup(&key.0, &key.1)?;
        let mut refs = Vec::new();
        collect_refs(schema, &mut refs);
        for r in refs {
            todo.push(parse_ref(&r)?);
        }
        kept.insert(key);
    }

    let mut out_components = Map::new();
    for (section, entries) in components {
        let Some(entries) = entries.as_object() else {
            continue;
        };
        let chosen: Map<String, Value> = entries
            .iter()
            .filter(|(name, _)| kept.contains(&(section.clone(), (*name).clone())))
            .map(|(name, v)| (name.clone(), v.clone()))
            .collect();
        if !chosen.is_empty() {
            out_components.insert(section.clone(), Value::Object(chosen));
        }
    }

    let mut doc = Map::new();
    for key in ["openapi", "info"] {
        if let Some(v) = full.get(key) {
            doc.insert(key.to_owned(), v.clone());
        }
    }
    doc.insert(
        "x-actuator-subset".to_owned(),
        json!({
            "description": "A subset of OpenAI's OpenAPI description: the root schemas below and \
                            every component they $ref, copied unchanged. Made by `cargo xtask \
                            specs`; origin, checksums and licence in specs/SOURCES.md.",
            "source": source,
            "roots": roots,
        }),
    );
    doc.insert("components".to_owned(), Value::Object(out_components));
    Ok(Value::Object(doc))
}

/// Every `$ref` string under `value`.
fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => collect_refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// `#/components/<section>/<name>` as its two parts (JSON-pointer escapes undone); any other
/// reference is an error, since the subset could not resolve it.
fn parse_ref(r: &str) -> Result<(String, String), String> {
    let unescape = |s: &str| s.replace("~1", "/").replace("~0", "~");
    let parts: Vec<&str> = r
        .strip_prefix("#/components/")
        .map(|rest| rest.split('/').collect())
        .unwrap_or_default();
    match parts.as_slice() {
        [section, name] => Ok((unescape(section), unescape(name))),
        _ => Err(format!(
            "cannot keep the reference {r}: only #/components/<section>/<name> is supported"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn keeps_the_roots_and_what_they_reference_in_file_order() {
        let full = json!({
            "openapi": "3.1.0",
            "info": {"title": "t", "version": "1"},
            "paths": {"/x": {}},
            "components": {
                "schemas": {
                    "A": {"$ref": "#/components/schemas/B"},
                    "B": {"properties": {"c": {"items": {"$ref": "#/components/schemas/C~1D"}}}},
                    "C/D": {"type": "string"},
                    "Unused": {"type": "integer"},
                    "Root": {"anyOf": [{"$ref": "#/components/schemas/A"}, {"$ref": "#/components/schemas/Root"}]}
                },
                "parameters": {"P": {"name": "p"}}
            }
        });
        let doc = extract(&full, &["Root".to_owned()], "full.json").unwrap();
        let names: Vec<&String> = doc["components"]["schemas"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(names, ["A", "B", "C/D", "Root"]);
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["info"]["title"], "t");
        assert!(doc.get("paths").is_none());
        assert!(doc["components"].get("parameters").is_none());
        assert_eq!(
            doc["components"]["schemas"]["B"],
            full["components"]["schemas"]["B"]
        );
    }

    #[test]
    fn an_unknown_root_or_an_outside_reference_is_an_error() {
        let full = json!({"components": {"schemas": {"A": {"$ref": "other.json#/A"}}}});
        assert!(extract(&full, &["Missing".to_owned()], "f").is_err());
        assert!(extract(&full, &["A".to_owned()], "f").is_err());
    }
}
