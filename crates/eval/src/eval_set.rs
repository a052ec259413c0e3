//! `eval_set`: several tasks into one log directory, retried until each is done.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::EvalError;
use crate::log::read::read_log_header;
use crate::log::schema::EvalLog;
use crate::options::EvalOptions;
use crate::retry::eval_retry;
use crate::run::{EvalRun, eval};
use crate::task::Task;

/// How [`eval_set`] retries (the reference's `retry_*` arguments of `eval_set`).
///
/// ```
/// use std::time::Duration;
/// use actuator_eval::EvalSetOptions;
/// let set = EvalSetOptions::new().retry_attempts(3).retry_wait(Duration::from_secs(5));
/// assert_eq!(set.retry_attempts, 3);
/// assert!(set.retry_cleanup);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EvalSetOptions {
    /// Retries of a task whose evaluation did not succeed, after its first run (default 10).
    pub retry_attempts: u32,
    /// The wait before the first retry, doubled before each next one up to an hour (default
    /// 30 s, as the reference's).
    pub retry_wait: Duration,
    /// Whether the log of a failed attempt is removed once a retry of it has written its own
    /// (which holds every sample the failed one finished); default `true`, as the reference.
    pub retry_cleanup: bool,
}

impl Default for EvalSetOptions {
    fn default() -> Self {
        EvalSetOptions {
            retry_attempts: 10,
            retry_wait: Duration::from_secs(30),
            retry_cleanup: true,
        }
    }
}

impl EvalSetOptions {
    /// The reference's defaults: 10 retries, 30 s first wait, failed logs cleaned up.
    pub fn new() -> Self {
        Self::default()
    }

    /// Retries of a task after its first run.
    #[must_use]
    pub fn retry_attempts(mut self, n: u32) -> Self {
        self.retry_attempts = n;
        self
    }

    /// The wait before the first retry (doubled each time after).
    #[must_use]
    pub fn retry_wait(mut self, wait: Duration) -> Self {
        self.retry_wait = wait;
        self
    }

    /// Whether a failed attempt's log is removed once retried.
    #[must_use]
    pub fn retry_cleanup(mut self, on: bool) -> Self {
        self.retry_cleanup = on;
        self
    }
}

/// What an [`eval_set`] did: every task's last run, in the order of the tasks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EvalSetRun {
    /// Whether every task's evaluation succeeded.
    pub success: bool,
    /// Each task's last run (read back from its log for a task that was already done).
    pub runs: Vec<EvalRun>,
    /// How many evaluations ran (first runs and retries; none for a task already done).
    pub attempts: usize,
}

/// The newest log of task `name` in `dir`, and its header.
fn latest_log(dir: &Path, name: &str) -> Result<Option<(PathBuf, EvalLog)>, EvalError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut latest: Option<(PathBuf, EvalLog)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let is_log = path.extension().is_some_and(|e| e == "eval" || e == "json");
        // A recovery's output or a file being assembled is not an attempt of the set.
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if !is_log || stem.is_some_and(|s| s.ends_with("-recovered") || s.contains(".partial")) {
            continue;
        }
        // Files that are not logs (or not readable ones) are not this set's.
        let Ok(header) = read_log_header(&path) else {
            continue;
        };
        if header.eval.task != name {
            continue;
        }
        if latest
            .as_ref()
            .is_none_or(|(_, l)| header.eval.created > l.eval.created)
        {
            latest = Some((path, header));
        }
    }
    Ok(latest)
}

/// The run of a task whose log `path` (header `header`) says it is done.
fn done_run(path: &Path, header: &EvalLog) -> EvalRun {
    let results = header.results.as_ref();
    EvalRun {
        log: header.clone(),
        location: Some(path.to_owned()),
        errors: Vec::new(),
        error_count: results.map_or(0, |r| r.total_samples.saturating_sub(r.completed_samples)),
    }
}

/// Removes a retried attempt's log (and a `.json` log's spool, if its process died).
fn remove_log(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(path.with_extension("samples.jsonl"));
}

/// Runs every task of `tasks` into the log directory `log_dir` (the reference's `eval_set`):
/// a task whose newest log there succeeded is skipped, one whose newest log did not succeed
/// (failed, cancelled, or its process died) is retried from it with
/// [`eval_retry`](crate::eval_retry), keeping its finished samples, and the others run.
/// A task that does not succeed is retried, after a wait that doubles each time, until it
/// does or `set.retry_attempts` retries have run. Run it again after a crash, with the same
/// tasks and directory, to finish what is left. Tasks run one after another, each with
/// `options` (its log in `log_dir`); a stop ([`EvalOptions::stop`]) ends the set after the
/// running evaluation, without retrying.
///
/// Tasks are known by name in the directory: names must be unique.
///
/// ```no_run
/// # async fn run(a: actuator_eval::Task, b: actuator_eval::Task) -> Result<(), actuator_eval::EvalError> {
/// use actuator_eval::{EvalOptions, EvalSetOptions, eval_set};
/// let set = eval_set(&[a, b], "logs/set-1", EvalOptions::new(), EvalSetOptions::new()).await?;
/// assert!(set.success, "{:?}", set.runs.iter().map(|r| r.log.status.clone()).collect::<Vec<_>>());
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// Two tasks with one name; otherwise as [`eval`](crate::eval) and
/// [`eval_retry`](crate::eval_retry), for the first task whose evaluation could not run.
pub async fn eval_set(
    tasks: &[Task],
    log_dir: impl AsRef<Path>,
    options: EvalOptions,
    set: EvalSetOptions,
) -> Result<EvalSetRun, EvalError> {
    let dir = log_dir.as_ref();
    let mut names = HashSet::new();
    if let Some(twice) = tasks.iter().find(|t| !names.insert(t.name.as_str())) {
        return Err(EvalError::Options(format!(
            "two tasks of the set are named '{}': eval_set knows a task's logs by its name, so \
             names must be unique (Task::name)",
            twice.name
        )));
    }
    let mut options = options;
    options.log_dir = Some(dir.to_owned());
    let mut runs = Vec::with_capacity(tasks.len());
    let mut attempts = 0;
    let mut success = true;
    for task in tasks {
        let mut previous = latest_log(dir, &task.name)?;
        if let Some((path, header)) = &previous
            && header.status == "success"
        {
            // Done before: nothing to run.
            runs.push(done_run(path, header));
            continue;
        }
        let mut retries_left = set.retry_attempts;
        let mut wait = set.retry_wait;
        let run = loop {
            attempts += 1;
            let run = match &previous {
                Some((path, _)) => {
                    let run = eval_retry(task, path, options.clone()).await?;
                    if set.retry_cleanup && run.location.as_deref() != Some(path.as_path()) {
                        remove_log(path);
                    }
                    run
                }
                None => eval(task, options.clone()).await?,
            };
            if run.log.status == "success" || options.stop.is_stopped() || retries_left == 0 {
                break run;
            }
            let Some(location) = run.location.clone() else {
                break run;
            };
            retries_left -= 1;
            tracing::info!(
                task = task.name.as_str(),
                status = run.log.status.as_str(),
                wait_s = wait.as_secs_f64(),
                "retrying the task's evaluation"
            );
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(3600));
            previous = Some((location, run.log.clone()));
        };
        success &= run.log.status == "success";
        runs.push(run);
        if options.stop.is_stopped() {
            break;
        }
    }
    success &= runs.len() == tasks.len();
    Ok(EvalSetRun {
        success,
        runs,
        attempts,
    })
}
