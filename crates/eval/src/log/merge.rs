//! Merging the logs of a task's shards (run apart, on one machine or many) into one log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use actuator_events::Score;
use serde_json::{Map, Value, json};

use crate::error::LogError;
use crate::log::file::{LogFormat, LogWriter};
use crate::log::read::read_eval_log;
use crate::log::schema::{EvalLog, EvalResults, EvalScore};
use crate::scorer::Metric;

fn metric(name: &str) -> Option<Metric> {
    match name {
        "accuracy" => Some(Metric::Accuracy),
        "mean" => Some(Metric::Mean),
        "stderr" => Some(Metric::Stderr),
        _ => None,
    }
}

fn add_usage(total: &mut Map<String, Value>, usage: &Map<String, Value>) {
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

/// Merges the logs of one task's shards into one log in `dir`: the samples of all (in id and
/// epoch order), the metrics recomputed over them (those the reference and this crate name:
/// accuracy, mean, stderr), model usage summed, the earliest start and latest end. The status
/// is `success` only when every shard succeeded. The shards must be of the same task.
pub fn merge_logs(shards: &[PathBuf], dir: &Path, format: LogFormat) -> Result<PathBuf, LogError> {
    let mut logs: Vec<EvalLog> = shards.iter().map(read_eval_log).collect::<Result<_, _>>()?;
    let Some(first) = logs.first() else {
        return Err(LogError::Format {
            path: dir.to_owned(),
            reason: "no shard logs to merge".into(),
        });
    };
    let task = first.eval.task.clone();
    if let Some((i, other)) = logs.iter().enumerate().find(|(_, l)| l.eval.task != task) {
        return Err(LogError::Format {
            path: shards[i].clone(),
            reason: format!("it is a log of task '{}', not '{task}'", other.eval.task),
        });
    }
    let mut merged = first.clone();
    let mut samples = Vec::new();
    let mut usage = Map::new();
    let mut status = "success".to_owned();
    for log in &mut logs {
        samples.extend(log.samples.take().unwrap_or_default());
        add_usage(&mut usage, &log.stats.model_usage);
        if log.status != "success" {
            status.clone_from(&log.status);
        }
        if log.stats.started_at < merged.stats.started_at {
            merged.stats.started_at.clone_from(&log.stats.started_at);
        }
        if log.stats.completed_at > merged.stats.completed_at {
            merged
                .stats
                .completed_at
                .clone_from(&log.stats.completed_at);
        }
    }
    samples.sort_by(|a, b| (&a.id, a.epoch).cmp(&(&b.id, b.epoch)));
    merged.eval.dataset.sample_ids = logs
        .iter()
        .flat_map(|l| l.eval.dataset.sample_ids.clone())
        .collect();
    merged.eval.dataset.sample_ids.sort();
    merged.eval.dataset.samples = merged.eval.dataset.sample_ids.len();
    merged.status = status;
    // A new evaluation: its own id, so that it never takes a shard's file name.
    merged.eval.eval_id = actuator_model::new_id().into_string();
    merged.stats.model_usage = usage;

    // Metrics over all samples, per scorer of the spec.
    let scorers: Vec<(String, Vec<String>)> = merged
        .eval
        .scorers
        .clone()
        .unwrap_or_default()
        .iter()
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
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut unscored: BTreeMap<String, usize> = BTreeMap::new();
    for s in &samples {
        for (name, _) in &scorers {
            match s
                .scores
                .as_ref()
                .and_then(|m| m.get(name))
                .and_then(|v| serde_json::from_value::<Score>(v.clone()).ok())
            {
                Some(score) => values.entry(name.clone()).or_default().push(score.as_f64()),
                None => *unscored.entry(name.clone()).or_default() += 1,
            }
        }
    }
    let scores = scorers
        .iter()
        .map(|(name, metrics)| {
            let vals = values.get(name).cloned().unwrap_or_default();
            EvalScore {
                name: name.clone(),
                scorer: name.clone(),
                scored_samples: vals.len(),
                unscored_samples: unscored.get(name).copied().unwrap_or(0),
                params: Map::new(),
                metrics: metrics
                    .iter()
                    .filter_map(|m| {
                        metric(m).map(|metric| {
                            (
                                m.clone(),
                                json!({"name": m, "value": metric.compute(&vals), "params": {}}),
                            )
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    let completed = samples.iter().filter(|s| s.error.is_none()).count();
    merged.results = Some(EvalResults {
        total_samples: logs
            .iter()
            .filter_map(|l| l.results.as_ref())
            .map(|r| r.total_samples)
            .sum(),
        completed_samples: completed,
        scores,
    });

    let mut start = merged.clone();
    start.status = "started".into();
    let mut writer = LogWriter::create(dir, &start, format, samples.len().max(1))?;
    for s in samples {
        writer.sample(s)?;
    }
    writer.finish(&merged)
}
