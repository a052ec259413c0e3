//! `eval`: every sample of a task, concurrently, into a log, with metrics at the end.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actuator_events::unix_now;
use actuator_model::{ModelUsage, new_id};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::error::EvalError;
use crate::log::LogFormat;
use crate::log::convert::{iso, now_iso};
use crate::log::file::LogWriter;
use crate::log::schema::{
    EvalDataset, EvalErrorInfo, EvalLog, EvalPlan, EvalResults, EvalScore, EvalSpec, EvalStats,
};
use crate::progress::Progress;
use crate::sample_run::{SampleOutcome, add_usage, run_sample, usage_json};
use crate::scorer::Metric;
use crate::task::Task;

/// When sample errors fail the whole evaluation (the reference's `fail_on_error`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FailOnError {
    /// The first sample error fails the evaluation (the reference's default, `True`).
    #[default]
    Any,
    /// Never: errors are recorded on their samples (`False`).
    Never,
    /// When more than this many samples fail (an integer ≥ 1).
    Count(usize),
    /// When more than this proportion of samples fail (a number below 1).
    Fraction(f64),
}

impl FailOnError {
    fn exceeded(self, errors: usize, total: usize) -> bool {
        match self {
            FailOnError::Any => errors > 0,
            FailOnError::Never => false,
            FailOnError::Count(n) => errors > n,
            FailOnError::Fraction(f) => total > 0 && errors as f64 / total as f64 > f,
        }
    }

    fn json(self) -> Value {
        match self {
            FailOnError::Any => json!(true),
            FailOnError::Never => json!(false),
            FailOnError::Count(n) => json!(n),
            FailOnError::Fraction(f) => json!(f),
        }
    }
}

/// Stops an evaluation from outside: no new samples start; those running get the grace
/// period, then are cancelled. Clones share the signal.
#[derive(Debug, Clone)]
pub struct StopSignal {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for StopSignal {
    fn default() -> Self {
        StopSignal {
            tx: Arc::new(watch::channel(false).0),
        }
    }
}

impl StopSignal {
    /// A signal not yet given.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives the signal.
    pub fn stop(&self) {
        self.tx.send_replace(true);
    }

    /// Whether it was given.
    pub fn is_stopped(&self) -> bool {
        *self.tx.borrow()
    }

    async fn stopped(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`: `wait_for` ends only when the signal is given.
        let _ = rx.wait_for(|stopped| *stopped).await;
    }
}

/// How an evaluation runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EvalOptions {
    /// The model's name in the log (`provider/model`); the solver brings its own model.
    pub model: String,
    /// Samples running at once (default 100: model calls are network-bound).
    pub max_samples: usize,
    /// When sample errors fail the evaluation.
    pub fail_on_error: FailOnError,
    /// Further attempts for a sample that errors.
    pub retry_on_error: u32,
    /// Where the log goes; `None`: no log file.
    pub log_dir: Option<PathBuf>,
    /// The log's format.
    pub log_format: LogFormat,
    /// Samples buffered before the log is written (the reference's `log_buffer`); a full
    /// buffer is written at most once a second (at once when 100 buffers' worth wait), so a
    /// crash loses at most the samples of the last second or so, and those in flight.
    pub log_buffer: usize,
    /// Shows progress (a bar on a terminal, lines otherwise).
    pub progress: bool,
    /// Stops the evaluation when given; with `ctrl_c`, Ctrl-C gives it.
    pub stop: StopSignal,
    /// Whether Ctrl-C stops the evaluation (as [`EvalOptions::stop`]).
    pub ctrl_c: bool,
    /// How long running samples may go on after a stop before they are cancelled.
    pub grace: Duration,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            model: "none/none".into(),
            max_samples: 100,
            fail_on_error: FailOnError::Any,
            retry_on_error: 0,
            log_dir: None,
            log_format: LogFormat::Eval,
            log_buffer: 10,
            progress: false,
            stop: StopSignal::new(),
            ctrl_c: false,
            grace: Duration::from_secs(10),
        }
    }
}

impl EvalOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model's name in the log.
    #[must_use]
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.model = name.into();
        self
    }

    /// Samples running at once (at least 1).
    #[must_use]
    pub fn max_samples(mut self, n: usize) -> Self {
        self.max_samples = n.max(1);
        self
    }

    /// When sample errors fail the evaluation.
    #[must_use]
    pub fn fail_on_error(mut self, policy: FailOnError) -> Self {
        self.fail_on_error = policy;
        self
    }

    /// Further attempts for a sample that errors.
    #[must_use]
    pub fn retry_on_error(mut self, retries: u32) -> Self {
        self.retry_on_error = retries;
        self
    }

    /// Writes the log in `dir`.
    #[must_use]
    pub fn log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    /// The log's format.
    #[must_use]
    pub fn log_format(mut self, format: LogFormat) -> Self {
        self.log_format = format;
        self
    }

    /// Samples buffered before the log is written.
    #[must_use]
    pub fn log_buffer(mut self, n: usize) -> Self {
        self.log_buffer = n.max(1);
        self
    }

    /// Shows progress.
    #[must_use]
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Stops on Ctrl-C.
    #[must_use]
    pub fn ctrl_c(mut self, on: bool) -> Self {
        self.ctrl_c = on;
        self
    }

    /// The stop signal to obey.
    #[must_use]
    pub fn stop_signal(mut self, stop: StopSignal) -> Self {
        self.stop = stop;
        self
    }

    /// The grace period after a stop.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }
}

/// What an evaluation produced: the log's header (status, results, stats) and where the log
/// is. The samples are in the log file ([`read_eval_log`](crate::read_eval_log)), not in memory.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EvalRun {
    /// The header.
    pub log: EvalLog,
    /// The log file.
    pub location: Option<PathBuf>,
}

impl EvalRun {
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

fn spec(task: &Task, options: &EvalOptions, ids: Vec<crate::SampleId>) -> EvalSpec {
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
        solver: Some(task.solver_name.clone()),
        dataset: EvalDataset {
            name: task.dataset.name.clone(),
            location: task.dataset.location.clone(),
            samples: ids.len(),
            sample_ids: ids,
        },
        model: options.model.clone(),
        model_generate_config: Map::new(),
        config,
        packages,
        scorers: Some(
            task.scorers
                .iter()
                .map(|s| {
                    let metrics: Vec<Value> = s
                        .metrics()
                        .iter()
                        .map(|m| json!({"name": m.name()}))
                        .collect();
                    json!({"name": s.name(), "metrics": metrics})
                })
                .collect(),
        ),
    }
}

struct Tally {
    values: Vec<Vec<f64>>,
    unscored: Vec<usize>,
    completed: usize,
    errors: usize,
    usage: BTreeMap<String, ModelUsage>,
}

impl Tally {
    fn add(&mut self, outcome: &SampleOutcome) {
        if outcome.failed {
            self.errors += 1;
        } else {
            self.completed += 1;
        }
        for (i, score) in outcome.scores.iter().enumerate() {
            match score {
                Some(s) => self.values[i].push(s.as_f64()),
                None => self.unscored[i] += 1,
            }
        }
        for (model, u) in &outcome.usage {
            add_usage(self.usage.entry(model.clone()).or_default(), u);
        }
    }

    fn tokens(&self) -> u64 {
        self.usage.values().map(|u| u.total_tokens).sum()
    }
}

/// Runs every sample of `task` (`epochs` times), at most `max_samples` at once, writing the log
/// as samples finish; returns the header with results.
///
/// Memory is bounded by `max_samples` (and the log buffer), not by the dataset: finished
/// samples go to the log and only their scores are kept. A sample error fails the evaluation
/// as `fail_on_error` says (status `error`, the samples written so far kept); a stop (the
/// signal, or Ctrl-C with `ctrl_c`) starts no new samples and cancels running ones after the
/// grace period (status `cancelled`). The log is readable in every case.
pub async fn eval(task: &Task, options: EvalOptions) -> Result<EvalRun, EvalError> {
    let ids = task.dataset.ids()?;
    let samples = &task.dataset.samples;
    let started = now_iso();
    let mut header = EvalLog {
        version: 2,
        status: "started".into(),
        eval: spec(task, &options, ids.clone()),
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
        },
        error: None,
        samples: None,
    };
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
    let progress = Progress::new(options.progress, &task.name, total);
    let stop = options.stop.clone();
    if options.ctrl_c {
        let on_signal = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_signal.stop();
            }
        });
    }
    let mut tally = Tally {
        values: vec![Vec::new(); task.scorers.len()],
        unscored: vec![0; task.scorers.len()],
        completed: 0,
        errors: 0,
        usage: BTreeMap::new(),
    };
    let ids = &ids;
    let work = (1..=task.epochs)
        .flat_map(|epoch| samples.iter().zip(ids).map(move |(s, id)| (s, id, epoch)));
    let gate = stop.clone();
    let mut running = futures_util::stream::iter(work)
        .take_while(move |_| std::future::ready(!gate.is_stopped()))
        .map(|(sample, id, epoch)| {
            progress.started();
            run_sample(task, sample, id, epoch, options.retry_on_error)
        })
        .buffer_unordered(options.max_samples);

    let mut status = "success";
    let mut failure = None;
    let mut grace_deadline: Option<tokio::time::Instant> = None;
    loop {
        let next = match grace_deadline {
            None => {
                tokio::select! {
                    next = running.next() => next,
                    () = stop.stopped() => {
                        grace_deadline = Some(tokio::time::Instant::now() + options.grace);
                        status = "cancelled";
                        continue;
                    }
                }
            }
            Some(deadline) => match tokio::time::timeout_at(deadline, running.next()).await {
                Ok(next) => next,
                Err(_) => break,
            },
        };
        let Some(outcome) = next else { break };
        tally.add(&outcome);
        progress.finished(outcome.failed, tally.tokens());
        if let Some(w) = &mut writer {
            w.sample(outcome.entry)?;
        }
        if options.fail_on_error.exceeded(tally.errors, total) {
            status = "error";
            failure = Some(EvalErrorInfo::new(format!(
                "{} of {total} samples failed (fail_on_error is {}); the first error is on a sample in the log.",
                tally.errors,
                options.fail_on_error.json()
            )));
            break;
        }
    }
    // Samples still running are cancelled by dropping them.
    drop(running);
    progress.done();

    let scores = task
        .scorers
        .iter()
        .enumerate()
        .map(|(i, scorer)| {
            let metrics = scorer
                .metrics()
                .into_iter()
                .map(|m: Metric| {
                    (
                        m.name().to_owned(),
                        json!({"name": m.name(), "value": m.compute(&tally.values[i]), "params": {}}),
                    )
                })
                .collect();
            EvalScore {
                name: scorer.name().to_owned(),
                scorer: scorer.name().to_owned(),
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
    let location = match writer {
        Some(w) => Some(w.finish(&header)?),
        None => None,
    };
    Ok(EvalRun {
        log: header,
        location,
    })
}
