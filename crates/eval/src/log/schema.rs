//! The reference's eval log, field for field where Actuator has the data (`inspect_ai.log`'s
//! `EvalLog`, `EvalSpec`, `EvalSample`, …). Messages, outputs and events are kept as JSON in
//! the reference's shapes (see `convert.rs`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use std::collections::BTreeMap;

pub use crate::throughput::ModelThroughput;
pub use actuator_model::concurrency::{ConnectionLimitChange, LimitChangeReason};

use crate::sample::{SampleId, Target};

/// A whole log: the header, and the samples in the `.json` format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalLog {
    /// The log format's version (2).
    pub version: u32,
    /// `started`, `success`, `cancelled` or `error`.
    pub status: String,
    /// What ran.
    pub eval: EvalSpec,
    /// The solver steps.
    pub plan: EvalPlan,
    /// Scores and metrics, once the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<EvalResults>,
    /// Timing and model usage.
    pub stats: EvalStats,
    /// Why the run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<EvalErrorInfo>,
    /// The samples (the `.json` format only; a `.eval` file keeps them as separate entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<EvalSample>>,
}

/// What ran: the task, dataset, model and configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSpec {
    /// This evaluation's id.
    pub eval_id: String,
    /// The run's id.
    pub run_id: String,
    /// When it was created (ISO 8601).
    pub created: String,
    /// The task's name.
    pub task: String,
    /// The task's id.
    pub task_id: String,
    /// The task's version.
    pub task_version: u32,
    /// The arguments the task was made with (the reference's `task_args`; the command line's
    /// `-T key=value`), so that a retry can make the same task.
    #[serde(default)]
    pub task_args: Map<String, Value>,
    /// The solver's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
    /// The dataset.
    pub dataset: EvalDataset,
    /// The model's name.
    pub model: String,
    /// Generation settings (none are set by the harness).
    #[serde(default)]
    pub model_generate_config: Map<String, Value>,
    /// The evaluation's configuration.
    pub config: Map<String, Value>,
    /// Package versions.
    #[serde(default)]
    pub packages: Map<String, Value>,
    /// The scorers and their metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorers: Option<Vec<Value>>,
    /// The task's sandbox, when it has one the reference can name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSpec>,
}

/// Which sandbox a task or sample ran in (the reference's `SandboxEnvironmentSpec`): its type
/// (`docker`) and configuration (the compose file's name, or none for the default).
///
/// ```
/// use actuator_eval::log::SandboxSpec;
/// let spec = SandboxSpec::new("docker", Some("compose.yaml".into()));
/// assert_eq!(
///     serde_json::to_value(&spec).unwrap(),
///     serde_json::json!({"type": "docker", "config": "compose.yaml"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SandboxSpec {
    /// The sandbox type (`docker`, `local`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its configuration (a file name).
    #[serde(default)]
    pub config: Option<String>,
}

impl SandboxSpec {
    /// A spec of `kind` with `config`.
    pub fn new(kind: impl Into<String>, config: Option<String>) -> Self {
        SandboxSpec {
            kind: kind.into(),
            config,
        }
    }
}

/// The dataset's name, location, size and ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalDataset {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// How many samples.
    pub samples: usize,
    /// Their ids.
    pub sample_ids: Vec<SampleId>,
}

/// The solver steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalPlan {
    /// `plan`.
    pub name: String,
    /// One step per solver.
    pub steps: Vec<Value>,
    /// Generation settings.
    #[serde(default)]
    pub config: Map<String, Value>,
}

/// Scores and metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResults {
    /// Samples × epochs.
    pub total_samples: usize,
    /// Those that completed without error.
    pub completed_samples: usize,
    /// One entry per scorer.
    pub scores: Vec<EvalScore>,
}

/// A scorer's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalScore {
    /// The score's name.
    pub name: String,
    /// The scorer.
    pub scorer: String,
    /// Samples it scored.
    pub scored_samples: usize,
    /// Samples it could not score.
    pub unscored_samples: usize,
    /// Its parameters.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// Metric name → `{name, value, params}`.
    pub metrics: Map<String, Value>,
}

impl EvalScore {
    /// The value of a metric, when present.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name)?.get("value")?.as_f64()
    }
}

/// Timing and model usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalStats {
    /// When the run started (ISO 8601).
    pub started_at: String,
    /// When it ended, or empty while it runs.
    pub completed_at: String,
    /// Model name → usage.
    #[serde(default)]
    pub model_usage: Map<String, Value>,
    /// The reference's `connection_limit_history`: each change of an adaptive connection
    /// limit during the run, oldest first (absent when there was none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connection_limit_history: Vec<ConnectionLimitChange>,
    /// Model name → its requests per second, connection limit and back-offs during the run
    /// (absent when no model endpoint was used; not in the reference, whose reader ignores
    /// it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub model_throughput: BTreeMap<String, ModelThroughput>,
}

/// An error, as the reference records one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalErrorInfo {
    /// The message.
    pub message: String,
    /// A trace (the error's chain of causes here).
    pub traceback: String,
    /// The same, for terminals.
    pub traceback_ansi: String,
}

impl EvalErrorInfo {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        let message = message.into();
        EvalErrorInfo {
            traceback: message.clone(),
            traceback_ansi: message.clone(),
            message,
        }
    }

    pub(crate) fn with_traceback(message: impl Into<String>, traceback: impl Into<String>) -> Self {
        let traceback = traceback.into();
        EvalErrorInfo {
            message: message.into(),
            traceback_ansi: traceback.clone(),
            traceback,
        }
    }
}

/// The limit a sample hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSampleLimit {
    /// `message`, `token`, `time`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The limit.
    pub limit: f64,
}

/// One sample's run: input, conversation, output, scores and transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSample {
    /// The sample's id.
    pub id: SampleId,
    /// The epoch (from 1).
    pub epoch: u32,
    /// The input: a text or messages.
    pub input: Value,
    /// Answer choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    /// The target.
    pub target: Target,
    /// The final conversation.
    pub messages: Vec<Value>,
    /// The final output.
    pub output: Value,
    /// Scorer name → score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scores: Option<Map<String, Value>>,
    /// The sample's metadata.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The task state's store.
    #[serde(default)]
    pub store: Map<String, Value>,
    /// The transcript. Written condensed: model events refer to `events_data`'s message
    /// pool (`input_refs`), as the reference writes them; read back with every event's
    /// input in place.
    #[serde(default)]
    pub events: Vec<Value>,
    /// The pool the condensed events refer to (`messages`, `calls`); `None` once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_data: Option<Value>,
    /// Model name → usage.
    #[serde(default)]
    pub model_usage: Map<String, Value>,
    /// When it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Seconds it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_time: Option<f64>,
    /// Seconds of work (less waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_time: Option<f64>,
    /// A unique id of this run of the sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<EvalErrorInfo>,
    /// Errors of earlier attempts that were retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_retries: Option<Vec<EvalErrorInfo>>,
    /// The limit it hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<EvalSampleLimit>,
    /// The sandbox it ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSpec>,
    /// Which attempt of its evaluation produced it, in the log of a retried evaluation
    /// ([`eval_retry`](crate::eval_retry)); absent in a first run's log. The reference's
    /// reader ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<SampleAttempt>,
}

/// Which attempt of an evaluation produced a sample of a retried evaluation's log.
///
/// ```
/// use actuator_eval::log::schema::SampleAttempt;
/// assert_eq!(serde_json::to_string(&SampleAttempt::Restart).unwrap(), "\"restart\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SampleAttempt {
    /// Finished by the first run and kept as it was.
    Initial,
    /// Gone on with by a retry from its checkpoint (its process had died).
    Resume,
    /// Run again from its start by a retry (it had failed, or never finished).
    Restart,
}

impl EvalSample {
    /// The summary the `.eval` format journals for each sample, borrowed from the sample so
    /// that it serializes straight to bytes (a value tree of it is several times larger).
    pub(crate) fn summary(&self) -> SampleSummary<'_> {
        let input = match &self.input {
            Value::String(s) if s.chars().nth(5120).is_some() => {
                Cow::Owned(Value::String(s.chars().take(5120).collect()))
            }
            other => Cow::Borrowed(other),
        };
        SampleSummary {
            id: &self.id,
            epoch: self.epoch,
            input,
            target: &self.target,
            metadata: &self.metadata,
            scores: self.scores.as_ref(),
            model_usage: &self.model_usage,
            started_at: self.started_at.as_deref(),
            completed_at: self.completed_at.as_deref(),
            total_time: self.total_time,
            working_time: self.working_time,
            uuid: self.uuid.as_deref(),
            error: self.error.as_ref().map(|e| e.message.as_str()),
            limit: self.limit.as_ref().map(|l| l.kind.as_str()),
            retries: self.error_retries.as_ref().map(Vec::len),
            completed: true,
            message_count: self.messages.len(),
        }
    }
}

/// A sample's summary as the `.eval` format journals it (`inspect_ai.log`'s
/// `EvalSampleSummary`): its fields in the reference's order, absent ones as `null`.
#[derive(Debug, Serialize)]
pub(crate) struct SampleSummary<'a> {
    id: &'a SampleId,
    epoch: u32,
    input: Cow<'a, Value>,
    target: &'a Target,
    metadata: &'a Map<String, Value>,
    scores: Option<&'a Map<String, Value>>,
    model_usage: &'a Map<String, Value>,
    started_at: Option<&'a str>,
    completed_at: Option<&'a str>,
    total_time: Option<f64>,
    working_time: Option<f64>,
    uuid: Option<&'a str>,
    error: Option<&'a str>,
    limit: Option<&'a str>,
    retries: Option<usize>,
    completed: bool,
    message_count: usize,
}
