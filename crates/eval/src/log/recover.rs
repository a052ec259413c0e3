//! Recovering the log of an evaluation whose process died: a finished log of what it holds.

use std::path::{Path, PathBuf};

use actuator_events::unix_now;

use crate::error::{LogError, format_err};
use crate::log::convert::iso;
use crate::log::file::{LogFormat, LogWriter};
use crate::log::read::for_each_sample;
use crate::log::results::ResultsTally;
use crate::log::schema::{EvalErrorInfo, EvalLog, EvalSpec};

/// The error a recovered log records, as the reference's recovery words it.
pub const RECOVERED_MESSAGE: &str = "Eval recovered from crash";

/// A log recovered by [`recover_eval_log`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Recovered {
    /// The recovered log (`<name>-recovered.eval` or `.json`, beside the crashed one).
    pub path: PathBuf,
    /// Its header: status `error` with [`RECOVERED_MESSAGE`], results over the samples
    /// recovered (without the samples themselves, which are in the file).
    pub log: EvalLog,
    /// How many samples were recovered.
    pub samples: usize,
    /// Whether the crashed log was torn (its writer died part way through a write, so the
    /// samples of that write were lost: run them again with [`eval_retry`](crate::eval_retry));
    /// otherwise it died between writes and every sample it had flushed is recovered.
    pub torn: bool,
}

/// How many samples an evaluation of `spec` runs: its dataset's samples times its epochs.
pub(crate) fn expected_samples(spec: &EvalSpec) -> usize {
    let epochs = spec
        .config
        .get("epochs")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1);
    spec.dataset.samples * usize::try_from(epochs).unwrap_or(1)
}

/// Makes a finished log of the log `path` (`.eval` or `.json`), whose evaluation's process died before it
/// ended the log (killed, out of memory, the machine lost): every sample the log had flushed,
/// read whole (a write the process died in is left out), with results recomputed over them
/// and status `error` ([`RECOVERED_MESSAGE`]), as the reference's `recover_eval_log` does.
/// It is written beside the crashed log as `<name>-recovered.eval` (or `.json`); the crashed
/// log is left as it was. [`eval_retry`](crate::eval_retry) then runs the samples it lacks.
///
/// ```no_run
/// let recovered = actuator_eval::log::recover_eval_log("logs/crashed.eval").unwrap();
/// println!("{} samples in {}", recovered.samples, recovered.path.display());
/// ```
///
/// # Errors
///
/// The log is finished (nothing to recover), is not a log, has no whole start, or the
/// recovered log cannot be written (nothing is left of it then).
pub fn recover_eval_log(path: impl AsRef<Path>) -> Result<Recovered, LogError> {
    let path = path.as_ref();
    let (format, ext) = match path.extension().and_then(|e| e.to_str()) {
        Some("eval") => (LogFormat::Eval, "eval"),
        Some("json") => (LogFormat::Json, "json"),
        _ => {
            return Err(format_err(
                path,
                "a log is a .eval or a .json file: this is neither",
            ));
        }
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let out = path.with_file_name(format!("{stem}-recovered.{ext}"));
    let partial = path.with_file_name(format!("{stem}-recovered.partial.{ext}"));
    let written = write_recovered(path, &partial, format);
    let (log, samples, torn) = match written {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    std::fs::rename(&partial, &out).map_err(|source| LogError::Write {
        path: out.clone(),
        action: "putting the recovered log in place".into(),
        source,
    })?;
    Ok(Recovered {
        path: out,
        log,
        samples,
        torn,
    })
}

/// Writes the recovered log of `path` to `out`: its header, how many samples, whether torn.
fn write_recovered(
    path: &Path,
    out: &Path,
    format: LogFormat,
) -> Result<(EvalLog, usize, bool), LogError> {
    let finished = |log: &EvalLog| {
        format_err(
            path,
            format!(
                "it is finished (status '{}'): there is nothing to recover",
                log.status
            ),
        )
    };
    let mut open: Option<(LogWriter, ResultsTally)> = None;
    let mut count = 0;
    let head = for_each_sample(path, |start, sample| {
        let (writer, tally) = match &mut open {
            Some(open) => open,
            None => {
                if start.status != "started" {
                    return Err(finished(start));
                }
                let writer = LogWriter::create_at(out.to_owned(), start, format, 100)?;
                open.insert((writer, ResultsTally::new(&start.eval)))
            }
        };
        tally.add(&sample);
        count += 1;
        writer.sample(sample)
    })?;
    if head.log.status != "started" {
        return Err(finished(&head.log));
    }
    let mut log = head.log;
    let (writer, tally) = match open {
        Some(open) => open,
        None => (
            LogWriter::create_at(out.to_owned(), &log, format, 100)?,
            ResultsTally::new(&log.eval),
        ),
    };
    log.status = "error".into();
    log.error = Some(EvalErrorInfo::with_traceback(
        RECOVERED_MESSAGE,
        "The evaluation's process ended before it finished its log; the log was recovered \
         from the samples it had flushed.\n",
    ));
    log.results = Some(tally.results(expected_samples(&log.eval)));
    log.stats.started_at.clone_from(&log.eval.created);
    log.stats.completed_at = iso(unix_now());
    log.stats.model_usage.clone_from(&tally.usage);
    writer.finish(&log)?;
    Ok((log, count, head.torn))
}
