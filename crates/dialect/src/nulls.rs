//! Undoing OpenAI strict mode's one change of meaning: `null` for an optional property.

use serde_json::Value;

use crate::schema::{accepts_null, could_match};
use crate::walk::{Fuel, Step, child, index, ref_target};
use actuator_tool_core::ToolInfo;

/// Removes the `null` arguments that stand for "not given": members whose property is optional
/// in the tool's schema and whose schema does not accept `null`.
///
/// OpenAI strict mode makes every property required, so [`openai_strict`](crate::openai_strict)
/// lets optional properties take `null` instead ([`ChangeKind::MadeNullable`]). The full schema
/// that Actuator validates against does not accept that `null`; call this on the arguments
/// before validating them, and the property is simply absent, as the tool expects. Nested
/// objects are followed through `properties`, `items`, `prefixItems`, map values, local `$ref`s,
/// `allOf`, and the one `anyOf`/`oneOf` branch the value can belong to.
///
/// Returns the JSON pointers (into `args`) of the members removed. Harmless for any other
/// dialect: a `null` the schema accepts, or a required one, is left alone.
///
/// [`ChangeKind::MadeNullable`]: crate::ChangeKind::MadeNullable
///
/// ```
/// use actuator_tool_core::{ToolInfo, ToolParams};
/// use serde_json::json;
///
/// let mut params = ToolParams::default();
/// params.properties.insert("path".into(), json!({"type": "string"}));
/// params.properties.insert("limit".into(), json!({"type": "integer", "default": 10}));
/// params.required.push("path".into());
/// let info = ToolInfo::new("read", "Read a file.", params);
///
/// let mut args = json!({"path": "a.txt", "limit": null});
/// let removed = actuator_dialect::strip_strict_nulls(&info, &mut args);
/// assert_eq!(args, json!({"path": "a.txt"}));
/// assert_eq!(removed, ["/limit"]);
/// ```
pub fn strip_strict_nulls(info: &ToolInfo, args: &mut Value) -> Vec<String> {
    let schema = info.parameters.to_value();
    let mut walk = Strip {
        root: &schema,
        removed: Vec::new(),
        fuel: Fuel::new(),
    };
    walk.strip(&schema, args, "", 0);
    walk.removed
}

struct Strip<'a> {
    root: &'a Value,
    removed: Vec<String>,
    fuel: Fuel,
}

impl Strip<'_> {
    fn strip(&mut self, schema: &Value, value: &mut Value, path: &str, depth: usize) {
        let Step::Keywords(m) = self.fuel.enter(schema, depth) else {
            return;
        };
        let root = self.root;
        if let Some(target) = ref_target(root, m) {
            self.strip(target, value, path, depth + 1);
        }
        if let Some(Value::Array(all)) = m.get("allOf") {
            for branch in all {
                self.strip(branch, value, path, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = m.get(key) {
                let mut candidates = branches.iter().filter(|b| could_match(root, b, value));
                if let (Some(only), None) = (candidates.next(), candidates.next()) {
                    self.strip(only, value, path, depth + 1);
                }
            }
        }
        match value {
            Value::Object(obj) => {
                let props = m.get("properties").and_then(Value::as_object);
                let required: Vec<&str> = match m.get("required") {
                    Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if let Some(props) = props {
                    let nulls: Vec<String> = obj
                        .iter()
                        .filter(|(name, v)| {
                            v.is_null()
                                && !required.contains(&name.as_str())
                                && props
                                    .get(name.as_str())
                                    .is_some_and(|s| !accepts_null(root, s))
                        })
                        .map(|(name, _)| name.clone())
                        .collect();
                    for name in nulls {
                        obj.shift_remove(&name);
                        self.removed.push(child(path, &name));
                    }
                }
                let extra = m.get("additionalProperties");
                for (name, v) in obj.iter_mut() {
                    let sub = props.and_then(|p| p.get(name)).or(extra);
                    if let Some(sub) = sub {
                        self.strip(sub, v, &child(path, name), depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                let prefix = match m.get("prefixItems") {
                    Some(Value::Array(p)) => p.as_slice(),
                    _ => &[],
                };
                let rest = m.get("items").filter(|i| !i.is_array());
                for (i, item) in items.iter_mut().enumerate() {
                    if let Some(sub) = prefix.get(i).or(rest) {
                        self.strip(sub, item, &index(path, i), depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}
