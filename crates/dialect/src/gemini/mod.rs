//! Gemini function declarations: the OpenAPI 3.0 schema subset.

use serde_json::{Map, Value, json};

use actuator_tool_core::ToolInfo;

use crate::base::resolve_ref;
use crate::report::{ChangeKind, DialectReport, Rendered};
use crate::schema::{append_description, hint, merge_all_of, merged, ref_name};
use crate::walk::{self, At, Rewrite};

mod keywords;
use keywords::set_bound;

/// How many times one definition may be inlined inside itself before the recursion is cut.
pub const GEMINI_MAX_REF_DEPTH: usize = 3;

/// How many `$ref`s one rendering inlines at most, whatever their nesting: a guard against
/// schemas whose inlined form would grow exponentially.
const MAX_EXPANSIONS: usize = 256;

/// Keywords kept as they are (after their subschemas are rewritten).
const KEPT: &[&str] = &[
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
];

pub(crate) fn render(info: &ToolInfo) -> Rendered {
    let schema = info.parameters.to_value();
    let mut gemini = Gemini {
        root: &schema,
        report: DialectReport::default(),
        stack: Vec::new(),
        expansions: 0,
    };
    let name = crate::names::function_name(crate::Dialect::Gemini, &info.name);
    if name != info.name {
        gemini.report.push(
            "",
            ChangeKind::Renamed,
            format!(
                "Gemini function names must match {}; '{}' is sent as '{name}' \
                 (Dialect::function_name maps a call back)",
                crate::names::GEMINI_FUNCTION.pattern,
                info.name
            ),
        );
    }
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    tool.insert("description".into(), json!(info.description));
    // Gemini rejects an object schema with no properties; a tool without parameters leaves
    // `parameters` out, as its API documents.
    if !info.parameters.properties.is_empty() {
        let parameters = walk::rewrite(&mut gemini, &schema, &At::root());
        tool.insert("parameters".into(), parameters);
    }
    Rendered {
        tool: Value::Object(tool),
        report: gemini.report,
    }
}

struct Gemini<'a> {
    /// The input schema, for `$ref` resolution.
    root: &'a Value,
    report: DialectReport,
    /// The references being inlined, outermost first.
    stack: Vec<String>,
    expansions: usize,
}

impl Rewrite for Gemini<'_> {
    const PROVIDER: &'static str = "Gemini";
    const FALLBACK: &'static str = "rendered as an empty schema";

    fn report(&mut self) -> &mut DialectReport {
        &mut self.report
    }

    fn fallback(&self, _: &Value) -> Value {
        json!({})
    }

    fn any(&self) -> Value {
        json!({})
    }

    fn boolean(&mut self, schema: &Value, at: &At) -> Value {
        let detail = if schema == &Value::Bool(true) {
            "Gemini has no schema for \"any JSON value\"; rendered as an empty schema"
        } else {
            "Gemini has no schema that accepts nothing; rendered as an empty schema"
        };
        self.report.push(&at.path, ChangeKind::Unsupported, detail);
        json!({})
    }

    fn object(&mut self, m: &Map<String, Value>, place: &At) -> Value {
        if m.contains_key("$ref") {
            return self.reference(m, place);
        }
        if let Some(single) = merge_all_of(m) {
            self.report.push(
                place.keyword("allOf"),
                ChangeKind::Rewritten,
                "the allOf was merged into its schema (Gemini has no allOf)",
            );
            return self.object(&single, &place.again());
        }

        let ty = first_type(m);
        let mut out = Map::new();
        let mut hints = Vec::new();
        let mut nullable = false;
        // The one non-null branch of an anyOf/oneOf, merged into this schema at the end.
        let mut single_branch = None;
        for (key, val) in m {
            let at = place.keyword(key);
            match key.as_str() {
                "type" => self.ty(val, &at, m, &mut out, &mut nullable),
                "anyOf" | "oneOf" => {
                    let Value::Array(branches) = val else {
                        self.invalid(&at, &format!("\"{key}\" must be an array; dropped"));
                        continue;
                    };
                    if key == "oneOf" && m.contains_key("anyOf") {
                        self.report.push(
                            &at,
                            ChangeKind::Dropped,
                            "Gemini has no oneOf and this schema already has an anyOf; the \
                             oneOf is enforced by Actuator's validation only",
                        );
                        continue;
                    }
                    if key == "oneOf" {
                        self.report.push(
                            &at,
                            ChangeKind::Rewritten,
                            "oneOf became anyOf (Gemini has no oneOf); exclusivity is enforced \
                             by Actuator's validation",
                        );
                    }
                    let mut kept = Vec::new();
                    for (i, branch) in branches.iter().enumerate() {
                        let branch_at = place.indexed(key, i);
                        if is_null_only(branch) {
                            nullable = true;
                            self.report.push(
                                branch_at.path,
                                ChangeKind::Rewritten,
                                "the null alternative became nullable: true",
                            );
                        } else {
                            kept.push(walk::rewrite(self, branch, &branch_at));
                        }
                    }
                    if kept.len() == 1 && !m.contains_key("type") {
                        single_branch = kept.pop();
                    } else if !kept.is_empty() {
                        out.insert("anyOf".into(), Value::Array(kept));
                    }
                }
                "enum" => self.enumeration(val, &at, m, &mut out, &mut hints, &mut nullable),
                "const" => match val {
                    Value::String(_) => {
                        self.report.push(
                            &at,
                            ChangeKind::Rewritten,
                            "const became a one-value enum (Gemini has no const)",
                        );
                        if !m.contains_key("type") {
                            out.insert("type".into(), json!("string"));
                        }
                        out.insert("enum".into(), json!([val]));
                    }
                    other => {
                        hints.push(format!("Must be {other}."));
                        self.report.push(
                            &at,
                            ChangeKind::MovedToDescription,
                            "Gemini has no const and its enums hold strings only",
                        );
                    }
                },
                "format" => {
                    let Some(f) = val.as_str() else {
                        self.invalid(&at, "\"format\" must be a string; dropped");
                        continue;
                    };
                    let supported = match ty {
                        Some("string") => matches!(f, "date-time" | "enum"),
                        Some("integer") => matches!(f, "int32" | "int64"),
                        Some("number") => matches!(f, "float" | "double"),
                        _ => false,
                    };
                    if supported {
                        out.insert(key.clone(), val.clone());
                    } else if matches!(ty, Some("string") | None) {
                        hints.extend(hint(key, val));
                        self.report.push(
                            &at,
                            ChangeKind::MovedToDescription,
                            format!("format '{f}' is not supported by Gemini here"),
                        );
                    } else {
                        self.report.push(
                            &at,
                            ChangeKind::Dropped,
                            format!(
                                "format '{f}' is not supported by Gemini for {}",
                                ty.unwrap_or("this type")
                            ),
                        );
                    }
                }
                "description" | "title" => {
                    if val.is_string() {
                        out.insert(key.clone(), val.clone());
                    } else {
                        self.invalid(&at, &format!("\"{key}\" must be a string; dropped"));
                    }
                }
                "properties" => {
                    if let Some(rewritten) = walk::rewrite_named(self, val, place, key) {
                        out.insert(key.clone(), Value::Object(rewritten));
                    }
                }
                "required" => match val {
                    Value::Array(names) if names.iter().all(Value::is_string) => {
                        out.insert(key.clone(), val.clone());
                    }
                    _ => self.invalid(&at, "\"required\" must be an array of strings; dropped"),
                },
                "items" | "prefixItems" => walk::rewrite_items(self, m, key, place, &mut out),
                "minimum" | "maximum" => {
                    if let Some(n) = val.as_number() {
                        set_bound(&mut out, key, n.clone());
                    } else {
                        self.invalid(&at, &format!("\"{key}\" must be a number; dropped"));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    self.exclusive(key, val, &at, ty, &mut out, &mut hints);
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), val.clone());
                }
                "nullable" => {
                    if val == &Value::Bool(true) {
                        nullable = true;
                    }
                }
                "additionalProperties" => self.additional(val, &at, &mut hints),
                "$defs" | "definitions" => self.report.push(
                    &at,
                    ChangeKind::Dropped,
                    "Gemini has no definitions: each $ref is inlined where it is used",
                ),
                "default" | "examples" | "example" | "multipleOf" | "uniqueItems" => {
                    match hint(key, val) {
                        Some(h) => {
                            hints.push(h);
                            self.report.push(
                                &at,
                                ChangeKind::MovedToDescription,
                                format!("\"{key}\" is not supported by Gemini"),
                            );
                        }
                        None => self.dropped(&at, key),
                    }
                }
                _ => self.dropped(&at, key),
            }
        }
        self.check_required(&mut out, &place.path);
        self.check_object_shape(&mut out, &place.path);
        if let Some(Value::Object(branch)) = single_branch {
            // `anyOf: [X, null]`: X itself, nullable. The outer keywords (a description) win.
            out = merged(&branch, &out, "");
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        append_description(&mut out, &hints);
        Value::Object(out)
    }
}

impl Gemini<'_> {
    /// `$ref`: the definition is inlined (the siblings on top), down to
    /// [`GEMINI_MAX_REF_DEPTH`] nested uses of the same definition.
    fn reference(&mut self, m: &Map<String, Value>, place: &At) -> Value {
        let at = place.keyword("$ref");
        let siblings = merged(&Map::new(), m, "$ref");
        let reference = m.get("$ref").and_then(Value::as_str);
        let Some((reference, target, target_path)) =
            reference.and_then(|r| resolve_ref(self.root, r).map(|(t, p)| (r, t, p)))
        else {
            let shown = m.get("$ref").map(Value::to_string).unwrap_or_default();
            self.invalid(
                &at,
                &format!("{shown} does not point into this schema; dropped (Gemini has no $ref)"),
            );
            return self.object(&siblings, &place.again());
        };
        let nested = self.stack.iter().filter(|r| *r == reference).count();
        if nested >= GEMINI_MAX_REF_DEPTH || self.expansions >= MAX_EXPANSIONS {
            let reason = if nested >= GEMINI_MAX_REF_DEPTH {
                format!("it is nested {GEMINI_MAX_REF_DEPTH} times already")
            } else {
                format!("{MAX_EXPANSIONS} references were inlined already")
            };
            self.report.push(
                &at,
                ChangeKind::RecursionCut,
                format!(
                    "'{reference}' is not inlined here because {reason}; rendered as a bare \
                     placeholder (Gemini has no $ref)"
                ),
            );
            return cut(target, &siblings, reference);
        }
        self.expansions += 1;
        self.report.push(
            &at,
            ChangeKind::Inlined,
            format!("'{reference}' was inlined (Gemini has no $ref)"),
        );
        self.stack.push(reference.to_owned());
        // Changes inside the definition are reported at the definition's own path.
        let target_at = place.jump(target_path);
        let out = match target {
            Value::Object(def) => self.object(&merged(def, &siblings, ""), &target_at),
            other => walk::rewrite(self, other, &target_at),
        };
        self.stack.pop();
        out
    }
}

/// The placeholder for a recursive reference that is not inlined: the definition's type (an
/// object when it has none) and a description that says what is missing.
fn cut(target: &Value, siblings: &Map<String, Value>, reference: &str) -> Value {
    let target = target.as_object();
    let ty = target
        .and_then(|t| match t.get("type") {
            Some(Value::String(s)) if s != "null" => Some(s.clone()),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .map(str::to_owned),
            _ => None,
        })
        .unwrap_or_else(|| "object".to_owned());
    let mut out = Map::new();
    out.insert("type".into(), Value::String(ty));
    let description = siblings
        .get("description")
        .or_else(|| target.and_then(|t| t.get("description")))
        .cloned();
    if let Some(description) = description.filter(Value::is_string) {
        out.insert("description".into(), description);
    }
    append_description(
        &mut out,
        &[format!(
            "A nested {}; its fields are not described at this depth.",
            ref_name(reference)
        )],
    );
    Value::Object(out)
}

/// The first non-null type of a schema, if it names one.
fn first_type(m: &Map<String, Value>) -> Option<&str> {
    match m.get("type")? {
        Value::String(t) => Some(t.as_str()),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

/// A branch that only admits `null`: `{"type": "null"}`, `{"const": null}`, `{"enum": [null]}`
/// (annotations aside).
fn is_null_only(schema: &Value) -> bool {
    let Some(m) = schema.as_object() else {
        return false;
    };
    let null_type = m.get("type") == Some(&json!("null"));
    let null_const = m.get("const") == Some(&Value::Null);
    let null_enum = m.get("enum") == Some(&json!([null]));
    (null_type || null_const || null_enum)
        && m.keys().all(|k| {
            matches!(
                k.as_str(),
                "type" | "const" | "enum" | "description" | "title"
            )
        })
}
