//! Gemini's handling of the keywords it has no direct equivalent for: `type` lists, enums of
//! non-strings, exclusive bounds, `additionalProperties`, and `required` names that are not
//! properties.

use serde_json::{Map, Number, Value, json};

use super::Gemini;
use crate::report::ChangeKind;
use crate::schema::{hint, join_values, type_names};
use crate::walk::{Rewrite, child};

impl Gemini<'_> {
    /// Gemini rejects `required` names that are not properties (and `required` on a schema
    /// with no properties at all): they are dropped.
    pub(super) fn check_required(&mut self, out: &mut Map<String, Value>, path: &str) {
        let Some(Value::Object(props)) = out.get("properties") else {
            if out.remove("required").is_some() {
                self.report.push(
                    child(path, "required"),
                    ChangeKind::Dropped,
                    "Gemini rejects \"required\" on a schema without properties; it is \
                     enforced by Actuator's validation only",
                );
            }
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

    /// The shapes Gemini rejects with a 400 for the whole request, repaired: an array without
    /// `items` gets an empty one, `properties` on
    /// a schema whose type is not `object` are dropped (its API: "only allowed for OBJECT
    /// type"), and an `object` without properties (a map, `{"type": "object"}` as an array's
    /// items) loses its type (Gemini: "properties should be non-empty for OBJECT type"), so it
    /// accepts any value, with "A JSON object." in its description; Actuator's validation
    /// still requires an object.
    pub(super) fn check_object_shape(&mut self, out: &mut Map<String, Value>, path: &str) {
        let ty = out.get("type").and_then(Value::as_str).map(str::to_owned);
        if ty.as_deref() == Some("array") && !out.contains_key("items") {
            // Gemini: "items: missing field". Items of any kind, as the schema said.
            out.insert("items".into(), Value::Object(Map::new()));
            self.report.push(
                child(path, "items"),
                ChangeKind::Rewritten,
                "Gemini rejects an array schema without items; an empty items schema (any \
                 value) was added",
            );
        }
        let has_properties =
            matches!(out.get("properties"), Some(Value::Object(p)) if !p.is_empty());
        match ty.as_deref() {
            Some("object") if !has_properties => {
                out.remove("type");
                out.remove("properties");
                self.report.push(
                    child(path, "type"),
                    ChangeKind::Rewritten,
                    "Gemini rejects an object schema without properties; rendered without a \
                     type, the object is enforced by Actuator's validation",
                );
                super::append_description(out, &["A JSON object.".to_owned()]);
            }
            Some(other) if other != "object" && out.contains_key("properties") => {
                out.remove("properties");
                out.remove("required");
                self.report.push(
                    child(path, "properties"),
                    ChangeKind::Dropped,
                    format!(
                        "Gemini allows \"properties\" (and \"required\") only on objects, and \
                         this is {other}"
                    ),
                );
            }
            _ => {}
        }
    }

    /// `type`: a list with `null` becomes the other type plus `nullable: true`; a list of
    /// several types becomes an `anyOf`.
    pub(super) fn ty(
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
    pub(super) fn enumeration(
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
        let declared = super::first_type(m);
        let on_strings = matches!(declared, None | Some("string"));
        // Gemini rejects an empty string among enum values ("enum[N]: cannot be empty").
        let has_empty = others.iter().any(|v| v.as_str() == Some(""));
        if on_strings && others.iter().all(Value::is_string) && !has_empty {
            if !m.contains_key("type") {
                out.insert("type".into(), json!("string"));
            }
            out.insert("enum".into(), Value::Array(others));
        } else {
            hints.push(format!("Allowed values: {}.", join_values(&others)));
            let detail = match declared {
                _ if has_empty && others.iter().all(Value::is_string) => "Gemini rejects an \
                     empty string among enum values; the allowed values are listed in the \
                     description"
                    .to_owned(),
                Some(t) if t != "string" && others.iter().all(Value::is_string) => format!(
                    "Gemini allows enums only on strings, and this schema is {t}; the allowed \
                     values are listed in the description"
                ),
                _ => "Gemini enums hold strings only; the allowed values are listed in the \
                      description"
                    .to_owned(),
            };
            self.report.push(at, ChangeKind::MovedToDescription, detail);
        }
    }

    /// Exclusive bounds: exact `minimum`/`maximum` for integers, a description otherwise.
    pub(super) fn exclusive(
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
    pub(super) fn additional(&mut self, val: &Value, at: &str, hints: &mut Vec<String>) {
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
                    "Gemini cannot describe maps; rendered without properties, with the value \
                     schema in the description",
                );
            }
        }
    }
}

/// Sets `minimum`/`maximum`, keeping the tighter bound when one is already set.
pub(super) fn set_bound(out: &mut Map<String, Value>, key: &str, n: Number) {
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
