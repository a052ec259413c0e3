//! Generation settings.

use serde::{Deserialize, Serialize};

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
    /// The default output limit for tools, in bytes (`0` disables truncation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_output: Option<usize>,
    /// Whether the model may call several tools in one turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Reasoning effort, for models that reason (`low`, `medium`, `high`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Timeout for one generation, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
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

    /// Sets `max_tool_output`.
    #[must_use]
    pub fn max_tool_output(mut self, bytes: usize) -> Self {
        self.max_tool_output = Some(bytes);
        self
    }

    /// Sets `parallel_tool_calls`.
    #[must_use]
    pub fn parallel_tool_calls(mut self, yes: bool) -> Self {
        self.parallel_tool_calls = Some(yes);
        self
    }
}
