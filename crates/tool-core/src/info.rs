//! `ToolInfo` and `ToolParams`: what a model reads about a tool.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ToolDefError;

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Checks a tool name against `^[a-zA-Z0-9_-]{1,64}$`, the charset every provider accepts.
///
/// ```
/// use actuator_tool_core::validate_tool_name;
/// assert!(validate_tool_name("read_file").is_ok());
/// let err = validate_tool_name("read file").unwrap_err();
/// assert!(err.to_string().contains("'read file'"));
/// ```
pub fn validate_tool_name(name: &str) -> Result<(), ToolDefError> {
    let valid_chars = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if name.is_empty() || name.len() > MAX_TOOL_NAME_LEN || !valid_chars {
        return Err(ToolDefError::InvalidName {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// The description of a tool offered to a model: its name, what it does, and its parameters.
///
/// Serializes as `{"name", "description", "parameters"}`.
///
/// The struct is `#[non_exhaustive]` (fields such as a title or an output schema may be added):
/// build one with [`ToolInfo::new`] and read or change its fields directly.
///
/// ```
/// use actuator_tool_core::{ToolInfo, ToolParams};
/// let info = ToolInfo::new("ping", "Checks that the service is up.", ToolParams::default());
/// assert_eq!(info.name, "ping");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolInfo {
    /// The name the model calls the tool by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The tool's parameters as a JSON Schema object.
    #[serde(default)]
    pub parameters: ToolParams,
    /// The JSON Schema of the tool's structured result (MCP's `outputSchema`), when it has
    /// one: `#[tool]` sets it for a return type whose schema is an object (a struct deriving
    /// `JsonSchema`, or `Json<T>` of one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl ToolInfo {
    /// A tool's info from its name, description and parameters. Nothing is checked here:
    /// [`ToolDef`](crate::ToolDef)'s builder and `check` validate the name and descriptions.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: ToolParams,
    ) -> Self {
        ToolInfo {
            name: name.into(),
            description: description.into(),
            parameters,
            output_schema: None,
        }
    }

    /// This info with `schema` as its result's JSON Schema (`None` for none).
    ///
    /// ```
    /// use actuator_tool_core::{ToolInfo, ToolParams};
    /// let info = ToolInfo::new("locate", "Finds a point.", ToolParams::default())
    ///     .with_output_schema(Some(serde_json::json!({"type": "object", "properties": {}})));
    /// assert!(info.output_schema.is_some());
    /// ```
    #[must_use]
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// The JSON Schema of the parameters, exactly as serialized (see [`ToolParams`]).
    pub fn parameters_schema(&self) -> Value {
        self.parameters.to_value()
    }
}

/// The parameters of a tool: a JSON Schema object.
///
/// Parameters built here (`#[tool]`, [`ParamsBuilder`](crate::ParamsBuilder),
/// `ToolParams::default()`) are closed: they serialize as
/// `{"type":"object","properties":{…},"required":[…],"additionalProperties":false}` in that key
/// order, with properties in declaration order and `required` always present. Definitions that
/// recursive parameter types refer to (`"$ref": "#/$defs/Name"`) follow as `$defs`, only when
/// there are any.
///
/// A schema from elsewhere ([`ToolParams::from_value`]: an MCP server's `inputSchema`, a
/// user's JSON) passes through as it was: its `additionalProperties` as given (absent when
/// absent), and every other top-level keyword it carries (`$schema`, `title`, `definitions`,
/// …) kept in [`extra`](ToolParams::extra) and written after the rest, so that only a dialect
/// that must change it does (and says so in its report).
///
/// ```
/// use actuator_tool_core::ToolParams;
/// use serde_json::json;
///
/// let mut params = ToolParams::default();
/// params.properties.insert("x".into(), json!({"type": "integer", "description": "A number."}));
/// params.required.push("x".into());
/// assert_eq!(
///     serde_json::to_string(&params).unwrap(),
///     r#"{"type":"object","properties":{"x":{"type":"integer","description":"A number."}},"required":["x"],"additionalProperties":false}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolParams {
    /// Parameter name → JSON Schema, in declaration order.
    pub properties: Map<String, Value>,
    /// Names of the parameters the model must supply, in declaration order.
    pub required: Vec<String>,
    /// Shared definitions referred to as `#/$defs/{name}` (recursive types).
    pub defs: Map<String, Value>,
    /// The schema's `additionalProperties`: `false` (closed) for parameters built here; as
    /// given, or `None` when absent, for a schema read with [`ToolParams::from_value`].
    pub additional_properties: Option<Value>,
    /// The schema's other top-level keywords, as given, in order (`$schema`, `title`, …):
    /// empty for parameters built here.
    pub extra: Map<String, Value>,
}

impl Default for ToolParams {
    /// No parameters, closed.
    fn default() -> Self {
        ToolParams {
            properties: Map::new(),
            required: Vec::new(),
            defs: Map::new(),
            additional_properties: Some(Value::Bool(false)),
            extra: Map::new(),
        }
    }
}

impl ToolParams {
    /// The parameter names in declaration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.properties.keys().map(String::as_str)
    }

    /// The JSON Schema of these parameters as a value.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::with_capacity(5 + self.extra.len());
        obj.insert("type".into(), Value::from("object"));
        obj.insert("properties".into(), Value::Object(self.properties.clone()));
        obj.insert(
            "required".into(),
            Value::Array(self.required.iter().cloned().map(Value::from).collect()),
        );
        if let Some(additional) = &self.additional_properties {
            obj.insert("additionalProperties".into(), additional.clone());
        }
        if !self.defs.is_empty() {
            obj.insert("$defs".into(), Value::Object(self.defs.clone()));
        }
        for (key, value) in &self.extra {
            obj.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Value::Object(obj)
    }

    /// Reads parameters from a JSON Schema object (the inverse of [`ToolParams::to_value`]):
    /// parameters written by hand for a tool or an agent defined here. Every top-level keyword
    /// is kept ([`extra`](ToolParams::extra) holds those not modelled, such as `$schema`);
    /// `additionalProperties` is as given, and `false` when absent, as the reference closes
    /// its tools' parameters. For a schema from elsewhere that must stay exactly as it came (an
    /// MCP server's `inputSchema`), use [`ToolParams::pass_through`].
    ///
    /// Fails when the value is not an object schema (`"type": "object"` or no type) or when
    /// `properties`/`required` are malformed.
    ///
    /// ```
    /// use actuator_tool_core::ToolParams;
    /// use serde_json::json;
    /// let schema = json!({
    ///     "$schema": "http://json-schema.org/draft-07/schema#",
    ///     "type": "object",
    ///     "properties": {"path": {"type": "string"}},
    ///     "required": ["path"]
    /// });
    /// let params = ToolParams::from_value(&schema).unwrap();
    /// assert_eq!(params.additional_properties, Some(json!(false)));
    /// assert_eq!(params.to_value()["$schema"], schema["$schema"]);
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, ToolDefError> {
        let mut params = Self::pass_through(value)?;
        params
            .additional_properties
            .get_or_insert(Value::Bool(false));
        Ok(params)
    }

    /// Reads a schema from elsewhere (an MCP server's `inputSchema`) exactly as it came:
    /// `additionalProperties` only when given, and every other top-level keyword kept, so that
    /// [`to_value`](ToolParams::to_value) gives back the same schema and only a dialect that
    /// must change it does (and says so in its report).
    ///
    /// ```
    /// use actuator_tool_core::ToolParams;
    /// use serde_json::json;
    /// let schema = json!({
    ///     "$schema": "http://json-schema.org/draft-07/schema#",
    ///     "type": "object",
    ///     "properties": {"path": {"type": "string"}},
    ///     "required": ["path"]
    /// });
    /// let params = ToolParams::pass_through(&schema).unwrap();
    /// assert_eq!(params.additional_properties, None);
    /// assert_eq!(params.to_value(), schema);
    /// ```
    pub fn pass_through(value: &Value) -> Result<Self, ToolDefError> {
        let bad = |reason: &str| ToolDefError::InvalidParameters {
            reason: reason.to_owned(),
        };
        let obj = value
            .as_object()
            .ok_or_else(|| bad("the parameters schema must be a JSON object"))?;
        match obj.get("type") {
            None => {}
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                return Err(bad(&format!(
                    "the parameters schema must have \"type\": \"object\", found {other}"
                )));
            }
        }
        let properties = match obj.get("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(bad("\"properties\" must be an object")),
        };
        let required = match obj.get("required") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad("\"required\" must be an array of strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad("\"required\" must be an array of strings")),
        };
        for name in &required {
            if !properties.contains_key(name) {
                return Err(bad(&format!(
                    "\"required\" names '{name}', which is not in \"properties\""
                )));
            }
        }
        let defs = match obj.get("$defs") {
            None => Map::new(),
            Some(Value::Object(d)) => d.clone(),
            Some(_) => return Err(bad("\"$defs\" must be an object")),
        };
        let extra = obj
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "type" | "properties" | "required" | "additionalProperties" | "$defs"
                )
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(ToolParams {
            properties,
            required,
            defs,
            additional_properties: obj.get("additionalProperties").cloned(),
            extra,
        })
    }
}

impl Serialize for ToolParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let len = 3
            + usize::from(self.additional_properties.is_some())
            + usize::from(!self.defs.is_empty())
            + self.extra.len();
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("type", "object")?;
        map.serialize_entry("properties", &self.properties)?;
        map.serialize_entry("required", &self.required)?;
        if let Some(additional) = &self.additional_properties {
            map.serialize_entry("additionalProperties", additional)?;
        }
        if !self.defs.is_empty() {
            map.serialize_entry("$defs", &self.defs)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ToolParams {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ToolParams::from_value(&value).map_err(serde::de::Error::custom)
    }
}
