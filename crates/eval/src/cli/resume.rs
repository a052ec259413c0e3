//! `eval --resume`: a run whose log is already in the log directory is not run again from
//! scratch. Batch schedulers run a shard again on their own (Kubernetes' `backoffLimitPerIndex`,
//! Slurm's `--requeue`); without this, the second attempt would redo the samples the first
//! finished, and its log would hold the same samples as the first's, which `merge` refuses.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::CliError;
use super::logs::logs_in;
use crate::log::read::read_log_header;
use crate::log::schema::EvalLog;
use crate::sample::SampleId;
use crate::task::Task;

/// The latest log in `dir` of this same run: the task's name, its `-T` arguments, its model
/// (when `--model` named one), its samples and its epochs. Logs that cannot be read are
/// skipped (they are not this run's to judge).
pub(super) fn previous_run(
    dir: &Path,
    task: &Task,
    task_args: &Map<String, Value>,
    model: Option<&str>,
) -> Result<Option<(PathBuf, EvalLog)>, CliError> {
    if !dir.is_dir() {
        // No directory yet: nothing ran.
        return Ok(None);
    }
    let ids: HashSet<SampleId> = task
        .dataset
        .samples
        .iter()
        .filter_map(|s| s.id.clone())
        .collect();
    let mut latest: Option<(PathBuf, EvalLog)> = None;
    for path in logs_in(dir)? {
        let Ok(header) = read_log_header(&path) else {
            continue;
        };
        let spec = &header.eval;
        let same = spec.task == task.name
            && spec.task_args == *task_args
            && model.is_none_or(|m| spec.model == m)
            && spec.config.get("epochs").and_then(Value::as_u64) == Some(u64::from(task.epochs))
            && spec.dataset.sample_ids.len() == ids.len()
            && spec.dataset.sample_ids.iter().all(|id| ids.contains(id));
        let later = latest
            .as_ref()
            .is_none_or(|(_, l)| spec.created > l.eval.created);
        if same && later {
            latest = Some((path, header));
        }
    }
    Ok(latest)
}
