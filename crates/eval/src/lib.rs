//! # actuator-eval
//!
//! Evaluations: run an agent over a dataset, score its answers, and write a log the
//! reference's tools read (`inspect_ai.log.read_eval_log`, `inspect view`).
//!
//! - [`Sample`], [`Dataset`] (JSON Lines, JSON and CSV files through a [`FieldSpec`]);
//! - [`Task`]: a dataset, a [`Solver`](actuator_multi::Solver) (an agent through
//!   `actuator_multi::as_solver`, or a [`chain`] of solvers), [`Scorer`]s, per-sample limits,
//!   epochs, a sandbox per sample;
//! - [`scorers`]: `match_`, `includes`, `pattern`, `exact`, `f1`, `model_graded_qa`; [`Metric`]s
//!   `accuracy`, `mean`, `stderr`;
//! - [`eval`]: samples concurrently ([`EvalOptions::max_samples`]), [`FailOnError`] and
//!   retries, a progress display, a [`StopSignal`] (and Ctrl-C), the log written as samples
//!   finish ([`LogFormat`]), read back with [`read_eval_log`].
//!
//! ```
//! use std::sync::Arc;
//! use actuator_agent::{AgentState, agent_fn};
//! use actuator_eval::{Dataset, EvalOptions, Sample, Task, eval, scorers::{IncludesOptions, includes}};
//! use actuator_model::ChatMessage;
//! use actuator_multi::as_solver;
//!
//! let echo = agent_fn("echo", |mut state: AgentState, _cx, _args| async move {
//!     let question = state.messages.last().map(ChatMessage::text).unwrap_or_default();
//!     state.messages.push(ChatMessage::assistant(format!("You asked: {question}")));
//!     Ok(state)
//! });
//! let task = Task::new(
//!     "echo",
//!     Dataset::new([Sample::new("ping", "ping"), Sample::new("pong", "ping")]),
//!     Arc::new(as_solver(Arc::new(echo)).build().unwrap()),
//! )
//! .scorer(includes(IncludesOptions::default()));
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let run = eval(&task, EvalOptions::new()).await.unwrap();
//! assert_eq!(run.log.status, "success");
//! assert_eq!(run.score("includes").unwrap().metric("accuracy"), Some(0.5));
//! # });
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
pub use error::{DatasetError, EvalError, JsonSyntaxError, LogError, RecordError, ScoreError};

mod dataset_files;
mod sample;
mod sample_id;
pub use sample::{Dataset, FieldSpec, Sample, SampleId, SampleInput, Target};

mod scorer;
pub use scorer::{Metric, Scorer, SharedScorer};

pub mod scorers;

mod chain;
pub use chain::{Chain, chain};

mod task;
pub use task::{SandboxFactory, Task};

#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
pub mod log;
pub use log::{LogFormat, read_eval_log};

mod contain;
mod eval_set;
mod options;
mod previous;
mod progress;
mod retry;
mod run;
mod sample_events;
mod sample_run;
mod tally;
mod throughput;
mod watch;
pub use eval_set::{EvalSetOptions, EvalSetRun, eval_set};
pub use options::{EvalOptions, FailOnError, OperatorFor, StopSignal};
pub use retry::eval_retry;
pub use run::{EvalRun, eval};
pub use tally::{MAX_KEPT_ERRORS, SampleError};
