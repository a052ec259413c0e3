//! The one schema walker of the dialects: where subschemas sit in a JSON Schema, the JSON
//! pointer of each, and the limits that keep every walk finite.
//!
//! - [`At`] is a subschema's place: its pointer into the root schema, how many subschemas deep
//!   it is ([`MAX_DEPTH`] bounds every walk), and how many objects enclose it.
//! - [`rewrite`] is the descent of the renderers (OpenAI strict, Gemini): each [`Rewrite`]
//!   decides what a schema object becomes and descends into the subschemas it keeps through
//!   [`rewrite`], [`rewrite_named`], [`rewrite_indexed`] and [`rewrite_tuple`].
//! - [`visit_mut`] visits every subschema in place, through every keyword that holds one
//!   ([`holds`]); Anthropic's `$schema` removal uses it.
//! - [`Fuel`] bounds the walks that follow `$ref`s (null acceptance, branch matching, null
//!   stripping), where a small schema can describe an exponentially large tree.

use serde_json::{Map, Value, json};

use crate::base::{is_non_assertion, json_kind, resolve_ref};
use crate::report::{ChangeKind, DialectReport};

/// How deep the walkers follow nested schemas before giving up on a branch. Keeps a
/// pathological (or self-referencing) schema from exhausting the stack.
pub(crate) const MAX_DEPTH: usize = 96;

/// How many subschemas one walk that follows references visits at most.
pub(crate) const FUEL: usize = 10_000;

/// `path` extended by one reference token, escaped as RFC 6901 requires.
pub(crate) fn child(path: &str, token: &str) -> String {
    let mut out = String::with_capacity(path.len() + token.len() + 1);
    out.push_str(path);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `path` extended by an array index.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}/{i}")
}

/// Where a subschema sits in the root schema.
#[derive(Debug, Clone)]
pub(crate) struct At {
    /// JSON pointer into the root schema (empty for the root).
    pub(crate) path: String,
    /// How many subschemas lead here from the root; past [`MAX_DEPTH`] a walk stops.
    pub(crate) depth: usize,
    /// How many objects enclose it through `properties` (the root and each definition are
    /// level 1).
    pub(crate) objects: usize,
}

impl At {
    /// The root schema.
    pub(crate) fn root() -> At {
        At {
            path: String::new(),
            depth: 0,
            objects: 1,
        }
    }

    /// The pointer of one of this schema's keywords, where a change to it is reported.
    pub(crate) fn keyword(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// The subschema that is the value of `key` (`items`, `additionalProperties` …).
    pub(crate) fn sub(&self, key: &str) -> At {
        self.to(child(&self.path, key), self.objects)
    }

    /// Subschema `name` of a keyword that maps names to subschemas. A property is one object
    /// level deeper; a definition starts again at level 1.
    pub(crate) fn named(&self, key: &str, name: &str) -> At {
        let objects = match key {
            "properties" => self.objects + 1,
            "$defs" | "definitions" => 1,
            _ => self.objects,
        };
        self.to(child(&child(&self.path, key), name), objects)
    }

    /// Subschema `i` of a keyword that lists subschemas (`anyOf`, `prefixItems` …).
    pub(crate) fn indexed(&self, key: &str, i: usize) -> At {
        self.to(index(&child(&self.path, key), i), self.objects)
    }

    /// The same place one step deeper: a schema rewritten where it stands (a merged `allOf`,
    /// an inlined `$ref`).
    pub(crate) fn again(&self) -> At {
        self.to(self.path.clone(), self.objects)
    }

    /// A referenced definition, at its own pointer.
    pub(crate) fn jump(&self, path: String) -> At {
        self.to(path, self.objects)
    }

    fn to(&self, path: String, objects: usize) -> At {
        At {
            path,
            depth: self.depth + 1,
            objects,
        }
    }
}

/// How a keyword holds subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// One subschema (or, for draft-04 `items`, a list of them).
    One,
    /// An object of named subschemas.
    Named,
    /// A list of subschemas.
    List,
}

/// The keywords that hold subschemas, and how.
pub(crate) fn holds(keyword: &str) -> Option<Holds> {
    match keyword {
        "items"
        | "additionalProperties"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "additionalItems" => Some(Holds::One),
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            Some(Holds::Named)
        }
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => Some(Holds::List),
        _ => None,
    }
}

/// Calls `visit` on a schema object and then on every subschema object in it, depth first in
/// keyword order, with its place. Stops silently below [`MAX_DEPTH`]; what is not a schema
/// object is skipped.
pub(crate) fn visit_mut(
    schema: &mut Value,
    at: &At,
    visit: &mut impl FnMut(&mut Map<String, Value>, &At),
) {
    let Value::Object(m) = schema else {
        return;
    };
    if at.depth > MAX_DEPTH {
        return;
    }
    visit(m, at);
    for (key, sub) in m.iter_mut() {
        match (holds(key), sub) {
            (Some(Holds::One | Holds::List), Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    visit_mut(item, &at.indexed(key, i), visit);
                }
            }
            (Some(Holds::One), sub) => visit_mut(sub, &at.sub(key), visit),
            (Some(Holds::Named), Value::Object(subs)) => {
                for (name, sub) in subs.iter_mut() {
                    visit_mut(sub, &at.named(key, name), visit);
                }
            }
            _ => {}
        }
    }
}

/// What one dialect makes of each schema; [`rewrite`] walks it over a schema and the
/// subschemas it keeps.
pub(crate) trait Rewrite {
    /// The provider as report details name it (`strict mode`, `Gemini`).
    const PROVIDER: &'static str;
    /// How a subschema the walk cannot follow is rendered, for report details.
    const FALLBACK: &'static str;

    /// Where changes are recorded.
    fn report(&mut self) -> &mut DialectReport;
    /// What a subschema the walk cannot follow becomes.
    fn fallback(&self, schema: &Value) -> Value;
    /// The dialect's schema for "any value".
    fn any(&self) -> Value;
    /// A boolean schema.
    fn boolean(&mut self, schema: &Value, at: &At) -> Value;
    /// A schema object.
    fn object(&mut self, m: &Map<String, Value>, at: &At) -> Value;

    /// Records a malformed part of the schema.
    fn invalid(&mut self, at: &str, detail: &str) {
        self.report().push(at, ChangeKind::Invalid, detail);
    }

    /// Records a keyword the provider does not take.
    fn dropped(&mut self, at: &str, key: &str) {
        let provider = Self::PROVIDER;
        let detail = if is_non_assertion(key) {
            format!("\"{key}\" is not supported by {provider}")
        } else {
            format!(
                "\"{key}\" is not supported by {provider}; it is enforced by Actuator's \
                 validation only"
            )
        };
        self.report().push(at, ChangeKind::Dropped, detail);
    }
}

/// Rewrites one subschema: past [`MAX_DEPTH`], or when it is neither an object nor a boolean,
/// the dialect's fallback (reported as invalid).
pub(crate) fn rewrite<R: Rewrite>(r: &mut R, schema: &Value, at: &At) -> Value {
    if at.depth > MAX_DEPTH {
        r.invalid(
            &at.path,
            &format!("nested too deeply to follow; {}", R::FALLBACK),
        );
        return r.fallback(schema);
    }
    match schema {
        Value::Object(m) => r.object(m, at),
        Value::Bool(_) => r.boolean(schema, at),
        other => {
            r.invalid(
                &at.path,
                &format!(
                    "a schema must be an object or a boolean, found {}; {}",
                    json_kind(other),
                    R::FALLBACK
                ),
            );
            r.fallback(schema)
        }
    }
}

/// Rewrites each subschema of a keyword that maps names to subschemas (`properties`, `$defs`)
/// of the schema at `at`. `None`, reported as invalid, when the value is not an object.
pub(crate) fn rewrite_named<R: Rewrite>(
    r: &mut R,
    value: &Value,
    at: &At,
    key: &str,
) -> Option<Map<String, Value>> {
    let Value::Object(subs) = value else {
        r.invalid(
            &at.keyword(key),
            &format!("\"{key}\" must be an object; dropped"),
        );
        return None;
    };
    let mut out = Map::new();
    for (name, sub) in subs {
        let sub = rewrite(r, sub, &at.named(key, name));
        out.insert(name.clone(), sub);
    }
    Some(out)
}

/// Rewrites each subschema of a keyword that lists subschemas (`anyOf`, `oneOf`) of the
/// schema at `at`. `None`, reported as invalid, when the value is not an array.
pub(crate) fn rewrite_indexed<R: Rewrite>(
    r: &mut R,
    value: &Value,
    at: &At,
    key: &str,
) -> Option<Vec<Value>> {
    let Value::Array(items) = value else {
        r.invalid(
            &at.keyword(key),
            &format!("\"{key}\" must be an array; dropped"),
        );
        return None;
    };
    Some(
        items
            .iter()
            .enumerate()
            .map(|(i, item)| rewrite(r, item, &at.indexed(key, i)))
            .collect(),
    )
}

/// The `items` or `prefixItems` keyword (`key`) of the schema `m` at `at`, written into `out`
/// as a dialect without tuples has it: one `items` schema (a tuple becomes a union of its
/// elements, see [`rewrite_tuple`]; `items` beside `prefixItems` is folded into that union).
pub(crate) fn rewrite_items<R: Rewrite>(
    r: &mut R,
    m: &Map<String, Value>,
    key: &str,
    at: &At,
    out: &mut Map<String, Value>,
) {
    let Some(val) = m.get(key) else { return };
    if key == "prefixItems" {
        let items = rewrite_tuple(r, val, m.get("items"), at, key);
        out.insert("items".into(), items);
        return;
    }
    let tuple = m.contains_key("prefixItems");
    match val {
        Value::Array(_) if !tuple => {
            let items = rewrite_tuple(r, val, None, at, key);
            out.insert(key.to_owned(), items);
        }
        Value::Object(_) | Value::Bool(_) if !tuple => {
            let items = rewrite(r, val, &at.sub(key));
            out.insert(key.to_owned(), items);
        }
        // Handled with `prefixItems`.
        Value::Object(_) | Value::Bool(_) | Value::Array(_) => {}
        _ => r.invalid(&at.keyword(key), "\"items\" must be a schema; dropped"),
    }
}

/// A tuple (`prefixItems`, or draft-04 array `items`, named by `key`) of the schema at `at`
/// as one item schema, for dialects without tuples: each distinct rewritten element (and the
/// trailing `items` schema, `rest`) is one `anyOf` branch; `minItems`/`maxItems` keep the
/// length. Not an array of schemas: the dialect's "any", reported as invalid.
pub(crate) fn rewrite_tuple<R: Rewrite>(
    r: &mut R,
    elements: &Value,
    rest: Option<&Value>,
    at: &At,
    key: &str,
) -> Value {
    let Value::Array(elements) = elements else {
        r.invalid(
            &at.keyword(key),
            "a tuple must be an array of schemas; rendered as any item",
        );
        return r.any();
    };
    let mut union: Vec<Value> = Vec::new();
    for (i, element) in elements.iter().enumerate() {
        let element = rewrite(r, element, &at.indexed(key, i));
        if !union.contains(&element) {
            union.push(element);
        }
    }
    if let Some(rest @ Value::Object(_)) = rest {
        let rest = rewrite(r, rest, &at.sub("items"));
        if !union.contains(&rest) {
            union.push(rest);
        }
    }
    r.report().push(
        at.keyword(key),
        ChangeKind::Rewritten,
        format!(
            "{} has no tuples: each item may match any element schema (the length is kept); \
             positions are enforced by Actuator's validation",
            R::PROVIDER
        ),
    );
    match union.len() {
        0 => json!({}),
        1 => union.remove(0),
        _ => json!({ "anyOf": union }),
    }
}

/// The budget of a walk that follows local `$ref`s: at most [`FUEL`] subschemas, none deeper
/// than [`MAX_DEPTH`].
pub(crate) struct Fuel(usize);

/// What a walk that follows references finds at one subschema.
pub(crate) enum Step<'s> {
    /// A schema object: its keywords.
    Keywords(&'s Map<String, Value>),
    /// A boolean schema, or something malformed.
    NotObject,
    /// The fuel is spent or the walk is too deep: it stops here.
    Exhausted,
}

impl Fuel {
    /// A full budget.
    pub(crate) fn new() -> Fuel {
        Fuel(FUEL)
    }

    /// Enters a subschema `depth` deep, spending one unit when it is an object.
    pub(crate) fn enter<'s>(&mut self, schema: &'s Value, depth: usize) -> Step<'s> {
        let Value::Object(m) = schema else {
            return Step::NotObject;
        };
        if self.0 == 0 || depth > MAX_DEPTH {
            return Step::Exhausted;
        }
        self.0 -= 1;
        Step::Keywords(m)
    }
}

/// The target of a schema object's local `$ref`, when it has one that resolves.
pub(crate) fn ref_target<'r>(root: &'r Value, m: &Map<String, Value>) -> Option<&'r Value> {
    let reference = m.get("$ref").and_then(Value::as_str)?;
    resolve_ref(root, reference).map(|(target, _)| target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_tokens() {
        assert_eq!(child("", "a/b~c"), "/a~1b~0c");
        assert_eq!(index("/anyOf", 2), "/anyOf/2");
    }

    #[test]
    fn places_count_depth_and_objects() {
        let root = At::root();
        let prop = root.named("properties", "a/b");
        assert_eq!(
            (prop.path.as_str(), prop.depth, prop.objects),
            ("/properties/a~1b", 1, 2)
        );
        let def = prop.sub("items").named("$defs", "N");
        assert_eq!(
            (def.path.as_str(), def.depth, def.objects),
            ("/properties/a~1b/items/$defs/N", 3, 1)
        );
        let branch = def.indexed("anyOf", 1).again();
        assert_eq!(
            (branch.path.as_str(), branch.depth),
            ("/properties/a~1b/items/$defs/N/anyOf/1", 5)
        );
    }

    #[test]
    fn visits_every_subschema_once() {
        let mut schema = json!({
            "properties": {"a": {"items": [{"type": "string"}, true]}, "b": 3},
            "anyOf": [{"not": {}}],
            "$defs": {"D": {"additionalProperties": {}}},
            "enum": [{"not": "a schema"}],
        });
        let mut seen = Vec::new();
        visit_mut(&mut schema, &At::root(), &mut |_, at| {
            seen.push(at.path.clone());
        });
        assert_eq!(
            seen,
            [
                "",
                "/properties/a",
                "/properties/a/items/0",
                "/anyOf/0",
                "/anyOf/0/not",
                "/$defs/D",
                "/$defs/D/additionalProperties",
            ]
        );
    }

    #[test]
    fn fuel_runs_out() {
        let mut fuel = Fuel(1);
        let schema = json!({});
        assert!(matches!(fuel.enter(&schema, 0), Step::Keywords(_)));
        assert!(matches!(fuel.enter(&schema, 0), Step::Exhausted));
        assert!(matches!(
            Fuel::new().enter(&schema, MAX_DEPTH + 1),
            Step::Exhausted
        ));
        assert!(matches!(
            Fuel::new().enter(&json!(true), 0),
            Step::NotObject
        ));
    }
}
