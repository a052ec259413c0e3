//! OpenAI chat-completions function tools in strict mode (Structured Outputs).

use serde_json::{Map, Value, json};

use actuator_tool_core::ToolInfo;

use crate::base::resolve_ref;
use crate::report::{ChangeKind, DialectReport, Rendered};
use crate::schema::{append_description, hint, merge_all_of, merged, type_names};
use crate::walk::{self, At, Rewrite, child};

mod close;

/// The string formats strict mode supports.
const FORMATS: &[&str] = &[
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

/// Keywords kept as they are (after their subschemas are rewritten).
const KEPT: &[&str] = &[
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
    "$ref",
];

/// Strict mode's documented limits.
const MAX_PROPERTIES: usize = 5000;
const MAX_OBJECT_NESTING: usize = 10;
const MAX_ENUM_VALUES: usize = 1000;
/// The characters of every property name, enum value and const value together.
const MAX_TEXT: usize = 120_000;
/// Past this many values, one enum's strings may total at most [`MAX_LONG_ENUM_TEXT`].
const LONG_ENUM: usize = 250;
const MAX_LONG_ENUM_TEXT: usize = 15_000;

pub(super) fn render(info: &ToolInfo) -> Rendered {
    let mut schema = info.parameters.to_value();
    // Rejected at the top level in either mode: removed before anything else.
    let mut top = DialectReport::default();
    crate::top::plain(&mut schema, "OpenAI", crate::top::OPENAI, &mut top);
    let schema = schema;
    let mut strict = Strict {
        root: &schema,
        report: DialectReport::default(),
        blockers: DialectReport::default(),
        properties: 0,
        enum_values: 0,
        text: 0,
        nesting_reported: false,
        inlining: Vec::new(),
    };
    let rewritten = walk::rewrite(&mut strict, &schema, &At::root());
    // Past a documented limit strict mode rejects the whole request.
    if strict.properties > MAX_PROPERTIES {
        let what = format!(
            "the schema has {} object properties (strict mode allows {MAX_PROPERTIES})",
            strict.properties
        );
        strict.block("", &what);
    }
    if strict.enum_values > MAX_ENUM_VALUES {
        let what = format!(
            "the schema has {} enum values (strict mode allows {MAX_ENUM_VALUES})",
            strict.enum_values
        );
        strict.block("", &what);
    }
    if strict.text > MAX_TEXT {
        let what = format!(
            "its property names, enum and const values total {} characters (strict mode \
             allows {MAX_TEXT})",
            strict.text
        );
        strict.block("", &what);
    }
    let mut report = top;
    let (parameters, is_strict) = if strict.blockers.is_empty() {
        report.changes.extend(strict.report.changes);
        (rewritten, true)
    } else {
        // The schema goes out unchanged: only what blocks strict mode, and what is malformed,
        // is worth reporting.
        report.changes.extend(strict.blockers.changes);
        for change in strict.report.of_kind(ChangeKind::Invalid) {
            let problem = change
                .detail
                .rsplit_once("; ")
                .map_or(change.detail.as_str(), |(problem, _)| problem);
            report.push(
                change.path.clone(),
                change.kind,
                format!("{problem}; sent unchanged (strict mode is off)"),
            );
        }
        (schema.clone(), false)
    };
    let tool = json!({
        "type": "function",
        "function": {
            "name": info.name,
            "description": info.description,
            "parameters": parameters,
            "strict": is_strict,
        }
    });
    Rendered { tool, report }
}

struct Strict<'a> {
    /// The input schema, for `$ref` resolution.
    root: &'a Value,
    report: DialectReport,
    /// What makes strict mode impossible; when not empty the tool falls back to non-strict.
    blockers: DialectReport,
    properties: usize,
    enum_values: usize,
    /// Characters of property names, enum and const values (strict mode's string limit).
    text: usize,
    nesting_reported: bool,
    /// The references being inlined, outermost first.
    inlining: Vec<String>,
}

impl Rewrite for Strict<'_> {
    const PROVIDER: &'static str = "strict mode";
    const FALLBACK: &'static str = "rendered as is";

    fn report(&mut self) -> &mut DialectReport {
        &mut self.report
    }

    fn fallback(&self, schema: &Value) -> Value {
        schema.clone()
    }

    fn any(&self) -> Value {
        Value::Bool(true)
    }

    fn boolean(&mut self, schema: &Value, at: &At) -> Value {
        if schema == &Value::Bool(true) {
            self.block(&at.path, "this schema (`true`) accepts any JSON value");
        }
        schema.clone()
    }

    /// Rewrites one schema object; `place.objects` counts the objects around it.
    fn object(&mut self, m: &Map<String, Value>, place: &At) -> Value {
        if let Some(value) = self.inline_ref_with_siblings(m, place) {
            return value;
        }
        if let Some(single) = merge_all_of(m) {
            self.report.push(
                place.keyword("allOf"),
                ChangeKind::Rewritten,
                "the allOf was merged into its schema (strict mode has no allOf)",
            );
            return self.object(&single, &place.again());
        }

        let is_string = type_names(m.get("type"), "string");
        let mut out = Map::new();
        let mut hints = Vec::new();
        for (key, val) in m {
            let at = place.keyword(key);
            match key.as_str() {
                "properties" => {
                    if let Value::Object(props) = val {
                        self.properties += props.len();
                        self.text += props.keys().map(|k| k.chars().count()).sum::<usize>();
                    }
                    let Some(rewritten) = walk::rewrite_named(self, val, place, key) else {
                        continue;
                    };
                    out.insert(key.clone(), Value::Object(rewritten));
                    // Placeholders keep `required` and `additionalProperties` next to the
                    // properties; `close_object` fills them in.
                    out.entry("required").or_insert(Value::Null);
                    out.entry("additionalProperties").or_insert(Value::Null);
                }
                "required" => match val {
                    Value::Array(names) if names.iter().all(Value::is_string) => {
                        out.insert(key.clone(), val.clone());
                    }
                    _ => self.invalid(&at, "\"required\" must be an array of strings; dropped"),
                },
                "additionalProperties" => match val {
                    Value::Bool(false) => {
                        out.insert(key.clone(), val.clone());
                    }
                    Value::Bool(true) => {
                        self.block(&at, "this object accepts properties it does not list");
                        out.insert(key.clone(), val.clone());
                    }
                    _ => {
                        self.block(
                            &at,
                            "this object is a map (additionalProperties with a schema)",
                        );
                        out.insert(key.clone(), val.clone());
                    }
                },
                "patternProperties" => {
                    self.block(&at, "this object accepts properties by pattern");
                }
                "items" | "prefixItems" => walk::rewrite_items(self, m, key, place, &mut out),
                "anyOf" | "oneOf" => {
                    if key == "oneOf" && m.contains_key("anyOf") && val.is_array() {
                        self.report.push(
                            &at,
                            ChangeKind::Dropped,
                            "strict mode has no oneOf and this schema already has an anyOf; \
                             the oneOf is enforced by Actuator's validation only",
                        );
                        continue;
                    }
                    let Some(branches) = walk::rewrite_indexed(self, val, place, key) else {
                        continue;
                    };
                    if key == "oneOf" {
                        self.report.push(
                            &at,
                            ChangeKind::Rewritten,
                            "oneOf became anyOf (strict mode has no oneOf); exclusivity is \
                             enforced by Actuator's validation",
                        );
                    }
                    out.insert("anyOf".into(), Value::Array(branches));
                }
                "$defs" | "definitions" => {
                    if let Some(rewritten) = walk::rewrite_named(self, val, place, key) {
                        out.insert(key.clone(), Value::Object(rewritten));
                    }
                }
                "format" => match val.as_str() {
                    Some(f) if FORMATS.contains(&f) => {
                        out.insert(key.clone(), val.clone());
                    }
                    Some(f) if is_string => {
                        hints.extend(hint(key, val));
                        self.report.push(
                            &at,
                            ChangeKind::MovedToDescription,
                            format!("format '{f}' is not supported by strict mode"),
                        );
                    }
                    Some(f) => self.report.push(
                        &at,
                        ChangeKind::Dropped,
                        format!("format '{f}' is not supported by strict mode"),
                    ),
                    None => self.invalid(&at, "\"format\" must be a string; dropped"),
                },
                "enum" => {
                    if let Value::Array(values) = val {
                        self.enum_values += values.len();
                        let chars: usize = values.iter().map(string_chars).sum();
                        self.text += chars;
                        if values.len() > LONG_ENUM && chars > MAX_LONG_ENUM_TEXT {
                            let what = format!(
                                "this enum has {} values totalling {chars} characters (past \
                                 {LONG_ENUM} values strict mode allows {MAX_LONG_ENUM_TEXT})",
                                values.len()
                            );
                            self.block(&at, &what);
                        }
                        if let Some(stray) = values.iter().find(|v| !fits_type(m.get("type"), v)) {
                            // OpenAI rejects the whole request: "enum value … does not
                            // validate against {type}".
                            self.block(
                                &at,
                                &format!("the enum value {stray} is not of the schema's type"),
                            );
                        }
                        out.insert(key.clone(), val.clone());
                    } else {
                        self.invalid(&at, "\"enum\" must be an array; dropped");
                    }
                }
                "type" => match val {
                    Value::String(_) => {
                        out.insert(key.clone(), val.clone());
                    }
                    Value::Array(types) if types.iter().all(Value::is_string) => {
                        out.insert(key.clone(), val.clone());
                    }
                    _ => self.invalid(
                        &at,
                        "\"type\" must be a string or an array of strings; dropped",
                    ),
                },
                "description" | "title" => {
                    if val.is_string() {
                        out.insert(key.clone(), val.clone());
                    } else {
                        self.invalid(&at, &format!("\"{key}\" must be a string; dropped"));
                    }
                }
                "const" => {
                    self.text += string_chars(val);
                    out.insert(key.clone(), val.clone());
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), val.clone());
                }
                "default" | "examples" | "example" | "minLength" | "maxLength" | "uniqueItems" => {
                    match hint(key, val) {
                        Some(h) => {
                            hints.push(h);
                            self.report.push(
                                &at,
                                ChangeKind::MovedToDescription,
                                format!("\"{key}\" is not supported by strict mode"),
                            );
                        }
                        None => self.dropped(&at, key),
                    }
                }
                _ => self.dropped(&at, key),
            }
        }
        append_description(&mut out, &hints);
        if type_names(out.get("type"), "array") && !out.contains_key("items") {
            // Strict mode: "array schema missing items".
            self.block(&place.path, "this array does not say what its items are");
        }
        self.close_object(&mut out, place);
        if !is_typed(&out) {
            self.block(
                &place.path,
                "this schema has no type and accepts any JSON value",
            );
        }
        Value::Object(out)
    }
}

impl Strict<'_> {
    fn block(&mut self, path: &str, what: &str) {
        self.blockers.push(
            path,
            ChangeKind::Unsupported,
            format!(
                "{what}, which strict mode cannot express; the tool is rendered with \
                 \"strict\": false and its schema unchanged"
            ),
        );
    }

    /// Strict mode rejects `$ref` with sibling keywords: the definition is inlined one level
    /// with the siblings on top. `None` when there is nothing to do.
    fn inline_ref_with_siblings(&mut self, m: &Map<String, Value>, place: &At) -> Option<Value> {
        let path = place.path.as_str();
        let reference = m.get("$ref")?;
        let at = place.keyword("$ref");
        let Some(reference) = reference.as_str() else {
            self.invalid(&at, "\"$ref\" must be a string; rendered as is");
            return None;
        };
        let target = resolve_ref(self.root, reference);
        if target.is_none() {
            self.invalid(
                &at,
                &format!("'{reference}' does not point into this schema; rendered as is"),
            );
            return None;
        }
        if m.len() == 1 {
            return None;
        }
        let Some((Value::Object(def), _)) = target else {
            return None;
        };
        if self.inlining.iter().any(|r| r == reference) {
            // Inlining a definition inside itself would never end: keep the bare $ref.
            for key in m.keys().filter(|k| *k != "$ref") {
                self.report.push(
                    child(path, key),
                    ChangeKind::Dropped,
                    format!(
                        "strict mode allows no keywords next to $ref, and '{reference}' cannot \
                         be inlined inside itself"
                    ),
                );
            }
            return Some(json!({ "$ref": reference }));
        }
        self.report.push(
            &at,
            ChangeKind::Inlined,
            format!("'{reference}' was inlined here: strict mode allows no keywords next to $ref"),
        );
        let mut inlined = merged(def, m, "$ref");
        // Definitions stay at the root, where every reference points.
        inlined.shift_remove("$defs");
        inlined.shift_remove("definitions");
        self.inlining.push(reference.to_owned());
        let out = self.object(&inlined, &place.again());
        self.inlining.pop();
        Some(out)
    }
}

/// The characters of a string value (strict mode counts only strings toward its limits).
fn string_chars(value: &Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

/// Whether `value` is of one of the types `ty` declares (any value when it declares none;
/// `null` always, as strict mode adds it to the enum of a nullable property).
fn fits_type(ty: Option<&Value>, value: &Value) -> bool {
    let names: Vec<&str> = match ty {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    let fits = |t: &str| match value {
        Value::Null => true,
        Value::Bool(_) => t == "boolean",
        Value::Number(n) => t == "number" || (t == "integer" && (n.is_i64() || n.is_u64())),
        Value::String(_) => t == "string",
        Value::Array(_) => t == "array",
        Value::Object(_) => t == "object",
    };
    names.iter().any(|t| fits(t))
}

/// Whether a rewritten schema says what values it takes (strict mode rejects untyped schemas).
fn is_typed(m: &Map<String, Value>) -> bool {
    [
        "type",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "properties",
        "items",
    ]
    .iter()
    .any(|k| m.contains_key(*k))
}
