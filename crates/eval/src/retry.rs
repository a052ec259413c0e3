//! `eval_retry`: an evaluation run again from its log, keeping every sample it finished.

use std::path::{Path, PathBuf};

use crate::error::EvalError;
use crate::options::EvalOptions;
use crate::previous::Previous;
use crate::run::{EvalRun, run_eval};
use crate::task::Task;

/// Runs `task` again from the log `log` of an earlier run of it that failed, was cancelled,
/// or whose process died (the reference's `eval_retry`): every sample that run finished is
/// kept as it was, and only the others run (those that failed, were cancelled, or never
/// started). The new log has every sample once, each marked with the attempt that produced
/// it ([`SampleAttempt`](crate::log::schema::SampleAttempt); a sample run again also keeps its earlier error first in
/// `error_retries`), and results over all of them. It is written to the options' log
/// directory, or beside `log` when they name none; `log` itself is left as it was.
///
/// A `.eval` log whose writer died part way through a write is read up to that write: the
/// samples of the torn write run again. The task must be the one that wrote the log, with the
/// same samples and epochs.
///
/// ```no_run
/// # async fn run(task: actuator_eval::Task) -> Result<(), actuator_eval::EvalError> {
/// use actuator_eval::{EvalOptions, eval_retry};
/// let run = eval_retry(&task, "logs/crashed.eval", EvalOptions::new()).await?;
/// println!("{run}");
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`eval`](crate::eval), and [`EvalError::Retry`] when `log` is not a log of `task`.
pub async fn eval_retry(
    task: &Task,
    log: impl AsRef<Path>,
    options: EvalOptions,
) -> Result<EvalRun, EvalError> {
    let path = log.as_ref();
    let previous = Previous::read(task, path)?;
    let mut options = options;
    if options.log_dir.is_none() {
        options.log_dir = Some(
            path.parent()
                .map_or_else(|| PathBuf::from("."), Path::to_owned),
        );
    }
    run_eval(task, options, Some(&previous)).await
}
