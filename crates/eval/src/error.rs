//! The errors of datasets, scorers, runs and logs.

use std::path::{Path, PathBuf};

/// A dataset that cannot be read. Every error about the content names the file and the
/// 1-based line (and, when known, the record) it is about.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// The file could not be opened or read.
    #[error("Cannot read the dataset {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A record, or the file around it, is malformed.
    #[error("Invalid dataset {path}, line {line}{}", .record.map_or(String::new(), |n| format!(" (record {n})")))]
    Record {
        /// The file.
        path: PathBuf,
        /// The 1-based line the problem is on: where the record starts, or, for text that is
        /// not valid JSON, CSV or UTF-8, where the bad text is.
        line: u64,
        /// The 1-based number of the record: the CSV record after the header row, the
        /// element of a JSON array, the non-blank line of a JSON Lines file. `None` when the
        /// problem is not in one record (a JSON array that does not parse, the CSV header).
        record: Option<u64>,
        /// What is wrong.
        #[source]
        source: RecordError,
    },
    /// Two samples share an id.
    #[error("Two samples have the id {id}: sample ids must be unique")]
    DuplicateId {
        /// The id.
        id: String,
    },
}

/// What is wrong with one record of a dataset ([`DatasetError::Record`] says where).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The text is not valid UTF-8.
    #[error("not valid UTF-8")]
    Utf8(#[source] std::str::Utf8Error),
    /// The text is not valid JSON (the column is within the line).
    #[error("not valid JSON at column {column}")]
    Json {
        /// The 1-based column (in bytes) where the JSON stops being valid.
        column: u64,
        /// The parser's error.
        #[source]
        source: JsonSyntaxError,
    },
    /// The text is not valid CSV (a row with the wrong number of fields, invalid UTF-8 in a
    /// field).
    #[error("not valid CSV")]
    Csv(#[source] csv::Error),
    /// The record is JSON but not an object.
    #[error("the record is not a JSON object")]
    NotAnObject,
    /// The record lacks a field the [`FieldSpec`](crate::FieldSpec) requires.
    #[error("the record has no '{field}' field")]
    MissingField {
        /// The field.
        field: String,
    },
    /// A field's value has the wrong type.
    #[error("'{field}' is not {expected}")]
    WrongType {
        /// The field.
        field: String,
        /// What it must be.
        expected: &'static str,
        /// Why it could not be read as that.
        #[source]
        source: serde_json::Error,
    },
}

/// serde_json's error for a record that is not valid JSON, worded without serde_json's
/// ` at line L column C`: the line there is the line within the record, which would read as a
/// second, wrong line number beside the dataset's ([`DatasetError::Record`] gives the line,
/// [`RecordError::Json`] the column). [`get`](Self::get) is the parser's error itself.
#[derive(Debug)]
pub struct JsonSyntaxError(serde_json::Error);

impl JsonSyntaxError {
    pub(crate) fn new(error: serde_json::Error) -> Self {
        JsonSyntaxError(error)
    }

    /// The parser's error, position included.
    pub fn get(&self) -> &serde_json::Error {
        &self.0
    }
}

impl std::fmt::Display for JsonSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        let suffix = format!(" at line {} column {}", self.0.line(), self.0.column());
        f.write_str(text.strip_suffix(&suffix).unwrap_or(&text))
    }
}

impl std::error::Error for JsonSyntaxError {}

impl DatasetError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        DatasetError::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn record(path: &Path, line: u64, record: Option<u64>, source: RecordError) -> Self {
        DatasetError::Record {
            path: path.to_owned(),
            line,
            record,
            source,
        }
    }

    /// The 1-based line the error is about, for errors about the content.
    pub fn line(&self) -> Option<u64> {
        match self {
            DatasetError::Record { line, .. } => Some(*line),
            _ => None,
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
    #[error("Cannot write or read the log {path}")]
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
        "Cannot write the log {path} while {action} (the file keeps what was written \
         before, which read_eval_log and inspect view still read; free disk space or make \
         the file writable, then run the samples missing from it again)"
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
    /// Two logs given to [`merge_logs`](crate::log::merge_logs) hold the same sample, and
    /// neither supersedes the other (they are separate evaluations, not a log and its retry).
    #[error(
        "Cannot merge {first} and {second}: both hold sample {id} (epoch {epoch}), and a \
         merged log holds each sample once. They are separate evaluations of the same samples \
         (a shard run twice, or a copy of a log): merge only one of them (a retry made with \
         eval_retry keeps its log's task id and supersedes it without this)"
    )]
    DuplicateSample {
        /// The sample's id.
        id: crate::sample_id::SampleId,
        /// Its epoch.
        epoch: u32,
        /// The log it was first read from.
        first: PathBuf,
        /// The log that holds it again.
        second: PathBuf,
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
    /// A log given to [`eval_retry`](crate::eval_retry) is not one of the task's.
    #[error("Cannot retry {path}: {reason}")]
    Retry {
        /// The log.
        path: std::path::PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// The options are contradictory.
    #[error("Invalid evaluation options: {0}")]
    Options(String),
    /// The solver's tools need a run resource the task does not provide (a sandbox for
    /// `bash`); nothing ran and no log was written. The message names the tool and how to
    /// provide it.
    #[error("Cannot start the evaluation: {message}")]
    MissingResource {
        /// Which tool needs what, and how to provide it.
        message: String,
    },
    /// User code asked before any sample runs (a scorer's name or metrics) panicked; nothing
    /// ran and no log was written.
    #[error("Cannot start the evaluation: {message}")]
    Panicked {
        /// What panicked, and what it said.
        message: String,
    },
}

/// A log file's I/O error, naming the file (for `map_err`).
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A log file's zip error, naming the file (for `map_err`).
pub(crate) fn zip_err(path: &Path) -> impl FnOnce(zip::result::ZipError) -> LogError + '_ {
    move |e| LogError::Zip {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// A log file that is not in the reference's format, naming the file and what is wrong.
pub(crate) fn format_err(path: &Path, reason: impl std::fmt::Display) -> LogError {
    LogError::Format {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}
