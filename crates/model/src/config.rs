//! Generation settings.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
}

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

    /// Sets `parallel_tool_calls`.
    #[must_use]
    pub fn parallel_tool_calls(mut self, yes: bool) -> Self {
        self.parallel_tool_calls = Some(yes);
        self
    }
}
