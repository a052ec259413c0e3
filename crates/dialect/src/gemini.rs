//! Gemini function declarations: the OpenAPI 3.0 schema subset.

use serde_json::{Map, Number, Value, json};

use crate::report::{ChangeKind, DialectReport, Rendered};
use crate::schema::{
    MAX_DEPTH, append_description, child, hint, index, is_non_assertion, join_values, json_kind,
    merge_all_of, merged, ref_name, resolve_ref, tuple_items, tuple_note, type_names,
};
use actuator_tool_core::ToolInfo;

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

pub(super) fn render(info: &ToolInfo) -> Rendered {
    let schema = info.parameters.to_value();
    let mut gemini = Gemini {
        root: &schema,
        report: DialectReport::default(),
        stack: Vec::new(),
        expansions: 0,
    };
    if !gemini_name_ok(&info.name) {
        gemini.report.push(
            "",
            ChangeKind::Unsupported,
            format!(
                "Gemini function names must start with a letter or an underscore; '{}' is sent \
                 as is",
                info.name
            ),
        );
    }
    for name in info.parameters.names() {
        if !gemini_name_ok(name) || name.contains(['-', '.']) {
            gemini.report.push(
                child("/properties", name),
                ChangeKind::Unsupported,
                format!(
                    "Gemini parameter names must match ^[a-zA-Z_][a-zA-Z0-9_]*$; '{name}' is sent \
                     as is"
                ),
            );
        }
    }
    let mut tool = Map::new();
    tool.insert("name".into(), json!(info.name));
    tool.insert("description".into(), json!(info.description));
    // Gemini rejects an object schema with no properties; a tool without parameters leaves
    // `parameters` out, as its API documents.
    if !info.parameters.properties.is_empty() {
        let parameters = gemini.schema(&schema, "", 0);
        tool.insert("parameters".into(), parameters);
    }
    Rendered {
        tool: Value::Object(tool),
        report: gemini.report,
    }
}

fn gemini_name_ok(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

struct Gemini<'a> {
    /// The input schema, for `$ref` resolution.
    root: &'a Value,
    report: DialectReport,
    /// The references being inlined, outermost first.
    stack: Vec<String>,
    expansions: usize,
}

impl Gemini<'_> {
    fn schema(&mut self, v: &Value, path: &str, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            self.report.push(
                path,
                ChangeKind::Invalid,
                "nested too deeply to follow; rendered as an empty schema",
            );
            return json!({});
        }
        match v {
            Value::Object(m) => self.object(m, path, depth),
            Value::Bool(true) => {
                self.report.push(
                    path,
                    ChangeKind::Unsupported,
                    "Gemini has no schema for \"any JSON value\"; rendered as an empty schema",
                );
                json!({})
            }
            Value::Bool(false) => {
                self.report.push(
                    path,
                    ChangeKind::Unsupported,
                    "Gemini has no schema that accepts nothing; rendered as an empty schema",
                );
                json!({})
            }
            other => {
                self.report.push(
                    path,
                    ChangeKind::Invalid,
                    format!(
                        "a schema must be an object or a boolean, found {}; rendered as an \
                         empty schema",
                        json_kind(other)
                    ),
                );
                json!({})
            }
        }
    }

    fn object(&mut self, m: &Map<String, Value>, path: &str, depth: usize) -> Value {
        if m.contains_key("$ref") {
            return self.reference(m, path, depth);
        }
        if let Some(single) = merge_all_of(m) {
            self.report.push(
                child(path, "allOf"),
                ChangeKind::Rewritten,
                "the allOf was merged into its schema (Gemini has no allOf)",
            );
            return self.object(&single, path, depth + 1);
        }

        let ty = first_type(m);
        let mut out = Map::new();
        let mut hints = Vec::new();
        let mut nullable = false;
        // The one non-null branch of an anyOf/oneOf, merged into this schema at the end.
        let mut single_branch = None;
        for (key, val) in m {
            let at = child(path, key);
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
                        if is_null_only(branch) {
                            nullable = true;
                            self.report.push(
                                index(&at, i),
                                ChangeKind::Rewritten,
                                "the null alternative became nullable: true",
                            );
                        } else {
                            kept.push(self.schema(branch, &index(&at, i), depth + 1));
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
                    let Value::Object(props) = val else {
                        self.invalid(&at, "\"properties\" must be an object; dropped");
                        continue;
                    };
                    let mut rewritten = Map::new();
                    for (name, sub) in props {
                        let sub = self.schema(sub, &child(&at, name), depth + 1);
                        rewritten.insert(name.clone(), sub);
                    }
                    out.insert(key.clone(), Value::Object(rewritten));
                }
                "required" => match val {
                    Value::Array(names) if names.iter().all(Value::is_string) => {
                        out.insert(key.clone(), val.clone());
                    }
                    _ => self.invalid(&at, "\"required\" must be an array of strings; dropped"),
                },
                "items" => match val {
                    Value::Array(_) if !m.contains_key("prefixItems") => {
                        let items = self.tuple(val, None, &at, depth);
                        out.insert(key.clone(), items);
                    }
                    Value::Object(_) | Value::Bool(_) if !m.contains_key("prefixItems") => {
                        let items = self.schema(val, &at, depth + 1);
                        out.insert(key.clone(), items);
                    }
                    Value::Object(_) | Value::Bool(_) | Value::Array(_) => {}
                    _ => self.invalid(&at, "\"items\" must be a schema; dropped"),
                },
                "prefixItems" => {
                    let items = self.tuple(val, m.get("items"), &at, depth);
                    out.insert("items".into(), items);
                }
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
        self.check_required(&mut out, path);
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

    /// Gemini rejects `required` names that are not properties: they are dropped.
    fn check_required(&mut self, out: &mut Map<String, Value>, path: &str) {
        let Some(Value::Object(props)) = out.get("properties") else {
            return;
        };
        let Some(Value::Array(required)) = out.get("required") else {
            return;
        };
        let (known, unknown): (Vec<Value>, Vec<Value>) = required
            .iter()
            .cloned()
            .partition(|name| name.as_str().is_some_and(|n| props.contains_key(n)));
        for name in &unknown {
            self.invalid(
                &child(path, "required"),
                &format!(
                    "required names '{}', which is not a property; dropped",
                    name.as_str().unwrap_or_default()
                ),
            );
        }
        if !unknown.is_empty() {
            out.insert("required".into(), Value::Array(known));
        }
    }

    /// `type`: a list with `null` becomes the other type plus `nullable: true`; a list of
    /// several types becomes an `anyOf`.
    fn ty(
        &mut self,
        val: &Value,
        at: &str,
        m: &Map<String, Value>,
        out: &mut Map<String, Value>,
        nullable: &mut bool,
    ) {
        match val {
            Value::String(_) => {
                out.insert("type".into(), val.clone());
            }
            Value::Array(types) if types.iter().all(Value::is_string) => {
                let others: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                if others.len() < types.len() {
                    *nullable = true;
                    self.report.push(
                        at,
                        ChangeKind::Rewritten,
                        "a type list with \"null\" became nullable: true",
                    );
                }
                match others.as_slice() {
                    [] => {
                        out.insert("type".into(), json!("null"));
                    }
                    [one] => {
                        out.insert("type".into(), (*one).clone());
                    }
                    several if !m.contains_key("anyOf") && !m.contains_key("oneOf") => {
                        let branches: Vec<Value> =
                            several.iter().map(|t| json!({ "type": t })).collect();
                        out.insert("anyOf".into(), Value::Array(branches));
                        self.report.push(
                            at,
                            ChangeKind::Rewritten,
                            "a list of types became an anyOf of one type each",
                        );
                    }
                    _ => self.report.push(
                        at,
                        ChangeKind::Dropped,
                        "a list of types next to anyOf/oneOf cannot be expressed; the type is \
                         enforced by Actuator's validation only",
                    ),
                }
            }
            _ => self.invalid(
                at,
                "\"type\" must be a string or an array of strings; dropped",
            ),
        }
    }

    /// `enum`: `null` becomes `nullable`; string values stay; any other value moves the whole
    /// list into the description (Gemini enums hold strings only).
    fn enumeration(
        &mut self,
        val: &Value,
        at: &str,
        m: &Map<String, Value>,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
        nullable: &mut bool,
    ) {
        let Value::Array(values) = val else {
            self.invalid(at, "\"enum\" must be an array; dropped");
            return;
        };
        let others: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        if others.len() < values.len() && !*nullable {
            *nullable = true;
            if !type_names(m.get("type"), "null") {
                self.report.push(
                    at,
                    ChangeKind::Rewritten,
                    "null among the enum values became nullable: true",
                );
            }
        }
        if others.is_empty() {
            return;
        }
        if others.iter().all(Value::is_string) {
            if !m.contains_key("type") {
                out.insert("type".into(), json!("string"));
            }
            out.insert("enum".into(), Value::Array(others));
        } else {
            hints.push(format!("Allowed values: {}.", join_values(&others)));
            self.report.push(
                at,
                ChangeKind::MovedToDescription,
                "Gemini enums hold strings only; the allowed values are listed in the \
                 description",
            );
        }
    }

    /// Exclusive bounds: exact `minimum`/`maximum` for integers, a description otherwise.
    fn exclusive(
        &mut self,
        key: &str,
        val: &Value,
        at: &str,
        ty: Option<&str>,
        out: &mut Map<String, Value>,
        hints: &mut Vec<String>,
    ) {
        let Some(bound) = val.as_f64() else {
            self.invalid(at, &format!("\"{key}\" must be a number; dropped"));
            return;
        };
        let lower = key == "exclusiveMinimum";
        let inclusive = if lower {
            bound.floor() + 1.0
        } else {
            bound.ceil() - 1.0
        };
        // Only exact for integers within the range f64 represents exactly.
        if ty == Some("integer") && inclusive.is_finite() && inclusive.abs() < 9.0e15 {
            let inclusive = inclusive as i64;
            let target = if lower { "minimum" } else { "maximum" };
            set_bound(out, target, Number::from(inclusive));
            self.report.push(
                at,
                ChangeKind::Rewritten,
                format!("{key} {val} became {target} {inclusive} (Gemini has no {key})"),
            );
        } else {
            hints.extend(hint(key, val));
            self.report.push(
                at,
                ChangeKind::MovedToDescription,
                format!("\"{key}\" is not supported by Gemini"),
            );
        }
    }

    /// `additionalProperties`: Gemini has none. `false` is simply dropped; a map's value
    /// schema is described in words.
    fn additional(&mut self, val: &Value, at: &str, hints: &mut Vec<String>) {
        match val {
            Value::Bool(false) => self.report.push(
                at,
                ChangeKind::Dropped,
                "Gemini has no additionalProperties; unknown properties are rejected by \
                 Actuator's validation only",
            ),
            Value::Bool(true) => {
                hints.push("Other properties are allowed.".to_owned());
                self.report.push(
                    at,
                    ChangeKind::Unsupported,
                    "Gemini cannot describe open objects; rendered without \
                     additionalProperties, with a note in the description",
                );
            }
            schema => {
                hints.push(format!(
                    "Any property names are allowed; each value must match the JSON Schema {schema}."
                ));
                self.report.push(
                    at,
                    ChangeKind::Unsupported,
                    "Gemini cannot describe maps; rendered as an object without properties, \
                     with the value schema in the description",
                );
            }
        }
    }

    /// `$ref`: the definition is inlined (the siblings on top), down to
    /// [`GEMINI_MAX_REF_DEPTH`] nested uses of the same definition.
    fn reference(&mut self, m: &Map<String, Value>, path: &str, depth: usize) -> Value {
        let at = child(path, "$ref");
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
            return self.object(&siblings, path, depth + 1);
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
        let out = match target {
            // Changes inside the definition are reported at the definition's own path.
            Value::Object(def) => self.object(&merged(def, &siblings, ""), &target_path, depth + 1),
            other => self.schema(other, &target_path, depth + 1),
        };
        self.stack.pop();
        out
    }

    /// Tuples become arrays whose items may be any of the element schemas.
    fn tuple(&mut self, elements: &Value, rest: Option<&Value>, at: &str, depth: usize) -> Value {
        match tuple_items(elements, rest, at, |s, path| {
            self.schema(s, path, depth + 1)
        }) {
            Some(items) => {
                self.report
                    .push(at, ChangeKind::Rewritten, tuple_note("Gemini"));
                items
            }
            None => {
                self.invalid(
                    at,
                    "a tuple must be an array of schemas; rendered as any item",
                );
                json!({})
            }
        }
    }

    fn invalid(&mut self, at: &str, detail: &str) {
        self.report.push(at, ChangeKind::Invalid, detail);
    }

    fn dropped(&mut self, at: &str, key: &str) {
        let detail = if is_non_assertion(key) {
            format!("\"{key}\" is not supported by Gemini")
        } else {
            format!(
                "\"{key}\" is not supported by Gemini; it is enforced by Actuator's validation \
                 only"
            )
        };
        self.report.push(at, ChangeKind::Dropped, detail);
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

/// Sets `minimum`/`maximum`, keeping the tighter bound when one is already set.
fn set_bound(out: &mut Map<String, Value>, key: &str, n: Number) {
    let tighter = match (out.get(key).and_then(Value::as_f64), n.as_f64()) {
        (Some(old), Some(new)) => {
            if key == "minimum" {
                new > old
            } else {
                new < old
            }
        }
        _ => true,
    };
    if tighter {
        out.insert(key.into(), Value::Number(n));
    }
}
