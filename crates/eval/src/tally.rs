//! What an evaluation counts of its samples as they finish, and the errors it keeps.

use std::collections::BTreeMap;

use actuator_model::ModelUsage;

use crate::sample_run::{SampleOutcome, add_usage};

/// The samples' errors an [`EvalRun`](crate::EvalRun) keeps (the first ones); the rest are counted, and every
/// one is in the log.
pub const MAX_KEPT_ERRORS: usize = 100;

/// A sample's error: which sample, which epoch, and the full message (the log's `error`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SampleError {
    /// The sample's id.
    pub id: crate::SampleId,
    /// The epoch (from 1).
    pub epoch: u32,
    /// What went wrong, with its causes.
    pub message: String,
}

impl std::fmt::Display for SampleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sample {} (epoch {}): {}",
            self.id, self.epoch, self.message
        )
    }
}

/// What the run counts of its samples as they finish: scores for the metrics, completions,
/// errors (the first kept), usage.
pub(crate) struct Tally {
    pub(crate) values: Vec<Vec<f64>>,
    pub(crate) unscored: Vec<usize>,
    pub(crate) completed: usize,
    pub(crate) errors: usize,
    pub(crate) usage: BTreeMap<String, ModelUsage>,
    /// The first samples' errors ([`MAX_KEPT_ERRORS`]).
    pub(crate) kept: Vec<SampleError>,
}

impl Tally {
    /// A tally for `scorers` scorers.
    pub(crate) fn new(scorers: usize) -> Self {
        Tally {
            values: vec![Vec::new(); scorers],
            unscored: vec![0; scorers],
            completed: 0,
            errors: 0,
            usage: BTreeMap::new(),
            kept: Vec::new(),
        }
    }

    pub(crate) fn add(&mut self, outcome: &SampleOutcome) {
        if outcome.failed {
            self.errors += 1;
            if self.kept.len() < MAX_KEPT_ERRORS
                && let Some(error) = &outcome.entry.error
            {
                self.kept.push(SampleError {
                    id: outcome.entry.id.clone(),
                    epoch: outcome.entry.epoch,
                    message: error.message.clone(),
                });
            }
        } else {
            self.completed += 1;
        }
        for (i, score) in outcome.scores.iter().enumerate() {
            match score {
                Some(s) => self.values[i].push(s.as_f64()),
                None => self.unscored[i] += 1,
            }
        }
        for (model, u) in &outcome.usage {
            add_usage(self.usage.entry(model.clone()).or_default(), u);
        }
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.usage.values().map(|u| u.total_tokens).sum()
    }
}
