//! Merging the logs of a task's shards (run apart, on one machine or many) into one log.

use std::path::{Path, PathBuf};

use serde_json::Map;

use crate::error::LogError;
use crate::log::file::{LogFormat, LogWriter};
use crate::log::read::read_eval_log;
use crate::log::results::{ResultsTally, add_usage};
use crate::log::schema::EvalLog;

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
    let mut tally = ResultsTally::new(&merged.eval);
    for s in &samples {
        tally.add(s);
    }
    merged.results = Some(
        tally.results(
            logs.iter()
                .filter_map(|l| l.results.as_ref())
                .map(|r| r.total_samples)
                .sum(),
        ),
    );

    let mut start = merged.clone();
    start.status = "started".into();
    let mut writer = LogWriter::create(dir, &start, format, samples.len().max(1))?;
    for s in samples {
        writer.sample(s)?;
    }
    writer.finish(&merged)
}
