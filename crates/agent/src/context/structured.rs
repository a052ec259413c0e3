//! [`RunContext::generate_structured`]: structured output inside a run, so that the run's
//! limits, usage and events count the generation.

use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model, Structured};
use actuator_tool_core::schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::RunContext;
use crate::error::AgentError;

/// Why [`RunContext::generate_structured`] has no value: the run stopped the generation (a
/// limit, a model error), or the answer is not the value asked for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StructuredRunError {
    /// The generation failed or a limit stopped it.
    #[error(transparent)]
    Run(#[from] AgentError),
    /// The answer is not JSON, does not follow the schema, or does not fit the type (with the
    /// answer's text).
    #[error(transparent)]
    Answer(#[from] actuator_model::StructuredOutputError),
}

impl RunContext {
    /// [`actuator_model::generate_structured`] through this run: the answer to `input` as a
    /// `T`, asked for with `T`'s schema unless `config` names one, generated with
    /// [`RunContext::generate`] (the run's limits apply, its usage and a model event are
    /// recorded), then checked against the schema and deserialized.
    ///
    /// ```
    /// use actuator_agent::{RunContext, limits::turn_limit};
    /// use actuator_model::{ChatMessage, GenerateConfig, ModelOutput, ScriptedModel};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict { approve: bool }
    ///
    /// let model = ScriptedModel::new([ModelOutput::from_content("m", r#"{"approve": true}"#)]);
    /// let input = [ChatMessage::user("Approve the change?")];
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let cx = RunContext::new().scoped(&[turn_limit(5)]);
    /// let verdict: Verdict = cx.generate_structured(&model, &input, &GenerateConfig::default()).await.unwrap();
    /// assert!(verdict.approve);
    /// assert_eq!(cx.usage().turns, 1);
    /// # });
    /// ```
    pub async fn generate_structured<T: JsonSchema + DeserializeOwned>(
        &self,
        model: &dyn Model,
        input: &[ChatMessage],
        config: &GenerateConfig,
    ) -> Result<T, StructuredRunError> {
        let structured = Structured::<T>::new(config)?;
        let output = self
            .generate(
                model,
                GenerateRequest::new(input).config(structured.config()),
            )
            .await?;
        Ok(structured.read(&output)?)
    }
}
