//! What a retry takes from the log of the run it retries: the samples it keeps, the errors of
//! those it runs again, and how each new entry is marked.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use actuator_model::ModelUsage;

use crate::error::EvalError;
use crate::log::file::LogWriter;
use crate::log::read::for_each_sample;
use crate::log::results::sample_score;
use crate::log::schema::{EvalErrorInfo, EvalSample, SampleAttempt};
use crate::progress::Progress;
use crate::sample::SampleId;
use crate::sample_run::SampleOutcome;
use crate::tally::Tally;
use crate::task::Task;

/// What a retry takes from the log of the run it retries.
pub(crate) struct Previous {
    path: PathBuf,
    /// The task's id in that log, kept by the retry (as the reference keeps it).
    pub(crate) task_id: String,
    /// The samples it finished: `(id, epoch)`.
    kept: HashSet<(SampleId, u32)>,
    /// The errors of the samples that failed, which the retry runs again.
    errors: HashMap<(SampleId, u32), EvalErrorInfo>,
}

impl Previous {
    /// Reads the log `path` of an earlier run of `task`: which samples it finished, and the
    /// errors of those it did not.
    pub(crate) fn read(task: &Task, path: &Path) -> Result<Self, EvalError> {
        let ids: HashSet<SampleId> = task.dataset.ids()?.into_iter().collect();
        let mut kept = HashSet::new();
        let mut errors = HashMap::new();
        let mismatch = |reason: String| EvalError::Retry {
            path: path.to_owned(),
            reason,
        };
        let mut foreign = None;
        let head = for_each_sample(path, |start, sample| {
            // A log of another task is refused below, whatever its samples.
            if start.eval.task != task.name {
                return Ok(());
            }
            let key = (sample.id.clone(), sample.epoch);
            if !ids.contains(&sample.id) || sample.epoch == 0 || sample.epoch > task.epochs {
                foreign.get_or_insert_with(|| key.clone());
            }
            match sample.error {
                None => {
                    errors.remove(&key);
                    kept.insert(key);
                }
                Some(error) if !kept.contains(&key) => {
                    errors.insert(key, error);
                }
                Some(_) => {}
            }
            Ok(())
        })?;
        if head.log.eval.task != task.name {
            return Err(mismatch(format!(
                "it is a log of task '{}', not '{}': retry a log with the task that wrote it",
                head.log.eval.task, task.name
            )));
        }
        if let Some((id, epoch)) = foreign {
            return Err(mismatch(format!(
                "it has sample {id} (epoch {epoch}), which task '{}' (with {} epochs) does not \
                 have: retry a log with the task that wrote it, unchanged",
                task.name, task.epochs
            )));
        }
        Ok(Previous {
            path: path.to_owned(),
            task_id: head.log.eval.task_id,
            kept,
            errors,
        })
    }

    /// Whether sample `id`, epoch `epoch` finished in the earlier run (and so is not run).
    pub(crate) fn kept(&self, id: &SampleId, epoch: u32) -> bool {
        self.kept.contains(&(id.clone(), epoch))
    }

    /// Marks the entry of a sample this retry ran: resumed from its checkpoint or restarted,
    /// with the earlier run's error (when it failed then) first among its retried errors.
    pub(crate) fn mark_restarted(&self, entry: &mut EvalSample, resumed: bool) {
        entry.attempt = Some(if resumed {
            SampleAttempt::Resume
        } else {
            SampleAttempt::Restart
        });
        if let Some(error) = self.errors.get(&(entry.id.clone(), entry.epoch)) {
            entry
                .error_retries
                .get_or_insert_with(Vec::new)
                .insert(0, error.clone());
        }
    }

    /// Counts the earlier run's finished samples into `tally` and writes them to `writer`,
    /// as they were (marked as the first run's when they have no mark yet), one at a time.
    pub(crate) fn write_kept(
        &self,
        scorers: &[String],
        tally: &mut Tally,
        progress: &Progress,
        mut writer: Option<&mut LogWriter>,
    ) -> Result<(), EvalError> {
        let mut written = HashSet::new();
        for_each_sample(&self.path, |_, mut sample| {
            let key = (sample.id.clone(), sample.epoch);
            if sample.error.is_some() || !self.kept.contains(&key) || !written.insert(key) {
                return Ok(());
            }
            sample.attempt.get_or_insert(SampleAttempt::Initial);
            let scores = scorers
                .iter()
                .map(|name| sample_score(&sample, name))
                .collect();
            let usage: BTreeMap<String, ModelUsage> = sample
                .model_usage
                .iter()
                .filter_map(|(model, u)| {
                    Some((model.clone(), serde_json::from_value(u.clone()).ok()?))
                })
                .collect();
            let outcome = SampleOutcome {
                entry: sample,
                scores,
                usage,
                failed: false,
                resumed: false,
                finished_checkpoints: None,
            };
            tally.add(&outcome);
            progress.started();
            progress.finished(false, tally.tokens());
            match writer.as_deref_mut() {
                Some(w) => w.sample(outcome.entry),
                None => Ok(()),
            }
        })?;
        Ok(())
    }
}
