//! `eval`: every sample of a task, concurrently, into a log, with metrics at the end.

use std::path::PathBuf;

use actuator_agent::checkpoint::Checkpoints;
use actuator_events::unix_now;
use actuator_model::new_id;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::contain::contain_sync;
use crate::error::EvalError;
use crate::log::convert::{iso, now_iso};
use crate::log::file::LogWriter;
use crate::log::schema::{
    EvalDataset, EvalErrorInfo, EvalLog, EvalPlan, EvalResults, EvalScore, EvalSpec, EvalStats,
};
use crate::options::{EvalOptions, StopSignal};
use crate::previous::Previous;
use crate::progress::Progress;
use crate::sample_run::{SampleOptions, run_sample, usage_json};
use crate::scorer::Metric;
use crate::tally::{SampleError, Tally};
use crate::task::Task;
use crate::watch::RunWatch;
use actuator_sandbox::SandboxHandle;
use actuator_tool_core::ErrorChain;

/// What an evaluation produced: the log's header (status, results, stats), where the log is,
/// and the samples' errors. The samples are in the log file
/// ([`read_eval_log`](crate::read_eval_log)), not in memory.
///
/// Its `Display` says how the evaluation went, and when samples failed, the first error with
/// its sample (whether or not a log was written):
///
/// ```text
/// eval 'arithmetic' error: 0 of 5 samples completed, 5 failed (model openai-api/local)
///   first error, sample 1 (epoch 1): Model openai-api/local failed: … connection refused
///   no log written (EvalOptions::log_dir writes one)
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EvalRun {
    /// The header.
    pub log: EvalLog,
    /// The log file.
    pub location: Option<PathBuf>,
    /// The samples' errors in the order they happened: the first [`MAX_KEPT_ERRORS`](crate::MAX_KEPT_ERRORS).
    pub errors: Vec<SampleError>,
    /// How many samples failed (all of them, kept in [`errors`](Self::errors) or not).
    pub error_count: usize,
}

impl std::fmt::Display for EvalRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let log = &self.log;
        write!(f, "eval '{}' {}", log.eval.task, log.status)?;
        if let Some(results) = &log.results {
            write!(
                f,
                ": {} of {} samples completed",
                results.completed_samples, results.total_samples
            )?;
        }
        if self.error_count > 0 {
            write!(f, ", {} failed", self.error_count)?;
        }
        write!(f, " (model {})", log.eval.model)?;
        // Metrics over no scored sample say nothing.
        let scored = log.results.iter().flat_map(|r| &r.scores);
        for score in scored.filter(|s| s.scored_samples > 0) {
            for (name, metric) in &score.metrics {
                if let Some(value) = metric.get("value").and_then(Value::as_f64) {
                    write!(f, "\n  {}/{name}: {value:.3}", score.scorer)?;
                }
            }
        }
        if let Some(error) = &log.error {
            write!(f, "\n  {}", error.message)?;
        }
        // The evaluation's error quotes the sample's that ended it; otherwise show the first.
        if let Some(first) = self.errors.first()
            && !log
                .error
                .as_ref()
                .is_some_and(|e| e.message.contains(&first.message))
        {
            write!(f, "\n  first error, {first}")?;
        }
        match &self.location {
            Some(path) => write!(f, "\n  log: {}", path.display()),
            None => write!(f, "\n  no log written (EvalOptions::log_dir writes one)"),
        }
    }
}

impl EvalRun {
    /// The first sample error, when a sample failed.
    pub fn first_error(&self) -> Option<&SampleError> {
        self.errors.first()
    }

    /// The results' score of `scorer`, when present.
    pub fn score(&self, scorer: &str) -> Option<&EvalScore> {
        self.log
            .results
            .as_ref()?
            .scores
            .iter()
            .find(|s| s.scorer == scorer)
    }
}

/// The log's model when none was given and none was called (the reference's name for it).
const NO_MODEL: &str = "none/none";

/// Refuses an evaluation whose solver's tools need a run resource its task does not give each
/// sample (a sandbox, unless the task has a sandbox factory), before anything runs or is
/// written.
fn check_requirements(task: &Task, options: &EvalOptions) -> Result<(), EvalError> {
    if options.allow_missing_resources {
        return Ok(());
    }
    let needs = contain_sync("the solver's requirements", || task.solver.requirements()).map_err(
        |panicked| EvalError::Panicked {
            message: panicked.message,
        },
    )?;
    let missing: Vec<String> = needs
        .iter()
        .filter(|need| !(task.sandbox.is_some() && need.requirement.is_for::<SandboxHandle>()))
        .map(|need| need.missing_message())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(EvalError::MissingResource {
        message: format!(
            "{}. (EvalOptions::allow_missing_resources() runs it anyway: each call of such a \
             tool then fails with an error only the model reads.)",
            missing.join("; ")
        ),
    })
}

/// A scorer's name and metrics, asked once (they are user code).
type ScorerInfo = (String, Vec<Metric>);

fn spec(
    task: &Task,
    options: &EvalOptions,
    ids: Vec<crate::SampleId>,
    scorers: &[ScorerInfo],
) -> EvalSpec {
    let mut config = Map::new();
    config.insert("epochs".into(), json!(task.epochs));
    config.insert("fail_on_error".into(), options.fail_on_error.json());
    config.insert("retry_on_error".into(), json!(options.retry_on_error));
    config.insert("max_samples".into(), json!(options.max_samples));
    config.insert("log_buffer".into(), json!(options.log_buffer));
    let mut packages = Map::new();
    packages.insert("actuator".into(), env!("CARGO_PKG_VERSION").into());
    EvalSpec {
        eval_id: new_id().into_string(),
        run_id: new_id().into_string(),
        created: now_iso(),
        task: task.name.clone(),
        task_id: new_id().into_string(),
        task_version: 0,
        task_args: options.task_args.clone(),
        solver: Some(task.solver_name.clone()),
        dataset: EvalDataset {
            name: task.dataset.name.clone(),
            location: task.dataset.location.clone(),
            samples: ids.len(),
            sample_ids: ids,
        },
        model: options.model.clone().unwrap_or_else(|| NO_MODEL.to_owned()),
        model_generate_config: Map::new(),
        config,
        packages,
        scorers: Some(
            scorers
                .iter()
                .map(|(name, metrics)| {
                    let metrics: Vec<Value> =
                        metrics.iter().map(|m| json!({"name": m.name()})).collect();
                    json!({"name": name, "metrics": metrics})
                })
                .collect(),
        ),
        sandbox: task.sandbox_spec.clone(),
    }
}

/// Removes the checkpoints of samples now in the log's file.
async fn clear_checkpoints(finished: &mut Vec<Checkpoints>) {
    for checkpoints in finished.drain(..) {
        if let Err(e) = checkpoints.clear().await {
            tracing::warn!(
                "the checkpoints of {}, a sample in the log, could not be removed: {e}",
                checkpoints.key()
            );
        }
    }
}

/// The run's error when `fail_on_error` is reached: how many failed, and the error of the
/// sample that reached it (as the reference records that sample's error on the log).
fn fail_on_error_reached(
    options: &EvalOptions,
    errors: usize,
    total: usize,
    which: &str,
    sample_error: Option<EvalErrorInfo>,
) -> EvalErrorInfo {
    let head = format!(
        "{errors} of {total} samples failed (fail_on_error is {})",
        options.fail_on_error.json()
    );
    match sample_error {
        Some(e) => EvalErrorInfo::with_traceback(
            format!("{head}; {which}: {}", e.message),
            format!("{head}; {which}:\n{}", e.traceback),
        ),
        None => EvalErrorInfo::new(format!(
            "{head}; the errors are on their samples in the log."
        )),
    }
}

/// Gives a stop signal on Ctrl-C while it lives.
struct CtrlC(Option<tokio::task::JoinHandle<()>>);

impl CtrlC {
    /// Listens for Ctrl-C. The handler is in place when this returns (not when a task first
    /// runs), so a Ctrl-C as the first sample starts stops the run rather than the process.
    fn listen(stop: &StopSignal) -> Self {
        #[cfg(unix)]
        let interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map(|mut s| async move { s.recv().await.is_some() });
        #[cfg(not(unix))]
        let interrupt: std::io::Result<_> = Ok(async { tokio::signal::ctrl_c().await.is_ok() });
        match interrupt {
            Ok(interrupted) => {
                let stop = stop.clone();
                CtrlC(Some(tokio::spawn(async move {
                    if interrupted.await {
                        stop.stop();
                    }
                })))
            }
            Err(e) => {
                tracing::warn!("Ctrl-C will not stop the evaluation: {e}");
                CtrlC(None)
            }
        }
    }
}

impl Drop for CtrlC {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Runs every sample of `task` (`epochs` times), at most `max_samples` at once, writing the log
/// as samples finish; returns the header with results.
///
/// Memory is bounded by `max_samples` (and the log buffer), not by the dataset: finished
/// samples go to the log and only their scores are kept. A sample error fails the evaluation
/// as `fail_on_error` says (status `error`, the samples finished so far kept); a panic in the
/// solver, a scorer or the sample's sandbox (made or torn down) is that sample's error, with
/// the panic's message. A stop (the signal, or Ctrl-C with `ctrl_c`) starts no new samples and
/// cancels running ones after the grace period (status `cancelled`).
///
/// # Errors
///
/// Before anything runs, an unusable dataset or log directory. During the run, a log that
/// cannot be written (a full disk): the run stops, the log is ended as well as it can be
/// (status `error` when there is room for its header), and the error is
/// [`LogError::Write`](crate::LogError::Write). The log is readable, by
/// [`read_eval_log`](crate::read_eval_log) and by the reference, in every case, with every
/// sample written before the failure.
pub async fn eval(task: &Task, options: EvalOptions) -> Result<EvalRun, EvalError> {
    run_eval(task, options, None).await
}

/// [`eval`], or with `previous` the retry of an earlier run of `task`: its finished samples
/// are written to the new log as they were (and counted), and only the others run.
pub(crate) async fn run_eval(
    task: &Task,
    options: EvalOptions,
    previous: Option<&Previous>,
) -> Result<EvalRun, EvalError> {
    let ids = task.dataset.ids()?;
    check_requirements(task, &options)?;
    let scorers = contain_sync("a scorer's name or metrics", || {
        task.scorers
            .iter()
            .map(|s| (s.name().to_owned(), s.metrics()))
            .collect::<Vec<ScorerInfo>>()
    })
    .map_err(|panicked| EvalError::Panicked {
        message: panicked.message,
    })?;
    let samples = &task.dataset.samples;
    let started = now_iso();
    let mut header = EvalLog {
        version: 2,
        status: "started".into(),
        eval: spec(task, &options, ids.clone(), &scorers),
        plan: EvalPlan {
            name: "plan".into(),
            steps: vec![json!({"solver": task.solver_name, "params": {}})],
            config: Map::new(),
        },
        results: None,
        stats: EvalStats {
            started_at: started,
            completed_at: String::new(),
            model_usage: Map::new(),
            connection_limit_history: Vec::new(),
            model_throughput: Default::default(),
        },
        error: None,
        samples: None,
    };
    if let Some(previous) = previous {
        header.eval.task_id.clone_from(&previous.task_id);
    }
    let mut writer = match &options.log_dir {
        Some(dir) => Some(LogWriter::create(
            dir,
            &header,
            options.log_format,
            options.log_buffer,
        )?),
        None => None,
    };

    let total = samples.len() * task.epochs as usize;
    let watch = RunWatch::with_user_sink(
        Progress::new(options.progress, &task.name, total),
        options.events.clone(),
    );
    let progress = watch.progress();
    let stop = options.stop.clone();
    // In place before the first sample starts; gone when the evaluation ends.
    let _ctrl_c = options.ctrl_c.then(|| CtrlC::listen(&stop));
    let mut tally = Tally::new(task.scorers.len());
    if let Some(previous) = previous {
        let names: Vec<String> = scorers.iter().map(|(name, _)| name.clone()).collect();
        previous.write_kept(&names, &mut tally, progress, writer.as_mut())?;
    }
    let sample_options = SampleOptions {
        watch: &watch,
        retries: options.retry_on_error,
        allow_missing_resources: options.allow_missing_resources,
        operator: options.operator.as_ref(),
        checkpoints: options
            .checkpoints
            .as_ref()
            .map(|c| (c, header.eval.task_id.as_str())),
    };
    let sample_options = &sample_options;
    let ids = &ids;
    let work = (1..=task.epochs)
        .flat_map(|epoch| samples.iter().zip(ids).map(move |(s, id)| (s, id, epoch)))
        .filter(|(_, id, epoch)| previous.is_none_or(|p| !p.kept(id, *epoch)));
    let gate = stop.clone();
    let mut running = futures_util::stream::iter(work)
        .take_while(move |_| std::future::ready(!gate.is_stopped()))
        .map(|(sample, id, epoch)| {
            progress.started();
            run_sample(task, sample, id, epoch, sample_options)
        })
        .buffer_unordered(options.max_samples);

    let mut status = "success";
    let mut failure = None;
    let mut write_failure = None;
    let mut grace_deadline: Option<tokio::time::Instant> = None;
    let mut awaiting_flush: Vec<Checkpoints> = Vec::new();
    loop {
        let next = match grace_deadline {
            None => {
                // The stop first: once given, the work stream ends (its gate), and that end
                // must not read as a run that did all its samples.
                tokio::select! {
                    biased;
                    () = stop.stopped() => {
                        grace_deadline = Some(tokio::time::Instant::now() + options.grace);
                        status = "cancelled";
                        continue;
                    }
                    next = running.next() => next,
                }
            }
            Some(deadline) => match tokio::time::timeout_at(deadline, running.next()).await {
                Ok(next) => next,
                Err(_) => break,
            },
        };
        let Some(mut outcome) = next else { break };
        if let Some(previous) = previous {
            previous.mark_restarted(&mut outcome.entry, outcome.resumed);
        }
        tally.add(&outcome);
        progress.finished(outcome.failed, tally.tokens());
        let sample_error = outcome.entry.error.clone();
        let which = format!(
            "sample {} (epoch {})",
            outcome.entry.id, outcome.entry.epoch
        );
        let finished_checkpoints = outcome.finished_checkpoints.take();
        if let Some(w) = &mut writer
            && let Err(e) = w.sample(outcome.entry)
        {
            // The log cannot take more: end the run, and the log with what it holds.
            status = "error";
            failure = Some(EvalErrorInfo::new(ErrorChain(&e).to_string()));
            write_failure = Some(e);
            break;
        }
        // Its checkpoints go once the sample is in the log's file (a crash from then on
        // keeps it); until then a resumed run finds its final state in them.
        awaiting_flush.extend(finished_checkpoints);
        if writer.as_ref().is_none_or(|w| w.buffered() == 0) {
            clear_checkpoints(&mut awaiting_flush).await;
        }
        if options.fail_on_error.exceeded(tally.errors, total) {
            status = "error";
            failure = Some(fail_on_error_reached(
                &options,
                tally.errors,
                total,
                &which,
                sample_error,
            ));
            break;
        }
    }
    // Samples still running are cancelled by dropping them; what their sandboxes do as they
    // go is user code.
    if let Err(panicked) = contain_sync("a cancelled sample's teardown", || drop(running)) {
        tracing::warn!("{}", panicked.message);
    }
    progress.done();

    let scores = scorers
        .iter()
        .enumerate()
        .map(|(i, (name, metrics))| {
            let metrics = metrics
                .iter()
                .map(|m: &Metric| {
                    (
                        m.name().to_owned(),
                        json!({"name": m.name(), "value": m.compute(&tally.values[i]), "params": {}}),
                    )
                })
                .collect();
            EvalScore {
                name: name.clone(),
                scorer: name.clone(),
                scored_samples: tally.values[i].len(),
                unscored_samples: tally.unscored[i],
                params: Map::new(),
                metrics,
            }
        })
        .collect();
    header.status = status.into();
    header.error = failure;
    header.results = Some(EvalResults {
        total_samples: total,
        completed_samples: tally.completed,
        scores,
    });
    header.stats.completed_at = iso(unix_now());
    header.stats.model_usage = usage_json(&tally.usage);
    header.stats.connection_limit_history = progress.throughput().history();
    header.stats.model_throughput = progress.throughput().models();
    if options.model.is_none()
        && let Some(model) = watch.model()
    {
        model.clone_into(&mut header.eval.model);
    }
    let location = match (writer.map(|w| w.finish(&header)), write_failure) {
        // The first failure is the one to report: what the log holds is as it was before it.
        (_, Some(first)) => return Err(first.into()),
        (Some(finished), None) => Some(finished?),
        (None, None) => None,
    };
    clear_checkpoints(&mut awaiting_flush).await;
    Ok(EvalRun {
        log: header,
        location,
        errors: tally.kept,
        error_count: tally.errors,
    })
}
