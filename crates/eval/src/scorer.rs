//! Scorers judge a sample's final state against its target; metrics summarise a scorer's
//! scores over the samples.

use std::sync::Arc;

use actuator_events::Score;
use actuator_model::BoxFuture;
use actuator_multi::TaskState;

use crate::error::ScoreError;
use crate::sample::Target;

/// Judges one sample: its final state against its target.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scorer",
    note = "implement `actuator_eval::Scorer`, or use a built-in one (`match_`, `includes`, `pattern`, `exact`, `f1`, `model_graded_qa`)"
)]
pub trait Scorer: Send + Sync {
    /// The scorer's name in the log (`match`, `includes`, …).
    fn name(&self) -> &str;

    /// The metrics computed over its scores (default: accuracy and stderr, as the
    /// reference's `match`).
    fn metrics(&self) -> Vec<Metric> {
        vec![Metric::Accuracy, Metric::Stderr]
    }

    /// Scores one sample.
    fn score<'a>(
        &'a self,
        state: &'a TaskState,
        target: &'a Target,
    ) -> BoxFuture<'a, Result<Score, ScoreError>>;
}

/// A scorer shared between samples.
pub type SharedScorer = Arc<dyn Scorer>;

/// A summary of one scorer's values over the samples (the reference's metrics of the same
/// names). Values are converted with [`Score::as_f64`] (the reference's `value_to_float`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Metric {
    /// The mean of the values (`C` = 1, `I` = 0, …); 0 with no scores.
    Accuracy,
    /// The mean of the values; 0 with no scores.
    Mean,
    /// The standard error of the mean: the sample standard deviation (n − 1) over √n; 0 with
    /// fewer than two scores.
    Stderr,
}

impl Metric {
    /// The metric's name in the log.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Accuracy => "accuracy",
            Metric::Mean => "mean",
            Metric::Stderr => "stderr",
        }
    }

    /// The metric over `values`.
    ///
    /// ```
    /// use actuator_eval::Metric;
    /// assert_eq!(Metric::Accuracy.compute(&[1.0, 0.0, 1.0, 1.0]), 0.75);
    /// assert_eq!(Metric::Stderr.compute(&[1.0]), 0.0);
    /// assert!((Metric::Stderr.compute(&[1.0, 0.0, 1.0, 1.0]) - 0.25).abs() < 1e-12);
    /// ```
    pub fn compute(self, values: &[f64]) -> f64 {
        let n = values.len();
        let mean = || {
            if n == 0 {
                0.0
            } else {
                values.iter().sum::<f64>() / n as f64
            }
        };
        match self {
            Metric::Accuracy | Metric::Mean => mean(),
            Metric::Stderr => {
                if n < 2 {
                    return 0.0;
                }
                let m = mean();
                let var = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64;
                var.sqrt() / (n as f64).sqrt()
            }
        }
    }
}
