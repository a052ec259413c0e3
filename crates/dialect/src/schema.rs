//! Helpers shared by the dialects: null acceptance, branch matching, `allOf`
//! merging and the description hints that carry dropped keywords to the model. The walking
//! itself (pointers, depth, fuel) is in [`walk`](crate::walk), `$ref` resolution in
//! [`base`](crate::base).

use serde_json::{Map, Value};

use crate::base::is_annotation;
use crate::walk::{Fuel, Step, ref_target};

/// The last segment of a reference, for messages (`#/$defs/Node` → `Node`).
pub(crate) fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// Whether `type` (a string or an array of strings) names `name`.
pub(crate) fn type_names(ty: Option<&Value>, name: &str) -> bool {
    match ty {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// The JSON Schema type names of a value.
pub(crate) fn value_matches_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

/// Whether a schema accepts `null`, following local references. Errs towards `true` for what it
/// cannot tell (malformed parts, runaway references), which callers treat as "leave alone".
pub(crate) fn accepts_null(root: &Value, schema: &Value) -> bool {
    accepts_null_with(root, schema, 0, &mut Fuel::new())
}

fn accepts_null_with(root: &Value, schema: &Value, depth: usize, fuel: &mut Fuel) -> bool {
    let m = match fuel.enter(schema, depth) {
        Step::Keywords(m) => m,
        // `true` accepts everything, `false` nothing; anything else is malformed.
        Step::NotObject => return !matches!(schema, Value::Bool(false)),
        Step::Exhausted => return true,
    };
    if let Some(target) = ref_target(root, m)
        && !accepts_null_with(root, target, depth + 1, fuel)
    {
        return false;
    }
    if let Some(ty) = m.get("type")
        && (ty.is_string() || ty.is_array())
        && !type_names(Some(ty), "null")
    {
        return false;
    }
    if let Some(Value::Array(values)) = m.get("enum")
        && !values.contains(&Value::Null)
    {
        return false;
    }
    if let Some(c) = m.get("const")
        && !c.is_null()
    {
        return false;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = m.get(key)
            && !branches
                .iter()
                .any(|b| accepts_null_with(root, b, depth + 1, fuel))
        {
            return false;
        }
    }
    if let Some(Value::Array(branches)) = m.get("allOf")
        && !branches
            .iter()
            .all(|b| accepts_null_with(root, b, depth + 1, fuel))
    {
        return false;
    }
    true
}

/// Whether a value could be an instance of a schema, judged by its outer shape only: type,
/// `const`/`enum`, and for objects the required and (when closed) the allowed property names.
/// Used to pick the one `anyOf`/`oneOf` branch a value belongs to.
pub(crate) fn could_match(root: &Value, schema: &Value, value: &Value) -> bool {
    could_match_with(root, schema, value, 0, &mut Fuel::new())
}

fn could_match_with(
    root: &Value,
    schema: &Value,
    value: &Value,
    depth: usize,
    fuel: &mut Fuel,
) -> bool {
    let m = match fuel.enter(schema, depth) {
        Step::Keywords(m) => m,
        Step::NotObject => return !matches!(schema, Value::Bool(false)),
        Step::Exhausted => return true,
    };
    if let Some(target) = ref_target(root, m)
        && !could_match_with(root, target, value, depth + 1, fuel)
    {
        return false;
    }
    match m.get("type") {
        Some(Value::String(t)) if !value_matches_type(value, t) => return false,
        Some(Value::Array(ts))
            if !ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| value_matches_type(value, t)) =>
        {
            return false;
        }
        _ => {}
    }
    if let Some(c) = m.get("const")
        && c != value
    {
        return false;
    }
    if let Some(Value::Array(values)) = m.get("enum")
        && !values.contains(value)
    {
        return false;
    }
    if let Value::Object(obj) = value {
        if let Some(Value::Array(required)) = m.get("required")
            && !required
                .iter()
                .filter_map(Value::as_str)
                .all(|name| obj.contains_key(name))
        {
            return false;
        }
        if m.get("additionalProperties") == Some(&Value::Bool(false)) {
            let props = m.get("properties").and_then(Value::as_object);
            if !obj.keys().all(|k| props.is_some_and(|p| p.contains_key(k))) {
                return false;
            }
        }
    }
    true
}

/// The sentence appended to a description for a keyword a dialect drops, when the model
/// benefits from knowing it. `None` for keywords that only matter to validation.
pub(crate) fn hint(keyword: &str, value: &Value) -> Option<String> {
    let text = match keyword {
        "format" => format!("Format: {}.", value.as_str()?),
        "default" => format!("Default: {value}."),
        "examples" => match value {
            Value::Array(items) if items.len() == 1 => format!("Example: {}.", items[0]),
            Value::Array(items) if !items.is_empty() => {
                format!("Examples: {}.", join_values(items))
            }
            Value::Array(_) => return None,
            other => format!("Example: {other}."),
        },
        "example" => format!("Example: {value}."),
        "minLength" => match value.as_u64()? {
            0 => return None,
            1 => "At least 1 character.".to_owned(),
            n => format!("At least {n} characters."),
        },
        "maxLength" => match value.as_u64()? {
            1 => "At most 1 character.".to_owned(),
            n => format!("At most {n} characters."),
        },
        "minimum" => format!("At least {}.", value.as_number()?),
        "maximum" => format!("At most {}.", value.as_number()?),
        "exclusiveMinimum" => format!("Greater than {}.", value.as_number()?),
        "exclusiveMaximum" => format!("Less than {}.", value.as_number()?),
        "multipleOf" => format!("A multiple of {}.", value.as_number()?),
        "uniqueItems" if value == &Value::Bool(true) => "Items must be unique.".to_owned(),
        "pattern" => format!("Must match the regular expression `{}`.", value.as_str()?),
        _ => return None,
    };
    Some(text)
}

/// Values as compact JSON, comma separated.
pub(crate) fn join_values(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends sentences to a schema's description (creating it when absent).
pub(crate) fn append_description(out: &mut Map<String, Value>, hints: &[String]) {
    if hints.is_empty() {
        return;
    }
    let extra = hints.join(" ");
    let text = match out.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.trim().is_empty() => {
            let existing = existing.trim_end();
            let sep = if existing.ends_with(['.', '!', '?', ':', ')']) {
                " "
            } else {
                ". "
            };
            format!("{existing}{sep}{extra}")
        }
        _ => extra,
    };
    out.insert("description".into(), Value::String(text));
}

/// Merges `overlay` onto a copy of `base`: the overlay's keys win, the base's order comes first.
pub(crate) fn merged(
    base: &Map<String, Value>,
    overlay: &Map<String, Value>,
    skip: &str,
) -> Map<String, Value> {
    let mut out = base.clone();
    for (k, v) in overlay {
        if k != skip {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// Keywords whose meaning depends on other keywords of the same schema object: each group
/// must come from one place for a merge to keep its meaning.
const COUPLED: &[&[&str]] = &[
    &[
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
    ],
    &[
        "prefixItems",
        "items",
        "additionalItems",
        "unevaluatedItems",
    ],
    &["if", "then", "else"],
    &["contains", "minContains", "maxContains"],
];

/// An `allOf` whose elements share no constraint keyword with each other or with their parent
/// can be merged into the parent without changing what it accepts (the elements of an `allOf`
/// all apply, as the keywords of one schema do). Returns the merged schema.
pub(crate) fn merge_all_of(m: &Map<String, Value>) -> Option<Map<String, Value>> {
    let Some(Value::Array(all)) = m.get("allOf") else {
        return None;
    };
    let mut sources: Vec<&Map<String, Value>> = vec![m];
    for element in all {
        sources.push(element.as_object()?);
    }
    // Which source each constraint keyword (or coupled group) comes from.
    let mut owner: Vec<(&str, usize)> = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        for key in source.keys() {
            if is_annotation(key) || (i == 0 && key == "allOf") {
                continue;
            }
            let group = COUPLED
                .iter()
                .find(|g| g.contains(&key.as_str()))
                .map_or(key.as_str(), |g| g[0]);
            match owner.iter().find(|(k, _)| *k == group) {
                Some((_, j)) if *j != i => return None,
                Some(_) => {}
                None => owner.push((group, i)),
            }
        }
    }
    // Elements first, in order; the parent's keywords (its annotations) win.
    let mut out = Map::new();
    for source in &sources[1..] {
        for (k, v) in source.iter() {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for (k, v) in m {
        if k != "allOf" {
            out.insert(k.clone(), v.clone());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::resolve_ref;
    use serde_json::json;

    #[test]
    fn resolves_local_refs_only() {
        let root = json!({"$defs": {"A B": {"type": "string"}}});
        assert!(resolve_ref(&root, "#/$defs/A%20B").is_some());
        assert_eq!(resolve_ref(&root, "#").map(|(_, p)| p), Some(String::new()));
        assert!(resolve_ref(&root, "other.json#/x").is_none());
        assert!(resolve_ref(&root, "#/$defs/Missing").is_none());
        assert!(resolve_ref(&root, "#anchor").is_none());
        assert!(resolve_ref(&root, "#/%zz").is_none());
        assert!(resolve_ref(&root, "#/%2").is_none());
    }

    #[test]
    fn null_acceptance() {
        let root = json!({"$defs": {"N": {"type": "integer"}}});
        let yes = [
            json!({"type": ["string", "null"]}),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"enum": ["a", null]}),
            json!({"description": "anything"}),
            json!(true),
        ];
        let no = [
            json!({"type": "string"}),
            json!({"type": ["string", "null"], "enum": ["a"]}),
            json!({"$ref": "#/$defs/N"}),
            json!({"const": 1}),
            json!(false),
        ];
        for s in &yes {
            assert!(accepts_null(&root, s), "{s}");
        }
        for s in &no {
            assert!(!accepts_null(&root, s), "{s}");
        }
    }

    #[test]
    fn all_of_merges_only_when_exact() {
        let m = json!({"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 9}], "title": "T"});
        let merged = merge_all_of(m.as_object().expect("object")).map(Value::Object);
        assert_eq!(
            merged,
            Some(json!({"type": "integer", "minimum": 0, "maximum": 9, "title": "T"}))
        );
        for clash in [
            json!({"type": "string", "allOf": [{"type": "integer"}]}),
            json!({"allOf": [{"properties": {"a": {}}}, {"additionalProperties": false}]}),
            json!({"allOf": [{"minimum": 1}, {"minimum": 2}]}),
            json!({"allOf": [true]}),
        ] {
            assert_eq!(
                merge_all_of(clash.as_object().expect("object")),
                None,
                "{clash}"
            );
        }
    }

    #[test]
    fn hints_read_well() {
        assert_eq!(
            hint("format", &json!("uuid")).as_deref(),
            Some("Format: uuid.")
        );
        assert_eq!(
            hint("examples", &json!(["a", 1])).as_deref(),
            Some("Examples: \"a\", 1.")
        );
        assert_eq!(hint("minLength", &json!(0)), None);
        assert_eq!(hint("format", &json!(3)), None);
        let mut m = Map::new();
        m.insert("description".into(), json!("The name"));
        append_description(&mut m, &["Default: 3.".to_owned()]);
        assert_eq!(m["description"], json!("The name. Default: 3."));
    }
}
