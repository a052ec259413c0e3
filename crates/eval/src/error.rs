//! The errors of datasets, scorers, runs and logs.

use std::path::{Path, PathBuf};

/// A dataset that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be read.
    #[error("Cannot read the dataset {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A record is malformed.
    #[error("Invalid dataset {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the record.
        reason: String,
    },
    /// Two samples share an id.
    #[error("Two samples have the id {id}: sample ids must be unique")]
    DuplicateId {
        /// The id.
        id: String,
    },
}

impl DatasetError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        DatasetError::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn parse(path: &Path, reason: impl Into<String>) -> Self {
        DatasetError::Parse {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A scorer that could not score a sample.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Scorer '{scorer}' failed: {message}")]
pub struct ScoreError {
    /// The scorer.
    pub scorer: String,
    /// Why.
    pub message: String,
}

/// A log that cannot be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The file system refused.
    #[error("Cannot write or read the log {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing the log failed part way (a full disk, a file that became unwritable). The file
    /// was put back as it was before the failed write: it still holds, and
    /// [`read_eval_log`](crate::read_eval_log) and the reference still read, every sample
    /// written before.
    #[error(
        "Cannot write the log {path} while {action}: {source}. The file keeps what was \
         written before and still reads (read_eval_log, inspect view); free disk space, or \
         make the file writable, and run the samples missing from it again."
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// What was being written.
        action: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The zip container is broken.
    #[error("The log {path} is not a readable .eval file: {reason}")]
    Zip {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The content is not an eval log.
    #[error("The log {path} is not an eval log: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Why an evaluation could not run or was stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The dataset is unusable.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The log could not be written.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The options are contradictory.
    #[error("Invalid evaluation options: {0}")]
    Options(String),
    /// User code asked before any sample runs (a scorer's name or metrics) panicked; nothing
    /// ran and no log was written.
    #[error("Cannot start the evaluation: {message}")]
    Panicked {
        /// What panicked, and what it said.
        message: String,
    },
}
