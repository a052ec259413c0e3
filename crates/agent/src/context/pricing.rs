//! A generation's cost: the provider's own figure when it gives one, else the run's prices
//! (a [`PriceTable`] resource) or the process's ([`actuator_model::pricing`]). A cost limit on a
//! model whose price is unknown is an error at its first generation, not a limit that never
//! trips.

use actuator_model::ModelOutput;
use actuator_model::pricing::{PriceTable, process_cost};

use super::RunContext;
use crate::error::{AgentError, AgentErrorKind};

impl RunContext {
    /// `output` with its usage's `total_cost` set from the prices, when the provider gave
    /// none and the price of `model` (or of the model that served it) is known.
    pub(super) fn priced(&self, model: &str, mut output: ModelOutput) -> ModelOutput {
        let served = output.model.clone();
        if let Some(usage) = output.usage.as_mut().filter(|u| u.total_cost.is_none()) {
            usage.total_cost = match self.resource::<PriceTable>() {
                Some(table) => table.cost(model, Some(&served), usage),
                None => process_cost(model, Some(&served), usage),
            };
        }
        output
    }

    /// An error when a scope of the run has a cost limit and this generation's cost could
    /// not be counted (the model reported usage, but its price is unknown).
    pub(super) fn check_priced(&self, model: &str, output: &ModelOutput) -> Result<(), AgentError> {
        let unpriced = output
            .usage
            .as_ref()
            .is_some_and(|u| u.total_cost.is_none());
        if unpriced && self.budget().scopes().iter().any(|s| s.has_cost_limit()) {
            return Err(AgentError::new(AgentErrorKind::Config(format!(
                "a cost limit is set, but the price of model '{model}' is unknown, so its cost cannot be counted: set it with actuator::model::pricing::set_model_cost(\"{model}\", ModelCost::new(input, output)) (US dollars per million tokens) or give the run a PriceTable resource"
            ))));
        }
        Ok(())
    }
}
