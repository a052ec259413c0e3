//! Building [`ToolParams`] from Rust types with schemars: what `#[tool]` expands to, and what a
//! hand-built typed tool uses.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::info::ToolParams;

/// A type that can be a tool parameter: the model's JSON is deserialized into it, and its JSON
/// Schema is shown to the model.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this parameter's type must implement `Deserialize` and `JsonSchema`",
    note = "add `#[tool_input]` (or `#[derive(serde::Deserialize, schemars::JsonSchema)]`) to the type, or use a type that has both"
)]
pub trait ToolParam: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> ToolParam for T {}

/// Builds the parameters schema of a tool, one parameter at a time, in declaration order.
///
/// Subschemas are inlined, except recursive types, which are kept once in `$defs`.
///
/// ```
/// use actuator_tool_core::ParamsBuilder;
/// let params = ParamsBuilder::new()
///     .param::<i64>("x", Some("First addend."))
///     .param::<Option<String>>("label", Some("A label."))
///     .param_with_default("scale", Some("Scale factor."), 1.5_f64)
///     .build();
/// assert_eq!(params.required, vec!["x"]);
/// assert_eq!(params.properties["scale"]["default"], 1.5);
/// ```
pub struct ParamsBuilder {
    generator: SchemaGenerator,
    params: ToolParams,
}

impl std::fmt::Debug for ParamsBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamsBuilder")
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Default for ParamsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a missing value is accepted by `T`'s deserializer (as `Option<T>` is): such a
/// parameter is not required, so schema and deserializer agree.
pub fn accepts_missing<T: DeserializeOwned>() -> bool {
    T::deserialize(Value::Null).is_ok()
}

impl ParamsBuilder {
    /// An empty parameter list.
    pub fn new() -> Self {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        });
        ParamsBuilder {
            generator: SchemaGenerator::new(settings),
            params: ToolParams::default(),
        }
    }

    fn schema_of<T: JsonSchema>(&mut self, description: Option<&str>) -> Value {
        let schema: Schema = self.generator.subschema_for::<T>();
        let mut value = schema.to_value();
        tidy_schema(&mut value);
        reshape(&mut value);
        if let (Some(d), Value::Object(obj)) = (description, &mut value) {
            obj.insert("description".into(), Value::from(d));
        }
        if let Value::Bool(anything) = value {
            // `true`: `serde_json::Value` and the like, any JSON value (`{}`). `false`: no value
            // is valid, written as an enum without variants, as the reference writes it.
            let mut obj = Map::new();
            if !anything {
                obj.insert("enum".into(), Value::Array(Vec::new()));
            }
            if let Some(d) = description {
                obj.insert("description".into(), Value::from(d));
            }
            value = Value::Object(obj);
        }
        value
    }

    /// Adds a parameter. It is required unless its type accepts a missing value (`Option<T>`).
    #[must_use]
    pub fn param<T: ToolParam>(mut self, name: &str, description: Option<&str>) -> Self {
        let schema = self.schema_of::<T>(description);
        self.params.properties.insert(name.to_owned(), schema);
        if !accepts_missing::<T>() {
            self.params.required.push(name.to_owned());
        }
        self
    }

    /// Adds an optional parameter with a default value, shown to the model as `default`.
    #[must_use]
    pub fn param_with_default<T: ToolParam + Serialize>(
        mut self,
        name: &str,
        description: Option<&str>,
        default: T,
    ) -> Self {
        let mut schema = self.schema_of::<T>(description);
        if let (Value::Object(obj), Ok(default)) = (&mut schema, serde_json::to_value(default))
            && !default.is_null()
        {
            obj.insert("default".into(), default);
        }
        self.params.properties.insert(name.to_owned(), schema);
        self
    }

    /// Adds an optional parameter whose default is not shown (it is computed by the tool).
    #[must_use]
    pub fn param_optional<T: ToolParam>(mut self, name: &str, description: Option<&str>) -> Self {
        let schema = self.schema_of::<T>(description);
        self.params.properties.insert(name.to_owned(), schema);
        self
    }

    /// Adds every field of a struct as a top-level parameter (the struct-parameter form).
    /// Field descriptions come from the fields' doc comments.
    #[must_use]
    pub fn flatten<T: ToolParam>(mut self) -> Self {
        let schema = self.schema_of::<T>(None);
        if let Value::Object(mut obj) = schema {
            if let Some(Value::Object(props)) = obj.remove("properties") {
                self.params.properties.extend(props);
            }
            if let Some(Value::Array(required)) = obj.remove("required") {
                self.params.required.extend(
                    required
                        .into_iter()
                        .filter_map(|v| v.as_str().map(str::to_owned)),
                );
            }
        }
        self
    }

    /// Finishes the schema, collecting the definitions of recursive types into `$defs`.
    pub fn build(mut self) -> ToolParams {
        let mut defs = self.generator.take_definitions(true);
        for def in defs.values_mut() {
            tidy_schema(def);
            reshape(def);
        }
        self.params.defs = defs;
        self.params
    }
}

/// Removes what a model does not need and states integer bounds explicitly: schemars' numeric
/// `format`s (`int32`, `uint8`, `double`, …) are not JSON Schema formats, so the bounds they
/// imply become `minimum`/`maximum` and the format goes. Recurses through schema keywords only,
/// never through property names.
fn tidy_schema(value: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(v) = stack.pop() {
        let Value::Object(obj) = v else { continue };
        obj.remove("$schema");
        obj.remove("title");
        // Sets deduplicate on deserialization, so duplicates are accepted: a schema that
        // rejected them would be stricter than the deserializer.
        obj.remove("uniqueItems");
        if let Some(Value::String(format)) = obj.get("format") {
            let bounds: Option<(Option<i64>, Option<u64>)> = match format.as_str() {
                "int8" => Some((Some(i8::MIN.into()), Some(i8::MAX as u64))),
                "int16" => Some((Some(i16::MIN.into()), Some(i16::MAX as u64))),
                "int32" => Some((Some(i32::MIN.into()), Some(i32::MAX as u64))),
                "uint8" => Some((Some(0), Some(u8::MAX.into()))),
                "uint16" => Some((Some(0), Some(u16::MAX.into()))),
                "uint32" => Some((Some(0), Some(u32::MAX.into()))),
                // ±9.2e18 is noise to a model: 64-bit integers show no bounds (unsigned ones
                // only their floor); the deserializer still enforces the range (a `parsing`
                // error).
                "int64" | "int" => Some((None, None)),
                "uint64" | "uint" => Some((Some(0), None)),
                "uint128" => Some((Some(0), None)),
                "int128" | "float" | "double" => Some((None, None)),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                obj.remove("format");
                if let Some(min) = min {
                    obj.entry("minimum").or_insert_with(|| Value::from(min));
                }
                if let Some(max) = max {
                    obj.entry("maximum").or_insert_with(|| Value::from(max));
                }
            }
        }
        for (key, child) in obj.iter_mut() {
            match key.as_str() {
                "properties" | "$defs" | "definitions" | "patternProperties" => {
                    if let Value::Object(map) = child {
                        stack.extend(map.values_mut());
                    }
                }
                "items"
                | "additionalProperties"
                | "not"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "if"
                | "then"
                | "else" => {
                    stack.push(child);
                }
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                    if let Value::Array(items) = child {
                        stack.extend(items.iter_mut());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Keywords that describe a schema rather than constrain it: they stay beside an `anyOf`.
const ANNOTATIONS: [&str; 7] = [
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Gives schemas the shapes the reference shows a model (children first):
///
/// - a nullable type (`"type": ["number", "null"]`) is `{"anyOf": [{"type": "number", …},
///   {"type": "null"}]}`, as the reference renders `Optional[T]`, and an `anyOf` inside an
///   `anyOf` is flattened into it;
/// - an object with properties is closed (`"additionalProperties": false`), as the reference
///   closes dataclasses and pydantic models; the deserializer refuses unknown fields too;
/// - no boolean schemas where a model reads one: `true` is `{}`, `false` `{"enum": []}`
///   (`additionalProperties: false` stays: it closes an object);
/// - a `null` default (an `Option` with a serde default) is not shown.
fn reshape(value: &mut Value) {
    let Value::Object(obj) = value else { return };
    for (key, child) in obj.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(map) = child {
                    for schema in map.values_mut() {
                        unbool(schema);
                        reshape(schema);
                    }
                }
            }
            "additionalProperties" => {
                if *child == Value::Bool(true) {
                    *child = Value::Object(Map::new());
                }
                reshape(child);
            }
            "items"
            | "not"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "if"
            | "then"
            | "else" => {
                unbool(child);
                reshape(child);
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(items) = child {
                    for schema in items {
                        unbool(schema);
                        reshape(schema);
                    }
                }
            }
            _ => {}
        }
    }
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    // schemars writes "nothing is valid" (an enum without variants) as `{"not": {}}`.
    if obj
        .get("not")
        .is_some_and(|n| n.as_object().is_some_and(Map::is_empty))
        && obj
            .keys()
            .all(|k| k == "not" || ANNOTATIONS.contains(&k.as_str()))
    {
        obj.remove("not");
        obj.insert("enum".into(), Value::Array(Vec::new()));
    }
    nullable_type_to_any_of(obj);
    flatten_any_of(obj);
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
    if is_object && obj.contains_key("properties") && !obj.contains_key("additionalProperties") {
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// `true` → `{}`, `false` → `{"enum": []}`.
fn unbool(schema: &mut Value) {
    match schema {
        Value::Bool(true) => *schema = Value::Object(Map::new()),
        Value::Bool(false) => {
            let mut obj = Map::new();
            obj.insert("enum".into(), Value::Array(Vec::new()));
            *schema = Value::Object(obj);
        }
        _ => {}
    }
}

/// `{"type": [T…, "null"], …}` → `{"anyOf": [{"type": T…, …}, {"type": "null"}], annotations}`.
fn nullable_type_to_any_of(obj: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = obj.get("type") else {
        return;
    };
    if !types.iter().any(|t| t == "null") || types.len() < 2 {
        return;
    }
    let others: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    let mut branch = Map::new();
    let mut outer = Map::new();
    for (key, v) in std::mem::take(obj) {
        if ANNOTATIONS.contains(&key.as_str()) {
            outer.insert(key, v);
        } else if key == "type" {
            let t = match others.as_slice() {
                [one] => one.clone(),
                _ => Value::Array(others.clone()),
            };
            branch.insert(key, t);
        } else if key == "enum" {
            let kept: Vec<Value> = v
                .as_array()
                .map(|vs| vs.iter().filter(|x| !x.is_null()).cloned().collect())
                .unwrap_or_default();
            branch.insert(key, Value::Array(kept));
        } else {
            branch.insert(key, v);
        }
    }
    let mut null = Map::new();
    null.insert("type".into(), Value::from("null"));
    obj.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(branch), Value::Object(null)]),
    );
    obj.extend(outer);
}

/// An `anyOf` branch that is only an `anyOf` is spliced into its parent (one flat list: the
/// variants of an untagged union, then `null`), keeping one `null`.
fn flatten_any_of(obj: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = obj.get_mut("anyOf") else {
        return;
    };
    // A branch that is an `anyOf` and annotations only (the union's own doc comment, which the
    // parameter's description supersedes).
    let nested = |b: &Value| {
        b.as_object().is_some_and(|o| {
            matches!(o.get("anyOf"), Some(Value::Array(_)))
                && o.keys()
                    .all(|k| k == "anyOf" || ANNOTATIONS.contains(&k.as_str()))
        })
    };
    if !branches.iter().any(nested) {
        return;
    }
    let mut flat: Vec<Value> = Vec::with_capacity(branches.len());
    for branch in std::mem::take(branches) {
        if nested(&branch) {
            if let Value::Object(mut o) = branch
                && let Some(Value::Array(inner)) = o.remove("anyOf")
            {
                flat.extend(inner);
            }
        } else {
            flat.push(branch);
        }
    }
    let is_null = |b: &Value| {
        b.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Value::from("null")))
    };
    let mut seen_null = false;
    flat.retain(|b| {
        if is_null(b) {
            let keep = !seen_null;
            seen_null = true;
            keep
        } else {
            true
        }
    });
    *branches = flat;
}
