//! What stops a command, and the exit code each says.

use std::path::PathBuf;

use crate::error::{EvalError, LogError};

/// A boxed error from user code (a task's constructor).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line is wrong (clap's message, with the usage).
    #[error("{0}")]
    Usage(String),
    /// No task has this name.
    #[error("there is no task '{name}'; the tasks are: {known}")]
    UnknownTask {
        /// The name given.
        name: String,
        /// The registered names.
        known: String,
    },
    /// A flag's value is unusable.
    #[error("{flag} {value}: {reason}")]
    BadValue {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// The task's constructor refused its arguments.
    #[error("task '{name}' could not be made")]
    Task {
        /// The task.
        name: String,
        /// What its constructor said.
        #[source]
        source: BoxError,
    },
    /// The evaluation could not start or go on.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A log could not be read or written.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A directory of logs could not be listed, or the merged log moved into place.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl CliError {
    /// The exit code this error ends the program with: 1 when an evaluation that ran could
    /// not write its log, 2 when the command could not start.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Eval(EvalError::Log(_)) => Exit::Failed,
            _ => Exit::Config,
        }
    }
}

/// How a command ended, as its exit code says.
///
/// ```
/// use actuator_eval::cli::Exit;
/// assert_eq!(Exit::Cancelled.code(), 130);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// 0: the command did its work (an evaluation's status is `success`).
    Success,
    /// 1: the evaluation failed (sample errors over the `--fail-on-error` threshold, or its
    /// log could not be written).
    Failed,
    /// 2: the command could not start (a wrong flag, an unknown task, an unreadable log).
    Config,
    /// 130: the evaluation was cancelled (Ctrl-C), as a shell reports a process ended by
    /// SIGINT.
    Cancelled,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Config => 2,
            Exit::Cancelled => 130,
        }
    }

    /// How an evaluation whose log has `status` ended.
    pub(crate) fn of_status(status: &str) -> Exit {
        match status {
            "success" => Exit::Success,
            "cancelled" => Exit::Cancelled,
            _ => Exit::Failed,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}
