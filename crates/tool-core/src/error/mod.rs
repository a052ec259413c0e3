//! Errors: the recoverable [`ToolError`] a model reads, the fatal [`FatalToolError`] that ends a
//! run, the [`ToolFailure`] a tool returns (either of the two), and [`ToolDefError`] for a tool
//! that is defined wrongly.

use std::fmt;
use std::io;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

mod def;
mod io_errors;
mod limit;
pub use def::ToolDefError;
pub use io_errors::IoErrorExt;
pub use limit::{LimitValue, format_amount, format_limit, limit_exceeded_text};

/// The kind of a recoverable tool error, as the model and the event log see it.
///
/// The names are Inspect's `ToolCallError.type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The arguments could not be parsed, validated or converted.
    Parsing,
    /// The call did not finish in time.
    Timeout,
    /// Bytes could not be decoded as text.
    UnicodeDecode,
    /// The operating system refused access.
    Permission,
    /// A file was not found.
    FileNotFound,
    /// A path named a directory where a file was expected.
    IsADirectory,
    /// A limit (message, token, time, output, …) was exceeded inside the call.
    Limit,
    /// The call was not approved.
    Approval,
    /// The call was cancelled before it finished.
    Cancelled,
    /// The sandbox the tool runs in is not available.
    SandboxUnavailable,
    /// Any other error the tool reported.
    Unknown,
    /// Legacy: output over a limit (kept so old logs deserialize).
    OutputLimit,
}

impl ToolErrorKind {
    /// The snake_case name (`"file_not_found"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::Parsing => "parsing",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::UnicodeDecode => "unicode_decode",
            ToolErrorKind::Permission => "permission",
            ToolErrorKind::FileNotFound => "file_not_found",
            ToolErrorKind::IsADirectory => "is_a_directory",
            ToolErrorKind::Limit => "limit",
            ToolErrorKind::Approval => "approval",
            ToolErrorKind::Cancelled => "cancelled",
            ToolErrorKind::SandboxUnavailable => "sandbox_unavailable",
            ToolErrorKind::Unknown => "unknown",
            ToolErrorKind::OutputLimit => "output_limit",
        }
    }
}

impl fmt::Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A recoverable tool error: it goes back to the model as the tool's result, and the run goes on.
///
/// Construct one with the kind-specific constructors, which produce the exact texts a model
/// sees; [`ToolError::new`] is the catch-all `unknown` kind.
///
/// ```
/// use actuator_tool_core::{ToolError, ToolErrorKind};
/// let err = ToolError::new("The index is being rebuilt; try again in a minute.");
/// assert_eq!(err.kind(), ToolErrorKind::Unknown);
/// assert_eq!(ToolError::timeout().message(), "Command timed out before completing.");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
    /// Output produced before the failure (a timed-out command's partial output), shown to the
    /// model as the tool message content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
}

impl ToolError {
    /// An `unknown`-kind error with the given message: the general "this did not work" a tool
    /// reports to the model (Inspect's `ToolError(message)`).
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::Unknown, message)
    }

    /// An error of any kind with the given message.
    pub fn with_kind(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            output: None,
        }
    }

    /// A `parsing` error: the arguments could not be parsed or converted.
    pub fn parsing(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::Parsing, message)
    }

    /// The `parsing` error of arguments nested deeper than [`MAX_ARGUMENT_DEPTH`](crate::MAX_ARGUMENT_DEPTH)
    /// levels, as [`check_nesting_depth`](crate::check_nesting_depth) reports it.
    pub fn too_deep() -> Self {
        Self::parsing(format!(
            "Error parsing tool call arguments: arguments exceed the maximum supported nesting depth of {}",
            crate::MAX_ARGUMENT_DEPTH
        ))
    }

    /// A `timeout` error: `Command timed out before completing.`
    pub fn timeout() -> Self {
        Self::with_kind(
            ToolErrorKind::Timeout,
            "Command timed out before completing.",
        )
    }

    /// An `unicode_decode` error: `Error decoding bytes to {encoding}: {reason}`.
    pub fn unicode_decode(encoding: &str, reason: &str) -> Self {
        Self::with_kind(
            ToolErrorKind::UnicodeDecode,
            format!("Error decoding bytes to {encoding}: {reason}"),
        )
    }

    /// A `parsing` error for an argument with an embedded NUL byte.
    pub fn embedded_null_byte(function: &str) -> Self {
        Self::parsing(format!(
            "An argument to tool '{function}' contained an embedded null byte."
        ))
    }

    /// A `sandbox_unavailable` error with the sandbox's own message.
    pub fn sandbox_unavailable(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::SandboxUnavailable, message)
    }

    /// A `permission` error: `{reason}.` plus ` Filename '{filename}'.` when a file is named
    /// (`Permission denied. Filename '/etc/x'.`).
    pub fn permission(reason: &str, filename: Option<&str>) -> Self {
        Self::with_kind(ToolErrorKind::Permission, with_filename(reason, filename))
    }

    /// A `file_not_found` error: `File '{filename}' was not found.`, or the bare reason when no
    /// file is named.
    pub fn file_not_found(reason: &str, filename: Option<&str>) -> Self {
        let message = match filename {
            Some(f) => format!("File '{f}' was not found."),
            None => reason.to_owned(),
        };
        Self::with_kind(ToolErrorKind::FileNotFound, message)
    }

    /// An `is_a_directory` error: `{reason}.` plus ` Filename '{filename}'.` when a file is named.
    pub fn is_a_directory(reason: &str, filename: Option<&str>) -> Self {
        Self::with_kind(ToolErrorKind::IsADirectory, with_filename(reason, filename))
    }

    /// A `limit` error: `The tool exceeded its {kind} limit of {limit}.`, a count printed as
    /// an integer and an amount (seconds, dollars) with two decimals, as the reference does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use actuator_tool_core::ToolError;
    /// assert_eq!(ToolError::limit("message", 10_u64).message(), "The tool exceeded its message limit of 10.");
    /// assert_eq!(ToolError::limit("time", Duration::from_secs(60)).message(), "The tool exceeded its time limit of 60.00.");
    /// assert_eq!(ToolError::limit("cost", 2.5).message(), "The tool exceeded its cost limit of 2.50.");
    /// ```
    pub fn limit(limit_kind: &str, limit: impl Into<LimitValue>) -> Self {
        Self::with_kind(
            ToolErrorKind::Limit,
            limit_exceeded_text("tool", limit_kind, &limit.into().to_string()),
        )
    }

    /// A `limit` error for output: `The tool exceeded its output limit of {limit}.`, keeping the
    /// output produced so far.
    pub fn output_limit(limit: u64, truncated_output: Option<String>) -> Self {
        let mut err = Self::limit("output", limit);
        err.output = truncated_output;
        err
    }

    /// An `approval` error with the approver's explanation, or `Tool call not approved.`
    pub fn approval(explanation: Option<&str>) -> Self {
        Self::with_kind(
            ToolErrorKind::Approval,
            explanation.unwrap_or("Tool call not approved."),
        )
    }

    /// A `cancelled` error with the given message.
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self::with_kind(ToolErrorKind::Cancelled, message)
    }

    /// Attaches output produced before the failure; the model sees it as the tool's content.
    #[must_use]
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = Some(output.into());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message the model sees.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Output produced before the failure, if any.
    pub fn output(&self) -> Option<&str> {
        self.output.as_deref()
    }
}

fn with_filename(reason: &str, filename: Option<&str>) -> String {
    match filename {
        Some(f) => format!("{reason}. Filename '{f}'."),
        None => format!("{reason}."),
    }
}

/// A fatal failure: the tool (or the machinery around it) cannot go on, and the run must end.
///
/// The executor cancels the call's parallel siblings, skips later calls and returns this error to
/// the caller, instead of showing it to the model. A panic inside a tool becomes one of these.
///
/// ```
/// use actuator_tool_core::FatalToolError;
/// let err = FatalToolError::msg("database connection lost");
/// assert_eq!(err.to_string(), "database connection lost");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct FatalToolError {
    message: String,
    panicked: bool,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl FatalToolError {
    /// A fatal error with a message.
    pub fn msg(message: impl Into<String>) -> Self {
        FatalToolError {
            message: message.into(),
            panicked: false,
            source: None,
        }
    }

    /// A fatal error wrapping another error; the message is the error's text.
    pub fn new(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        FatalToolError {
            message: err.to_string(),
            panicked: false,
            source: Some(Arc::new(err)),
        }
    }

    /// A fatal error for a tool that panicked, with the panic's message.
    pub fn panic(message: impl Into<String>) -> Self {
        FatalToolError {
            message: message.into(),
            panicked: true,
            source: None,
        }
    }

    /// Whether the tool panicked.
    pub fn is_panic(&self) -> bool {
        self.panicked
    }

    /// The wrapped error, when it is a `T` (for example, an agent limit that must end the run).
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.source.as_deref().and_then(|e| e.downcast_ref::<T>())
    }
}

/// What a tool returns when it does not succeed: either a recoverable [`ToolError`] the model
/// reads, or a [`FatalToolError`] that ends the run.
///
/// Both convert with `?`, so a tool body picks the path by the error it propagates:
///
/// ```
/// use actuator_tool_core::{FatalToolError, ToolError, ToolFailure};
///
/// fn lookup(id: u32, db_up: bool) -> Result<String, ToolFailure> {
///     if !db_up {
///         Err(FatalToolError::msg("database is down"))?; // ends the run
///     }
///     if id == 0 {
///         Err(ToolError::new("No record with id 0."))?; // the model reads this and retries
///     }
///     Ok(format!("record {id}"))
/// }
/// assert!(lookup(0, true).unwrap_err().is_recoverable());
/// assert!(!lookup(1, false).unwrap_err().is_recoverable());
/// ```
///
/// Any other error converts too, through a box: a tool body returning
/// `Result<T, Box<dyn std::error::Error + Send + Sync>>` uses `?` on any error type (an
/// `io::Error`, `serde_json::Error`, a `thiserror` enum of your own), and the model reads it
/// as the reference words it: an I/O error as the `io::Error` mapping above, a UTF-8 error as
/// `unicode_decode`, a boxed `ToolError` or `FatalToolError` as itself, anything else as an
/// `unknown` error with the error's text. `?` on a `serde_json::Error` also works directly.
///
/// ```
/// use actuator_tool_core::{ToolErrorKind, ToolFailure};
///
/// #[derive(Debug)]
/// struct Offline;
/// impl std::fmt::Display for Offline {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("The catalogue is offline.")
///     }
/// }
/// impl std::error::Error for Offline {}
///
/// fn body() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
///     Err(Offline)?
/// }
/// let ToolFailure::Recoverable(err) = ToolFailure::from(body().unwrap_err()) else {
///     unreachable!()
/// };
/// assert_eq!(err.kind(), ToolErrorKind::Unknown);
/// assert_eq!(err.message(), "The catalogue is offline.");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolFailure {
    /// Goes back to the model as the tool's result.
    #[error(transparent)]
    Recoverable(#[from] ToolError),
    /// Ends the run.
    #[error(transparent)]
    Fatal(#[from] FatalToolError),
}

impl ToolFailure {
    /// Whether the model should see this failure (and the run go on).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, ToolFailure::Recoverable(_))
    }
}

impl From<io::Error> for ToolFailure {
    fn from(err: io::Error) -> Self {
        ToolFailure::Recoverable(err.into())
    }
}
