//! Generation settings.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::response_schema::ResponseSchema;

/// Settings for a generation. Every field is optional; `None` leaves the provider's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GenerateConfig {
    /// The most tokens to generate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Sequences that stop generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_seqs: Option<Vec<String>>,
    /// Random seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether the model may call several tools in one turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Reasoning effort, for models that reason (`low`, `medium`, `high`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// The most tokens a model may spend reasoning: Anthropic's extended-thinking budget
    /// (`thinking.budget_tokens`, at least 1024), as the reference's `reasoning_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u32>,
    /// How long one generation may take (serialized as seconds).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "seconds_out",
        deserialize_with = "seconds_in"
    )]
    pub timeout: Option<Duration>,
    /// The JSON Schema the answer must follow (structured output; the reference's
    /// `response_schema`). See [`ResponseSchema`] and
    /// [`generate_structured`](crate::generate_structured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<ResponseSchema>,
    /// Whether to cache the prompt's prefix (the reference's `cache_prompt`): `None` (auto)
    /// and `Some(true)` cache it where the provider needs to be told (Anthropic: breakpoints
    /// on the system prompt, the tools and the growing conversation); `Some(false)` turns
    /// that off. Providers that cache on their own (OpenAI) are unaffected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_prompt: Option<bool>,
}

/// The default config as a static, for a request that borrows one when it is given none.
/// Every field is written out (a `const` cannot call `Default::default`), so a field added
/// later fails to compile here until it is set.
pub(crate) static DEFAULT: GenerateConfig = GenerateConfig {
    max_tokens: None,
    temperature: None,
    top_p: None,
    stop_seqs: None,
    seed: None,
    parallel_tool_calls: None,
    reasoning_effort: None,
    reasoning_tokens: None,
    timeout: None,
    response_schema: None,
    cache_prompt: None,
};

// A duration on the wire is seconds, as the reference writes `timeout`.
fn seconds_out<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn seconds_in<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        None => Ok(None),
        Some(secs) => Duration::try_from_secs_f64(secs).map(Some).map_err(|e| {
            serde::de::Error::custom(format!(
                "timeout must be a non-negative number of seconds, not {secs}: {e}"
            ))
        }),
    }
}

impl GenerateConfig {
    /// This config layered over `defaults`: each field this one leaves unset comes from
    /// `defaults`. Layers stack as in the reference: a model's defaults, then an agent's
    /// config, then a call's (`call.merge(&agent.merge(&model_defaults))`).
    ///
    /// ```
    /// use actuator_model::GenerateConfig;
    /// let defaults = GenerateConfig::default().max_tokens(100).temperature(0.5);
    /// let call = GenerateConfig::default().temperature(0.0);
    /// let merged = call.merge(&defaults);
    /// assert_eq!(merged.max_tokens, Some(100));
    /// assert_eq!(merged.temperature, Some(0.0));
    /// ```
    #[must_use]
    pub fn merge(&self, defaults: &GenerateConfig) -> GenerateConfig {
        // Exhaustive on purpose (no `..`): a field added later fails to compile here until it
        // is merged too, instead of being silently dropped.
        let GenerateConfig {
            max_tokens,
            temperature,
            top_p,
            stop_seqs,
            seed,
            parallel_tool_calls,
            reasoning_effort,
            reasoning_tokens,
            timeout,
            response_schema,
            cache_prompt,
        } = self;
        GenerateConfig {
            max_tokens: max_tokens.or(defaults.max_tokens),
            temperature: temperature.or(defaults.temperature),
            top_p: top_p.or(defaults.top_p),
            stop_seqs: stop_seqs.clone().or_else(|| defaults.stop_seqs.clone()),
            seed: seed.or(defaults.seed),
            parallel_tool_calls: parallel_tool_calls.or(defaults.parallel_tool_calls),
            reasoning_effort: reasoning_effort
                .clone()
                .or_else(|| defaults.reasoning_effort.clone()),
            reasoning_tokens: reasoning_tokens.or(defaults.reasoning_tokens),
            timeout: timeout.or(defaults.timeout),
            response_schema: response_schema
                .clone()
                .or_else(|| defaults.response_schema.clone()),
            cache_prompt: cache_prompt.or(defaults.cache_prompt),
        }
    }

    /// Sets `response_schema`: the answer must be JSON following it.
    #[must_use]
    pub fn response_schema(mut self, schema: ResponseSchema) -> Self {
        self.response_schema = Some(schema);
        self
    }

    /// Sets `max_tokens`.
    #[must_use]
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// Sets `temperature`.
    #[must_use]
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }

    /// Sets `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use actuator_model::GenerateConfig;
    /// let config = GenerateConfig::default().timeout(Duration::from_millis(1500));
    /// assert_eq!(serde_json::to_value(&config).unwrap(), serde_json::json!({"timeout": 1.5}));
    /// ```
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets `reasoning_tokens`, the thinking budget.
    ///
    /// ```
    /// use actuator_model::GenerateConfig;
    /// let config = GenerateConfig::default().reasoning_tokens(2048);
    /// assert_eq!(config.reasoning_tokens, Some(2048));
    /// ```
    #[must_use]
    pub fn reasoning_tokens(mut self, n: u32) -> Self {
        self.reasoning_tokens = Some(n);
        self
    }

    /// Sets `cache_prompt`: `false` turns off the prompt caching a provider is told to do.
    ///
    /// ```
    /// use actuator_model::GenerateConfig;
    /// assert_eq!(GenerateConfig::default().cache_prompt(false).cache_prompt, Some(false));
    /// ```
    #[must_use]
    pub fn cache_prompt(mut self, yes: bool) -> Self {
        self.cache_prompt = Some(yes);
        self
    }

    /// Sets `parallel_tool_calls`.
    #[must_use]
    pub fn parallel_tool_calls(mut self, yes: bool) -> Self {
        self.parallel_tool_calls = Some(yes);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: u32) -> GenerateConfig {
        GenerateConfig {
            max_tokens: Some(n),
            temperature: Some(f64::from(n)),
            top_p: Some(f64::from(n) / 10.0),
            stop_seqs: Some(vec![n.to_string()]),
            seed: Some(u64::from(n)),
            parallel_tool_calls: Some(n.is_multiple_of(2)),
            reasoning_effort: Some(n.to_string()),
            reasoning_tokens: Some(n),
            timeout: Some(Duration::from_secs(u64::from(n))),
            response_schema: Some(ResponseSchema::new(
                format!("s{n}"),
                serde_json::json!({"type": "integer"}),
            )),
            cache_prompt: Some(n.is_multiple_of(3)),
        }
    }

    #[test]
    fn merge_fills_every_unset_field_from_the_defaults() {
        assert_eq!(GenerateConfig::default().merge(&full(1)), full(1));
    }

    #[test]
    fn the_static_default_is_the_default() {
        assert_eq!(DEFAULT, GenerateConfig::default());
    }

    #[test]
    fn merge_keeps_every_field_the_call_sets() {
        assert_eq!(full(2).merge(&full(1)), full(2));
        assert_eq!(full(2).merge(&GenerateConfig::default()), full(2));
    }
}
