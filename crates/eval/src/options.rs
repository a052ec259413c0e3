//! How an evaluation runs: concurrency, `fail_on_error`, retries, the log, a stop.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actuator_agent::AgentChannel;
use actuator_agent::checkpoint::Checkpoints;
use actuator_events::EventSink;
use serde_json::{Map, Value, json};

use crate::sample::SampleId;
use tokio::sync::watch;

use crate::log::LogFormat;

/// When sample errors fail the whole evaluation (the reference's `fail_on_error`, with its
/// thresholds: the evaluation fails once the errors *reach* a count or a proportion).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FailOnError {
    /// The first sample error fails the evaluation (the reference's default, `True`).
    #[default]
    Any,
    /// Never: errors are recorded on their samples (`False`).
    Never,
    /// When this many samples have failed (an integer ≥ 1; `Count(1)` is `Any`).
    Count(usize),
    /// When this proportion of the samples has failed (a number below 1).
    Fraction(f64),
}

impl FailOnError {
    /// Whether `errors` failed samples out of `total` fail the evaluation (the reference's
    /// `_should_eval_fail`).
    pub(crate) fn exceeded(self, errors: usize, total: usize) -> bool {
        match self {
            FailOnError::Any => errors > 0,
            FailOnError::Never => false,
            FailOnError::Count(n) => errors > 0 && errors >= n,
            FailOnError::Fraction(f) => errors > 0 && errors as f64 >= f * total as f64,
        }
    }

    pub(crate) fn json(self) -> Value {
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

    pub(crate) async fn stopped(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`: `wait_for` ends only when the signal is given.
        let _ = rx.wait_for(|stopped| *stopped).await;
    }
}

/// How an evaluation runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct EvalOptions {
    /// The model's name in the log (`provider/model`), overriding the one the run used. By
    /// default the log names the model of the evaluation's first generation (whichever
    /// sample made it, failed or not), or `none/none` when no model was called.
    pub model: Option<String>,
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
    /// Whether samples run when the solver's tools need a resource the task lacks (see
    /// [`EvalOptions::allow_missing_resources`]).
    pub allow_missing_resources: bool,
    /// A sink that every sample's events also reach as they happen (see
    /// [`EvalOptions::events`]).
    pub events: Option<Arc<dyn EventSink>>,
    /// Gives samples an operator's channel (see [`EvalOptions::operator`]).
    pub operator: Option<OperatorFor>,
    /// Checkpoints each sample's run (see [`EvalOptions::checkpoints`]).
    pub checkpoints: Option<Checkpoints>,
    /// The arguments the task was made with, recorded in the log (see
    /// [`EvalOptions::task_args`]).
    pub task_args: Map<String, Value>,
}

/// Gives a sample (its id and epoch) an operator's channel, or none.
pub type OperatorFor = Arc<dyn Fn(&SampleId, u32) -> Option<AgentChannel> + Send + Sync>;

impl std::fmt::Debug for EvalOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalOptions")
            .field("model", &self.model)
            .field("max_samples", &self.max_samples)
            .field("fail_on_error", &self.fail_on_error)
            .field("retry_on_error", &self.retry_on_error)
            .field("log_dir", &self.log_dir)
            .field("log_format", &self.log_format)
            .field("operator", &self.operator.is_some())
            .field("checkpoints", &self.checkpoints)
            .field("task_args", &self.task_args)
            .field("log_buffer", &self.log_buffer)
            .field("progress", &self.progress)
            .field("stop", &self.stop)
            .field("ctrl_c", &self.ctrl_c)
            .field("grace", &self.grace)
            .field("allow_missing_resources", &self.allow_missing_resources)
            .field("events", &self.events.as_ref().map(|_| "EventSink"))
            .finish()
    }
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            model: None,
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
            allow_missing_resources: false,
            events: None,
            operator: None,
            checkpoints: None,
            task_args: Map::new(),
        }
    }
}

impl EvalOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the arguments the task was made with in the log's `eval.task_args`, as the
    /// reference records `-T key=value`. They change nothing in the run: the task is already
    /// made. A program that makes tasks from arguments (as the `cli` module does) records
    /// them so that a retry of the log can make the same task again.
    ///
    /// ```
    /// use actuator_eval::EvalOptions;
    /// let mut args = serde_json::Map::new();
    /// args.insert("difficulty".into(), "hard".into());
    /// let options = EvalOptions::new().task_args(args);
    /// assert_eq!(options.task_args["difficulty"], "hard");
    /// ```
    #[must_use]
    pub fn task_args(mut self, args: Map<String, Value>) -> Self {
        self.task_args = args;
        self
    }

    /// The model's name in the log, instead of the model the run used (see
    /// [`EvalOptions::model`](EvalOptions#structfield.model)).
    #[must_use]
    pub fn model(mut self, name: impl Into<String>) -> Self {
        self.model = Some(name.into());
        self
    }

    /// Runs the evaluation even when the solver's tools need a run resource the task does not
    /// provide (a sandbox for `bash`): each call of such a tool then fails with an error only
    /// the model reads, as in the reference. Without this, `eval` refuses to start, naming
    /// the tool and how to provide the resource (see
    /// `actuator_agent::RunOptions::allow_missing_resources`).
    #[must_use]
    pub fn allow_missing_resources(mut self) -> Self {
        self.allow_missing_resources = true;
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

    /// Sends every sample's events to `sink` too, as they happen, besides the log: each
    /// sample is a `sample` span (`{task} {id} epoch {n}`) holding the reference's `solvers`
    /// span (the solver's run, its agents, generations and tool calls) and `scorers` span
    /// (one `scorer` span per scorer, with its [`Event::Score`]). An
    /// `actuator_otel::OtelSink` given here exports each sample as one trace, its scores as
    /// the GenAI conventions' evaluation results. The log is the same with or without it.
    ///
    /// [`Event::Score`]: actuator_events::Event::Score
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_eval::{Dataset, EvalOptions, Sample, Task, eval, scorers::exact};
    /// use actuator_events::{Event, EventLog};
    /// use actuator_multi::as_solver;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let agent: Arc<dyn actuator_agent::Agent> = Arc::new(actuator_agent::agent_fn("echo", |s, _cx, _a| async move { Ok(s) }));
    /// let task = Task::new("echo", Dataset::new([Sample::new("4", "4")]), Arc::new(as_solver(agent).build().unwrap()))
    ///     .scorer(exact());
    /// let seen = EventLog::new();
    /// eval(&task, EvalOptions::new().events(seen.clone())).await.unwrap();
    /// let scorers: Vec<String> = seen
    ///     .events()
    ///     .into_iter()
    ///     .filter_map(|e| match e {
    ///         Event::Score(s) => Some(s.scorer),
    ///         _ => None,
    ///     })
    ///     .collect();
    /// assert_eq!(scorers, ["exact"]);
    /// # });
    /// ```
    #[must_use]
    pub fn events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// Lets an operator step into samples as they run: `channel_for(id, epoch)` gives the
    /// sample's [`AgentChannel`] (or `None`), which its solver's react agent takes up (the
    /// operator's messages, interrupts, questions; see `actuator_agent::channel`). Each
    /// attempt of a sample gets the channel the function gives then.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use actuator_agent::AgentChannel;
    /// use actuator_eval::{EvalOptions, SampleId};
    /// let watched = AgentChannel::new();
    /// let options = EvalOptions::new().operator({
    ///     let watched = watched.clone();
    ///     move |id: &SampleId, _epoch| (id.to_string() == "1").then(|| watched.clone())
    /// });
    /// # drop(options);
    /// ```
    #[must_use]
    pub fn operator(
        mut self,
        channel_for: impl Fn(&SampleId, u32) -> Option<AgentChannel> + Send + Sync + 'static,
    ) -> Self {
        self.operator = Some(Arc::new(channel_for));
        self
    }

    /// Checkpoints each sample's run with `template`'s store and policy, under the key
    /// `{task_id}/{sample id}/{epoch}`: an evaluation whose process died, retried with
    /// [`eval_retry`](crate::eval_retry) (which keeps the task's id) with the same
    /// checkpoints, goes on with each unfinished sample from its checkpoint (marked
    /// [`SampleAttempt::Resume`](crate::log::schema::SampleAttempt::Resume)), its tool calls
    /// not run again. A sample's checkpoints are removed once it is in the log.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
    /// use actuator_eval::EvalOptions;
    /// let template = Checkpoints::new(Arc::new(FileCheckpoints::new("checkpoints")), "");
    /// let options = EvalOptions::new().log_dir("logs").checkpoints(template.every_turns(2));
    /// # drop(options);
    /// ```
    #[must_use]
    pub fn checkpoints(mut self, template: Checkpoints) -> Self {
        self.checkpoints = Some(template);
        self
    }
}
