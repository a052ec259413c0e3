//! Merging the logs of a task's shards (run apart, on one machine or many) into one log.
//!
//! The logs are read one after another, one sample at a time, and each sample is handed to the
//! new log's writer as it is read (which writes it out once a few MiB wait): what is held is
//! one shard's header, one sample, the writer's buffer, and per sample its key, its scores and
//! a directory entry.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};
use serde_json::Map;

use crate::error::LogError;
use crate::log::file::{LogFormat, LogWriter};
use crate::log::read::{for_each_sample, read_log_header};
use crate::log::results::{ResultsTally, add_usage};
use crate::log::schema::EvalLog;
use crate::sample::SampleId;

/// The most bytes of serialized samples the merge lets wait before writing them.
const MAX_BUFFERED_BYTES: usize = 8 << 20;

/// What [`merge_logs`] made.
///
/// ```no_run
/// use std::path::PathBuf;
/// use actuator_eval::LogFormat;
/// use actuator_eval::log::merge_logs;
///
/// # fn main() -> Result<(), actuator_eval::LogError> {
/// // The logs of every shard, and of any retry of a shard that crashed.
/// let logs: Vec<PathBuf> = std::fs::read_dir("logs")
///     .map_err(|source| actuator_eval::LogError::Io { path: "logs".into(), source })?
///     .filter_map(|e| Some(e.ok()?.path()))
///     .filter(|p| p.extension().is_some_and(|e| e == "eval"))
///     .collect();
/// let merged = merge_logs(&logs, "merged".as_ref(), LogFormat::Eval)?;
/// println!("{} samples in {}", merged.samples, merged.path.display());
/// for old in &merged.superseded {
///     println!("left out {}: a later retry of it was merged", old.display());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergedLog {
    /// The merged log.
    pub path: PathBuf,
    /// The samples it holds (each sample id and epoch once).
    pub samples: usize,
    /// The logs given that were left out: each superseded by a later log of the same task
    /// run (the same `task_id`: its retry by [`eval_retry`](crate::eval_retry)).
    pub superseded: Vec<PathBuf>,
}

/// One log to merge: its path, its header, and when it was created.
struct Input {
    path: PathBuf,
    header: EvalLog,
    created: Option<DateTime<FixedOffset>>,
}

impl Input {
    /// When it was created, for ordering: the instant when `eval.created` reads as one, and
    /// the text.
    fn when(&self) -> (Option<DateTime<FixedOffset>>, &str) {
        (self.created, &self.header.eval.created)
    }
}

/// Merges the logs of one task's shards into one log in `dir`.
///
/// The merged log has the samples of all, the metrics recomputed over them (those the
/// reference and this crate name: accuracy, mean, stderr), model usage summed, the earliest
/// start and latest end; its status is `success` only when every log merged succeeded.
///
/// - **Retries supersede.** Logs of the same task run (the same `task_id`, which
///   [`eval_retry`](crate::eval_retry) keeps) count once: the one created last is merged, the
///   others are left out and listed in [`MergedLog::superseded`]. So the logs of all shards
///   and of the retry of one that crashed merge as they lie in their directory.
/// - **Every sample once.** Two logs merged that hold the same sample id and epoch are a
///   [`LogError::DuplicateSample`] naming both (the same shard run twice as two evaluations);
///   nothing is left in `dir` then. A path given twice is read once.
/// - **Memory** is bounded by one shard, not by all: samples are read and written one at a
///   time (a `.json` shard is read whole, as its format needs).
/// - **Order.** The samples are in the order of the logs given, each log's in its own order;
///   [`read_eval_log`](crate::read_eval_log) sorts them by id and epoch, and the reference
///   reads them by name.
///
/// The logs must be of the same task.
pub fn merge_logs(
    shards: &[PathBuf],
    dir: &Path,
    format: LogFormat,
) -> Result<MergedLog, LogError> {
    let (inputs, superseded) = inputs(shards, dir)?;
    let Some(first) = inputs.first() else {
        return Err(no_logs(dir));
    };
    let merged = merged_header(&first.header, &inputs);

    let mut start = merged.clone();
    start.status = "started".into();
    start.results = None;
    let mut writer = LogWriter::create(dir, &start, format, 1000)?;
    let mut tally = ResultsTally::new(&merged.eval);
    let mut seen: HashMap<(SampleId, u32), usize> = HashMap::new();
    let mut samples = 0;
    for (i, input) in inputs.iter().enumerate() {
        let read = for_each_sample(&input.path, |_, sample| {
            match seen.entry((sample.id.clone(), sample.epoch)) {
                Entry::Occupied(first) => {
                    return Err(LogError::DuplicateSample {
                        id: sample.id,
                        epoch: sample.epoch,
                        first: inputs[*first.get()].path.clone(),
                        second: input.path.clone(),
                    });
                }
                Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
            tally.add(&sample);
            writer.sample(sample)?;
            if writer.buffered_bytes() >= MAX_BUFFERED_BYTES {
                writer.flush()?;
            }
            samples += 1;
            Ok(())
        });
        if let Err(e) = read {
            // A log half made is no merge: nothing is left of it.
            writer.discard();
            return Err(e);
        }
    }
    drop(seen);

    let mut merged = merged;
    merged.results = Some(
        tally.results(
            inputs
                .iter()
                .filter_map(|l| l.header.results.as_ref())
                .map(|r| r.total_samples)
                .sum(),
        ),
    );
    let path = writer.finish(&merged)?;
    Ok(MergedLog {
        path,
        samples,
        superseded,
    })
}

fn no_logs(dir: &Path) -> LogError {
    LogError::Format {
        path: dir.to_owned(),
        reason: "no shard logs to merge".into(),
    }
}

/// The headers of the logs `shards` (each path once), checked to be of one task, without those
/// a later log of the same task run supersedes; and those.
fn inputs(shards: &[PathBuf], dir: &Path) -> Result<(Vec<Input>, Vec<PathBuf>), LogError> {
    let mut inputs: Vec<Input> = Vec::new();
    let mut paths = HashSet::new();
    for path in shards {
        let same = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !paths.insert(same) {
            continue;
        }
        let header = read_log_header(path)?;
        let created = DateTime::parse_from_rfc3339(&header.eval.created).ok();
        inputs.push(Input {
            path: path.clone(),
            header,
            created,
        });
    }
    let Some(first) = inputs.first() else {
        return Err(no_logs(dir));
    };
    let task = first.header.eval.task.clone();
    if let Some(other) = inputs.iter().find(|l| l.header.eval.task != task) {
        return Err(LogError::Format {
            path: other.path.clone(),
            reason: format!(
                "it is a log of task '{}', not '{task}'",
                other.header.eval.task
            ),
        });
    }
    // Of the logs of one task run, the one created last; two created at the same instant are
    // both kept (their samples then meet as duplicates): neither is the other's retry.
    let superseded_at: Vec<bool> = inputs
        .iter()
        .map(|l| {
            inputs
                .iter()
                .any(|o| o.header.eval.task_id == l.header.eval.task_id && o.when() > l.when())
        })
        .collect();
    let mut kept = Vec::new();
    let mut superseded = Vec::new();
    for (input, old) in inputs.into_iter().zip(superseded_at) {
        if old {
            superseded.push(input.path);
        } else {
            kept.push(input);
        }
    }
    Ok((kept, superseded))
}

/// The merged log's header, without results: that of `first`, with the sample ids,
/// usage, times and status of all, and an id of its own.
fn merged_header(first: &EvalLog, inputs: &[Input]) -> EvalLog {
    let mut merged = first.clone();
    merged.samples = None;
    let mut usage = Map::new();
    let mut status = "success".to_owned();
    for log in inputs.iter().map(|i| &i.header) {
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
    merged.eval.dataset.sample_ids = inputs
        .iter()
        .flat_map(|l| l.header.eval.dataset.sample_ids.iter().cloned())
        .collect();
    merged.eval.dataset.sample_ids.sort();
    merged.eval.dataset.sample_ids.dedup();
    merged.eval.dataset.samples = merged.eval.dataset.sample_ids.len();
    merged.status = status;
    // A new evaluation: its own id, so that it never takes a shard's file name.
    merged.eval.eval_id = actuator_model::new_id().into_string();
    merged.stats.model_usage = usage;
    // Every shard's limit changes, in time order, and their throughput added up over the
    // merged run's span.
    merged.stats.connection_limit_history = inputs
        .iter()
        .flat_map(|i| i.header.stats.connection_limit_history.iter().cloned())
        .collect();
    merged
        .stats
        .connection_limit_history
        .sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
    let span = match (
        chrono::DateTime::parse_from_rfc3339(&merged.stats.started_at),
        chrono::DateTime::parse_from_rfc3339(&merged.stats.completed_at),
    ) {
        (Ok(start), Ok(end)) => (end - start).num_milliseconds() as f64 / 1e3,
        _ => 0.0,
    };
    merged.stats.model_throughput = crate::throughput::merge_throughput(
        inputs.iter().map(|i| &i.header.stats.model_throughput),
        span,
    );
    merged
}
