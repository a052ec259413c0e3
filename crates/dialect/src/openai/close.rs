//! Strict mode's objects: closed with `"additionalProperties": false`, every property
//! required, optional ones made nullable so that `null` can stand for "not given".

use serde_json::{Map, Value, json};

use super::{MAX_OBJECT_NESTING, Strict};
use crate::report::ChangeKind;
use crate::schema::{accepts_null, type_names};
use crate::walk::{At, child};

impl Strict<'_> {
    /// Strict mode needs every object closed and every property required: optional properties
    /// become nullable.
    pub(super) fn close_object(&mut self, out: &mut Map<String, Value>, place: &At) {
        let (path, nesting) = (place.path.as_str(), place.objects);
        let is_object = type_names(out.get("type"), "object") || out.contains_key("properties");
        if !is_object {
            return;
        }
        if nesting > MAX_OBJECT_NESTING && !self.nesting_reported {
            self.nesting_reported = true;
            let what =
                format!("objects are nested more than {MAX_OBJECT_NESTING} levels deep here");
            self.block(path, &what);
        }
        if !matches!(out.get("properties"), Some(Value::Object(_))) {
            // An `additionalProperties` other than `false` is reported where it is.
            if !out.contains_key("additionalProperties") {
                self.block(path, "this object lists no properties and accepts any");
            }
            return;
        }
        let required: Vec<String> = match out.get("required") {
            Some(Value::Array(names)) => names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(props)) = out.get_mut("properties") else {
            return;
        };
        let mut all = Vec::with_capacity(props.len());
        let mut changes = Vec::new();
        for (name, sub) in props.iter_mut() {
            all.push(Value::String(name.clone()));
            if required.contains(name) {
                continue;
            }
            let at = child(&child(path, "properties"), name);
            if accepts_null(self.root, sub) {
                changes.push((
                    at,
                    ChangeKind::MadeRequired,
                    format!(
                        "optional property '{name}' already accepts null; strict mode lists it \
                         in required, and null stands for \"not given\""
                    ),
                ));
            } else {
                make_nullable(sub);
                changes.push((
                    at,
                    ChangeKind::MadeNullable,
                    format!(
                        "optional property '{name}' is required in strict mode, so it now also \
                         accepts null; strip_strict_nulls turns a null back into \"not given\""
                    ),
                ));
            }
        }
        for name in &required {
            if !props.contains_key(name) {
                changes.push((
                    child(path, "required"),
                    ChangeKind::Invalid,
                    format!("required names '{name}', which is not a property; dropped"),
                ));
            }
        }
        for (at, kind, detail) in changes {
            self.report.push(at, kind, detail);
        }
        out.insert("required".into(), Value::Array(all));
        if out.get("additionalProperties") != Some(&Value::Bool(false)) {
            if matches!(out.get("additionalProperties"), None | Some(Value::Null)) {
                self.report.push(
                    path,
                    ChangeKind::Closed,
                    "object closed with additionalProperties: false, as strict mode requires",
                );
            }
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
}

/// Makes a schema accept `null` as well: `null` joins a simple `type` (and its `enum`), or an
/// `anyOf`; anything else is wrapped as `anyOf: [schema, {"type": "null"}]`.
fn make_nullable(schema: &mut Value) {
    let m = match schema {
        Value::Object(m) => m,
        Value::Bool(false) => {
            *schema = json!({"type": "null"});
            return;
        }
        _ => return,
    };
    let composite = ["anyOf", "oneOf", "allOf", "$ref", "const"]
        .iter()
        .any(|k| m.contains_key(*k));
    if !composite {
        match m.get_mut("type") {
            Some(Value::String(t)) => {
                if t != "null" {
                    let t = std::mem::take(t);
                    m.insert("type".into(), json!([t, "null"]));
                }
                add_null_to_enum(m);
                return;
            }
            Some(Value::Array(types)) if types.iter().all(Value::is_string) => {
                if !types.contains(&json!("null")) {
                    types.push(json!("null"));
                }
                add_null_to_enum(m);
                return;
            }
            _ => {}
        }
    }
    let only_any_of = m.contains_key("anyOf")
        && m.keys()
            .all(|k| k == "anyOf" || k == "description" || k == "title");
    if only_any_of && let Some(Value::Array(branches)) = m.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return;
    }
    let mut outer = Map::new();
    let mut inner = Map::new();
    for (k, v) in std::mem::take(m) {
        if k == "description" || k == "title" {
            outer.insert(k, v);
        } else {
            inner.insert(k, v);
        }
    }
    let mut wrapped = Map::new();
    wrapped.insert(
        "anyOf".into(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    wrapped.extend(outer);
    *m = wrapped;
}

fn add_null_to_enum(m: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = m.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
