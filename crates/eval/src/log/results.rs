//! An evaluation's results recomputed from the samples of its log, one sample at a time:
//! for merged shards, a recovered log and a retried evaluation's kept samples.

use std::collections::BTreeMap;

use actuator_events::Score;
use serde_json::{Map, Value, json};

use crate::log::schema::{EvalResults, EvalSample, EvalScore, EvalSpec};
use crate::scorer::Metric;

/// The metric the reference and this crate call `name`.
pub(crate) fn metric(name: &str) -> Option<Metric> {
    match name {
        "accuracy" => Some(Metric::Accuracy),
        "mean" => Some(Metric::Mean),
        "stderr" => Some(Metric::Stderr),
        _ => None,
    }
}

/// The score a sample of the log has from `scorer`, when it has one.
pub(crate) fn sample_score(sample: &EvalSample, scorer: &str) -> Option<Score> {
    let value = sample.scores.as_ref()?.get(scorer)?;
    serde_json::from_value(value.clone()).ok()
}

/// Adds the model usage `usage` (model → usage, as the log writes it) to `total`.
pub(crate) fn add_usage(total: &mut Map<String, Value>, usage: &Map<String, Value>) {
    for (model, u) in usage {
        let entry = total.entry(model.clone()).or_insert_with(|| json!({}));
        if let (Value::Object(t), Value::Object(u)) = (entry, u) {
            for (k, v) in u {
                let sum =
                    t.get(k).and_then(Value::as_f64).unwrap_or(0.0) + v.as_f64().unwrap_or(0.0);
                let value = if v.is_u64() {
                    json!(sum as u64)
                } else {
                    json!(sum)
                };
                t.insert(k.clone(), value);
            }
        }
    }
}

/// The scores of the samples added so far, per scorer of a spec, and how many completed.
pub(crate) struct ResultsTally {
    /// Each scorer of the spec with its metrics' names.
    scorers: Vec<(String, Vec<String>)>,
    values: BTreeMap<String, Vec<f64>>,
    unscored: BTreeMap<String, usize>,
    completed: usize,
    pub(crate) usage: Map<String, Value>,
}

impl ResultsTally {
    /// An empty tally for the scorers `spec` names.
    pub(crate) fn new(spec: &EvalSpec) -> Self {
        let scorers = spec
            .scorers
            .iter()
            .flatten()
            .filter_map(|s| {
                let name = s.get("name")?.as_str()?.to_owned();
                let metrics = s
                    .get("metrics")?
                    .as_array()?
                    .iter()
                    .filter_map(|m| m.get("name")?.as_str().map(str::to_owned))
                    .collect();
                Some((name, metrics))
            })
            .collect();
        ResultsTally {
            scorers,
            values: BTreeMap::new(),
            unscored: BTreeMap::new(),
            completed: 0,
            usage: Map::new(),
        }
    }

    /// Counts `sample`: its scores, whether it completed, its usage.
    pub(crate) fn add(&mut self, sample: &EvalSample) {
        for (name, _) in &self.scorers {
            match sample_score(sample, name) {
                Some(score) => self
                    .values
                    .entry(name.clone())
                    .or_default()
                    .push(score.as_f64()),
                None => *self.unscored.entry(name.clone()).or_default() += 1,
            }
        }
        if sample.error.is_none() {
            self.completed += 1;
        }
        add_usage(&mut self.usage, &sample.model_usage);
    }

    /// The results over the samples added, of an evaluation of `total` samples.
    pub(crate) fn results(&self, total: usize) -> EvalResults {
        let scores = self
            .scorers
            .iter()
            .map(|(name, metrics)| {
                let vals = self.values.get(name).map_or(&[][..], Vec::as_slice);
                EvalScore {
                    name: name.clone(),
                    scorer: name.clone(),
                    scored_samples: vals.len(),
                    unscored_samples: self.unscored.get(name).copied().unwrap_or(0),
                    params: Map::new(),
                    metrics: metrics
                        .iter()
                        .filter_map(|m| {
                            metric(m).map(|metric| {
                                (
                                    m.clone(),
                                    json!({"name": m, "value": metric.compute(vals), "params": {}}),
                                )
                            })
                        })
                        .collect(),
                }
            })
            .collect();
        EvalResults {
            total_samples: total,
            completed_samples: self.completed,
            scores,
        }
    }
}
