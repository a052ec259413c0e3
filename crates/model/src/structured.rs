//! Structured output: [`generate_structured`] asks for an answer following a type's
//! [`ResponseSchema`] and returns it as a value of that type, checked against the schema first.

use actuator_tool_core::schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::GenerateConfig;
use crate::error::ModelError;
use crate::message::ChatMessage;
use crate::model::Model;
use crate::output::ModelOutput;
use crate::request::GenerateRequest;
use crate::response_schema::ResponseSchema;

/// Why [`generate_structured`] has no value: the generation failed, or the answer is not JSON,
/// does not follow the schema, or does not fit the type. Each carries the answer's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StructuredOutputError {
    /// The generation failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The answer is not JSON.
    #[error("The model's answer is not JSON ({source}). The answer: {}", shown(.text))]
    NotJson {
        /// The answer.
        text: String,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The answer is JSON that does not follow the schema.
    #[error("The model's answer does not follow the schema '{schema}': {errors}. The answer: {}", shown(.text))]
    Invalid {
        /// The schema's name.
        schema: String,
        /// What does not follow it, one error per place.
        errors: String,
        /// The answer.
        text: String,
    },
    /// The schema itself cannot be compiled.
    #[error("The response schema '{schema}' is not a valid JSON Schema: {reason}")]
    BadSchema {
        /// The schema's name.
        schema: String,
        /// Why.
        reason: String,
    },
    /// The answer follows the schema but does not deserialize into the type.
    #[error("The model's answer is not a {type_name}: {source}. The answer: {}", shown(.text))]
    Deserialize {
        /// The Rust type asked for.
        type_name: &'static str,
        /// The answer.
        text: String,
        /// serde's error.
        #[source]
        source: serde_json::Error,
    },
}

/// An answer as an error shows it: its first 1,000 characters.
fn shown(text: &str) -> String {
    const MAX: usize = 1_000;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
        None => text.to_owned(),
    }
}

/// The answer's JSON text: the output's text, without a Markdown code fence around it.
fn answer_text(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// Generates an answer that is JSON following `T`'s schema, and returns it as a `T`.
///
/// The config's [`response_schema`](GenerateConfig::response_schema) is set to
/// [`ResponseSchema::of::<T>()`](ResponseSchema::of) unless it names one already; the answer
/// is then checked against that schema (a provider without structured output may ignore it)
/// and deserialized. Every failure says what was wrong, with the answer's text.
///
/// ```
/// use actuator_model::{ChatMessage, GenerateConfig, ModelOutput, ScriptedModel, generate_structured};
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// struct Sum { total: i64 }
///
/// let model = ScriptedModel::new([
///     ModelOutput::from_content("m", r#"{"total": 7}"#),
///     ModelOutput::from_content("m", r#"{"total": "seven"}"#),
/// ]);
/// let input = [ChatMessage::user("What is 3 + 4?")];
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let sum: Sum = generate_structured(&model, &input, &GenerateConfig::default()).await.unwrap();
/// assert_eq!(sum.total, 7);
/// let err = generate_structured::<Sum>(&model, &input, &GenerateConfig::default()).await.unwrap_err();
/// assert!(err.to_string().contains("does not follow the schema 'Sum'"), "{err}");
/// # });
/// ```
pub async fn generate_structured<T: JsonSchema + DeserializeOwned>(
    model: &dyn Model,
    input: &[ChatMessage],
    config: &GenerateConfig,
) -> Result<T, StructuredOutputError> {
    let structured = Structured::<T>::new(config)?;
    let request = GenerateRequest::new(input).config(structured.config());
    let output = crate::model::generate(model, request).await?;
    structured.read(&output)
}

/// [`generate_structured`] in two halves, for a caller that generates by itself (an agent's
/// `RunContext`, so that the run's limits, usage and events count the generation): the config
/// to send, then the reading of the answer.
///
/// ```
/// use actuator_model::{GenerateConfig, ModelOutput, Structured};
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Sum { total: i64 }
/// let structured = Structured::<Sum>::new(&GenerateConfig::default()).unwrap();
/// assert_eq!(structured.config().response_schema.as_ref().unwrap().name, "Sum");
/// let sum = structured.read(&ModelOutput::from_content("m", r#"{"total": 7}"#)).unwrap();
/// assert_eq!(sum.total, 7);
/// ```
pub struct Structured<T> {
    config: GenerateConfig,
    schema_name: String,
    validator: jsonschema::Validator,
    answer: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Structured<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Structured")
            .field("schema", &self.schema_name)
            .finish_non_exhaustive()
    }
}

impl<T: JsonSchema + DeserializeOwned> Structured<T> {
    /// `config` asking for `T`'s schema ([`ResponseSchema::of`]) unless it names one, and the
    /// schema's validator (a schema that does not compile is an error).
    pub fn new(config: &GenerateConfig) -> Result<Self, StructuredOutputError> {
        let mut config = config.clone();
        let schema = config
            .response_schema
            .get_or_insert_with(ResponseSchema::of::<T>);
        let validator = jsonschema::validator_for(&schema.json_schema).map_err(|e| {
            StructuredOutputError::BadSchema {
                schema: schema.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let schema_name = schema.name.clone();
        Ok(Structured {
            config,
            schema_name,
            validator,
            answer: std::marker::PhantomData,
        })
    }

    /// The config to generate with.
    pub fn config(&self) -> &GenerateConfig {
        &self.config
    }

    /// The answer in `output` as a `T`: JSON (a Markdown fence around it is allowed),
    /// following the schema, deserialized.
    pub fn read(&self, output: &ModelOutput) -> Result<T, StructuredOutputError> {
        let text = output.completion();
        let value: Value = match serde_json::from_str(answer_text(&text)) {
            Ok(v) => v,
            Err(source) => return Err(StructuredOutputError::NotJson { text, source }),
        };
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !errors.is_empty() {
            return Err(StructuredOutputError::Invalid {
                schema: self.schema_name.clone(),
                errors: errors.join("; "),
                text,
            });
        }
        serde_json::from_value(value).map_err(|source| StructuredOutputError::Deserialize {
            type_name: std::any::type_name::<T>(),
            text,
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_answer_is_read_without_its_fence() {
        assert_eq!(answer_text("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(answer_text("  {\"a\": 1} "), "{\"a\": 1}");
    }

    #[test]
    fn a_long_answer_is_cut_in_errors() {
        let long = "x".repeat(5_000);
        let shown = shown(&long);
        assert!(shown.ends_with("… (4000 more bytes)"), "{}", &shown[990..]);
    }
}
