//! What a generation costs: prices per model, shipped as data and overridable, and the cost of
//! one generation's [`ModelUsage`].
//!
//! The shipped table ([`PriceTable::builtin`]) comes from the price list LiteLLM publishes in
//! its PyPI package, cut to the chat models of the providers Actuator speaks to, under
//! Actuator's names (`anthropic/…`, `openai/…`, `google/…`); [`PriceTable::source`] and
//! [`PriceTable::date`] say which list and when (`scripts/update-prices` regenerates it).
//! Prices change: a user sets their own with [`set_model_cost`] (process-wide, as the
//! reference's `set_model_cost`) or by giving a run its own [`PriceTable`].
//!
//! A model that is in no table has an unknown price: its cost is `None`, never zero, so a
//! cost that cannot be counted is never mistaken for a free one.
//!
//! ```
//! use actuator_model::ModelUsage;
//! use actuator_model::pricing::{ModelCost, PriceTable};
//!
//! let table = PriceTable::empty().with("openai/my-model", ModelCost::new(2.0, 8.0));
//! let usage = ModelUsage::new(1_000_000, 500_000);
//! assert_eq!(table.cost("openai/my-model", None, &usage), Some(6.0));
//! assert_eq!(table.cost("openai/unknown", None, &usage), None);
//! // The shipped table knows the providers' public models.
//! assert!(PriceTable::builtin().get("anthropic/claude-sonnet-4-5").is_some());
//! ```

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use serde::{Deserialize, Serialize};

use crate::ModelUsage;

/// The shipped price list (see the module docs).
const BUILTIN: &str = include_str!("../data/prices.json");

/// A model's prices, in US dollars per million tokens (the reference's `ModelCost`).
///
/// A cache write or read without a price of its own is billed at the input price, and
/// reasoning tokens without one at the output price: an estimate errs high, not low.
///
/// ```
/// use actuator_model::ModelUsage;
/// use actuator_model::pricing::ModelCost;
///
/// let price = ModelCost::new(3.0, 15.0).with_cache(3.75, 0.3);
/// let mut usage = ModelUsage::new(1_000, 1_000);
/// usage.input_tokens_cache_read = Some(10_000);
/// let dollars = price.cost(&usage);
/// assert!((dollars - (0.003 + 0.015 + 0.003)).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelCost {
    /// Per million input tokens (those not read from the cache).
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million input tokens written to the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cache_write: Option<f64>,
    /// Per million input tokens read from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cache_read: Option<f64>,
    /// Per million reasoning tokens, where the provider bills them apart from output (they
    /// are then counted in the output tokens and billed at this price instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
}

impl ModelCost {
    /// Input and output prices per million tokens.
    pub fn new(input: f64, output: f64) -> Self {
        ModelCost {
            input,
            output,
            input_cache_write: None,
            input_cache_read: None,
            reasoning: None,
        }
    }

    /// With prices per million tokens written to and read from the cache.
    #[must_use]
    pub fn with_cache(mut self, write: f64, read: f64) -> Self {
        self.input_cache_write = Some(write);
        self.input_cache_read = Some(read);
        self
    }

    /// With a price per million reasoning tokens.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: f64) -> Self {
        self.reasoning = Some(reasoning);
        self
    }

    /// The cost in US dollars of `usage` (the reference's `compute_model_cost`, with
    /// reasoning tokens priced apart when a reasoning price is given).
    pub fn cost(&self, usage: &ModelUsage) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        let reasoning = match (self.reasoning, usage.reasoning_tokens) {
            (Some(price), Some(tokens)) => Some((tokens.min(usage.output_tokens), price)),
            _ => None,
        };
        let output = usage.output_tokens - reasoning.map_or(0, |(tokens, _)| tokens);
        let mut cost = per(usage.input_tokens, self.input) + per(output, self.output);
        if let Some((tokens, price)) = reasoning {
            cost += per(tokens, price);
        }
        if let Some(tokens) = usage.input_tokens_cache_write {
            cost += per(tokens, self.input_cache_write.unwrap_or(self.input));
        }
        if let Some(tokens) = usage.input_tokens_cache_read {
            cost += per(tokens, self.input_cache_read.unwrap_or(self.input));
        }
        cost
    }
}

/// Prices per model name, with where they came from.
///
/// Names are Actuator's model names (`anthropic/claude-sonnet-4-5`); a dated snapshot
/// (`…-20250929`, `…-2024-08-06`) without an entry of its own takes its model's price.
///
/// ```
/// use actuator_model::pricing::{ModelCost, PriceTable};
///
/// let table = PriceTable::from_json(r#"{"source": "our contract", "date": "2026-12-01",
///     "models": {"openai/gpt-4o": {"input": 2.0, "output": 8.0}}}"#).unwrap();
/// assert_eq!(table.source(), "our contract");
/// assert_eq!(table.get("openai/gpt-4o-2024-08-06"), Some(&ModelCost::new(2.0, 8.0)));
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PriceTable {
    #[serde(default)]
    source: String,
    #[serde(default)]
    date: String,
    models: HashMap<String, ModelCost>,
}

/// A price table that could not be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "the price table is not valid: {0}. It is JSON: {{\"source\": …, \"date\": …, \"models\": {{\"provider/model\": {{\"input\": …, \"output\": …}}}}}}, prices in US dollars per million tokens"
)]
pub struct PriceTableError(#[source] serde_json::Error);

impl PriceTable {
    /// A table with no prices.
    pub fn empty() -> Self {
        PriceTable::default()
    }

    /// The shipped table (see the module docs), read once.
    pub fn builtin() -> &'static PriceTable {
        static TABLE: LazyLock<PriceTable> =
            LazyLock::new(|| PriceTable::from_json(BUILTIN).unwrap_or_default());
        &TABLE
    }

    /// A table in the shipped table's JSON format (`source`, `date`, `models`).
    ///
    /// # Errors
    /// [`PriceTableError`] when the text is not such a table; a price must be a number.
    pub fn from_json(text: &str) -> Result<Self, PriceTableError> {
        serde_json::from_str(text).map_err(PriceTableError)
    }

    /// This table with `model`'s price set.
    #[must_use]
    pub fn with(mut self, model: impl Into<String>, cost: ModelCost) -> Self {
        self.models.insert(model.into(), cost);
        self
    }

    /// Where the prices come from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// When the prices were taken (ISO 8601 date).
    pub fn date(&self) -> &str {
        &self.date
    }

    /// How many models the table prices.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether the table prices no model.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The price of `model`, or of the model a dated snapshot name belongs to.
    pub fn get(&self, model: &str) -> Option<&ModelCost> {
        self.models
            .get(model)
            .or_else(|| undated(model).and_then(|m| self.models.get(m)))
    }

    /// The cost of `usage` from `model` (the name the run called), or from the model the
    /// provider says served it (`served`, under the same provider prefix); `None` when neither
    /// has a price.
    pub fn cost(&self, model: &str, served: Option<&str>, usage: &ModelUsage) -> Option<f64> {
        let price = self
            .get(model)
            .or_else(|| served_name(model, served).and_then(|name| self.get(&name)))?;
        Some(price.cost(usage))
    }
}

/// The served model's name under the called model's provider prefix (`anthropic/` and
/// `claude-x-20260101` give `anthropic/claude-x-20260101`).
fn served_name(model: &str, served: Option<&str>) -> Option<String> {
    let served = served.filter(|s| !s.is_empty())?;
    let prefix = model.split_once('/').map_or("", |(p, _)| p);
    let name = served.rsplit('/').next().unwrap_or(served);
    Some(format!("{prefix}/{name}"))
}

/// The name without a trailing snapshot date (`-20250929` or `-2024-08-06`).
fn undated(model: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (rest, last) = model.rsplit_once('-')?;
    if last.len() == 8 && digits(last) {
        return Some(rest);
    }
    // -YYYY-MM-DD
    let (rest, day) = (rest, last);
    let (rest, month) = rest.rsplit_once('-')?;
    let (rest, year) = rest.rsplit_once('-')?;
    (year.len() == 4 && month.len() == 2 && day.len() == 2)
        .then_some(())
        .filter(|()| digits(year) && digits(month) && digits(day))
        .map(|()| rest)
}

/// Prices set with [`set_model_cost`], over the shipped table.
static OVERRIDES: LazyLock<RwLock<HashMap<String, ModelCost>>> = LazyLock::new(Default::default);

/// Sets `model`'s price for this process: every run that has no [`PriceTable`] of its own
/// uses it, over the shipped table (the reference's `set_model_cost`, which also takes models
/// its database lacks here).
///
/// ```
/// use actuator_model::pricing::{ModelCost, model_cost, set_model_cost};
/// set_model_cost("openai-api/vllm/my-model", ModelCost::new(0.1, 0.2));
/// assert_eq!(model_cost("openai-api/vllm/my-model"), Some(ModelCost::new(0.1, 0.2)));
/// ```
pub fn set_model_cost(model: impl Into<String>, cost: ModelCost) {
    OVERRIDES
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(model.into(), cost);
}

/// `model`'s price for this process: one set with [`set_model_cost`], else the shipped one.
pub fn model_cost(model: &str) -> Option<ModelCost> {
    let overrides = OVERRIDES.read().unwrap_or_else(PoisonError::into_inner);
    overrides
        .get(model)
        .or_else(|| undated(model).and_then(|m| overrides.get(m)))
        .copied()
        .or_else(|| PriceTable::builtin().get(model).copied())
}

/// The cost of `usage` from `model` (or the `served` model) at this process's prices
/// ([`set_model_cost`], then the shipped table); `None` when the price is unknown.
pub fn process_cost(model: &str, served: Option<&str>, usage: &ModelUsage) -> Option<f64> {
    model_cost(model)
        .or_else(|| served_name(model, served).and_then(|name| model_cost(&name)))
        .map(|price| price.cost(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_reads_and_says_where_it_comes_from() {
        let table = PriceTable::builtin();
        assert!(table.len() > 100, "{}", table.len());
        assert!(table.source().starts_with("litellm "), "{}", table.source());
        assert_eq!(table.date().len(), 10);
        let sonnet = table.get("anthropic/claude-sonnet-4-5").unwrap();
        assert!(sonnet.input > 0.0 && sonnet.output > sonnet.input);
        assert!(sonnet.input_cache_read.unwrap() < sonnet.input);
    }

    #[test]
    fn snapshot_dates_are_stripped_in_both_forms() {
        assert_eq!(
            undated("claude-sonnet-4-5-20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(undated("openai/gpt-4o-2024-08-06"), Some("openai/gpt-4o"));
        assert_eq!(undated("openai/gpt-4o"), None);
        assert_eq!(undated("openai/o1-2024"), None);
        assert_eq!(undated("x-12-34"), None);
    }

    #[test]
    fn reasoning_tokens_are_priced_apart_only_with_a_reasoning_price() {
        let mut usage = ModelUsage::new(0, 1_000_000);
        usage.reasoning_tokens = Some(400_000);
        assert_eq!(ModelCost::new(1.0, 10.0).cost(&usage), 10.0);
        let priced = ModelCost::new(1.0, 10.0).with_reasoning(5.0);
        assert!((priced.cost(&usage) - (6.0 + 2.0)).abs() < 1e-9);
        // More reasoning than output (a provider counting them apart) never underflows.
        usage.reasoning_tokens = Some(2_000_000);
        assert!((priced.cost(&usage) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn cache_tokens_without_a_price_of_their_own_cost_the_input_price() {
        let mut usage = ModelUsage::new(0, 0);
        usage.input_tokens_cache_write = Some(1_000_000);
        usage.input_tokens_cache_read = Some(1_000_000);
        assert_eq!(ModelCost::new(2.0, 4.0).cost(&usage), 4.0);
        assert_eq!(
            ModelCost::new(2.0, 4.0).with_cache(2.5, 0.2).cost(&usage),
            2.7
        );
    }

    #[test]
    fn a_served_snapshot_is_priced_under_the_called_models_provider() {
        let table = PriceTable::empty().with("anthropic/claude-x", ModelCost::new(1.0, 1.0));
        let usage = ModelUsage::new(1_000_000, 0);
        assert_eq!(
            table.cost("anthropic/alias", Some("claude-x-20260101"), &usage),
            Some(1.0)
        );
        assert_eq!(table.cost("anthropic/alias", None, &usage), None);
        assert_eq!(table.cost("anthropic/alias", Some(""), &usage), None);
    }

    #[test]
    fn a_bad_table_says_what_the_format_is() {
        let err = PriceTable::from_json(r#"{"models": {"a/b": {"input": "1"}}}"#).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("per million tokens"), "{text}");
        assert!(std::error::Error::source(&err).is_some());
    }
}
