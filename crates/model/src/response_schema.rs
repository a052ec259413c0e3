//! [`ResponseSchema`]: the JSON Schema a model's answer must follow (structured output), set in
//! a [`GenerateConfig`](crate::GenerateConfig).

use actuator_tool_core::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON Schema a model's answer must follow (the reference's `ResponseSchema`): providers
/// send it as their structured-output setting (OpenAI's `response_format` / `text.format`,
/// the `json_schema` of OpenAI-compatible servers such as llama.cpp's, which constrain the
/// output to it).
///
/// ```
/// use actuator_model::{GenerateConfig, ResponseSchema};
/// use serde_json::json;
///
/// let schema = ResponseSchema::new("sum", json!({
///     "type": "object",
///     "properties": {"total": {"type": "integer"}},
///     "required": ["total"],
///     "additionalProperties": false
/// }))
/// .description("The sum of the numbers.")
/// .strict(true);
/// let config = GenerateConfig::default().response_schema(schema);
/// assert_eq!(config.response_schema.unwrap().name, "sum");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResponseSchema {
    /// The schema's name (`^[a-zA-Z0-9_-]{1,64}$`, as the providers require).
    pub name: String,
    /// What the answer is, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema.
    pub json_schema: Value,
    /// Whether the provider must follow the schema exactly (OpenAI's strict mode; `None`
    /// leaves the provider's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl ResponseSchema {
    /// A schema named `name`.
    pub fn new(name: impl Into<String>, json_schema: Value) -> Self {
        ResponseSchema {
            name: name.into(),
            description: None,
            json_schema,
            strict: None,
        }
    }

    /// The schema of `T` (from its `JsonSchema` derive), named after the type.
    ///
    /// ```
    /// use actuator_model::ResponseSchema;
    /// #[derive(schemars::JsonSchema)]
    /// struct Weather { city: String, celsius: f64 }
    /// let schema = ResponseSchema::of::<Weather>();
    /// assert_eq!(schema.name, "Weather");
    /// assert_eq!(schema.json_schema["required"], serde_json::json!(["city", "celsius"]));
    /// assert!(schema.json_schema.get("$schema").is_none());
    /// assert_eq!(schema.json_schema["additionalProperties"], false);
    /// ```
    pub fn of<T: JsonSchema>() -> Self {
        let mut json_schema = schemars::schema_for!(T).to_value();
        // The dialect's URI is no part of the answer's shape, and some providers refuse it.
        if let Some(obj) = json_schema.as_object_mut() {
            obj.remove("$schema");
        }
        // Providers' structured output (OpenAI strict, Anthropic) wants closed objects; an
        // answer with fields the type does not have is no answer anyway.
        close_objects(&mut json_schema);
        let name: String = T::schema_name()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        ResponseSchema::new(
            if name.is_empty() {
                "answer".into()
            } else {
                name
            },
            json_schema,
        )
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `strict`.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }
}

/// Adds `"additionalProperties": false` to every object schema with properties that does
/// not say (its subschemas and definitions included).
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            if obj.contains_key("properties") && !obj.contains_key("additionalProperties") {
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
            for value in obj.values_mut() {
                close_objects(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}
