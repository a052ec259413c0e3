//! [`SandboxError`]: everything that can go wrong in a sandbox, and how each case reaches a
//! model as a [`ToolError`].

use actuator_tool_core::{ErrorChain, ToolError, ToolErrorKind};

/// An error from a [`Sandbox`](crate::Sandbox) operation.
///
/// Tools turn it into the reference's tool errors with [`SandboxError::into_tool_error`]
/// (also `From<SandboxError> for ToolError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// `bwrap` is not installed (or not on `PATH`).
    #[error(
        "bubblewrap (`bwrap`) was not found, so commands cannot be confined. Install it \
         (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`; or run \
         `scripts/setup-test-env`), or opt in to running commands unconfined with \
         `LocalSandbox::builder().unconfined()`."
    )]
    BubblewrapMissing,
    /// `bwrap` is installed but refused to start a sandbox (typically: user namespaces are
    /// disabled for unprivileged users).
    #[error(
        "bubblewrap (`bwrap`) is installed but refused to start a sandbox: {stderr}. Enable \
         unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or on \
         Ubuntu `sysctl kernel.apparmor_restrict_unprivileged_userns=0`), run as root, or opt \
         in to running commands unconfined with `LocalSandbox::builder().unconfined()`."
    )]
    BubblewrapRefused {
        /// What bwrap printed.
        stderr: String,
    },
    /// The command ran longer than its timeout; its process group was killed. The output
    /// produced until then is kept.
    #[error("Command timed out before completing.")]
    Timeout {
        /// Standard output until the timeout (lossily decoded).
        stdout: String,
        /// Standard error until the timeout (lossily decoded).
        stderr: String,
    },
    /// The command's output went over the limit; it was killed and its output cut.
    #[error("The sandbox output stream limit of {} was exceeded.", format_size(*.limit))]
    OutputLimit {
        /// The limit in bytes.
        limit: usize,
        /// Standard output up to the limit (lossily decoded).
        stdout: String,
        /// Standard error up to the limit (lossily decoded).
        stderr: String,
    },
    /// The output was not valid UTF-8.
    #[error("Error decoding bytes to utf-8: {reason}")]
    UnicodeDecode {
        /// Python's wording of the decoding failure (`invalid start byte`, …).
        reason: String,
    },
    /// An argument contained a NUL byte, which no process argument can hold.
    #[error("an argument contained an embedded null byte")]
    NulByte,
    /// The sandbox cannot run commands as this user.
    #[error("{name} cannot execute as {user:?}; only the current effective user is supported.")]
    UserUnsupported {
        /// The sandbox's name.
        name: String,
        /// The user asked for.
        user: String,
    },
    /// A file operation failed.
    #[error("{message}")]
    File {
        /// The kind of tool error this becomes.
        kind: ToolErrorKind,
        /// The message a model sees.
        message: String,
    },
    /// The sandbox is gone (its run ended) or could not start a process. Build one with
    /// [`SandboxError::unavailable`] or [`SandboxError::unavailable_from`].
    #[error("{message}")]
    Unavailable {
        /// What happened, and what the next command does.
        message: String,
        /// The error behind it, if there is one (a failed spawn, a closed request pipe).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The sandbox's supervisor broke its protocol with the host (a malformed or oversized
    /// event, or it stopped taking requests). Commands can reach the supervisor (it runs as
    /// their user), so this is what a command that attacks it causes: the sandbox was
    /// stopped (with every process in it; the working directory is kept) and the next
    /// command starts a new one.
    #[error(
        "The sandbox was stopped because its supervisor {detail}; the next command starts a \
         new sandbox (the working directory is kept, background processes are not)."
    )]
    SupervisorMisbehaved {
        /// What the supervisor did.
        detail: String,
    },
    /// Any other I/O failure on the host side (the I/O error is its `source()`).
    #[error("sandbox I/O error")]
    Io(#[from] std::io::Error),
}

impl SandboxError {
    /// An [`Unavailable`](SandboxError::Unavailable) error with no error behind it.
    ///
    /// ```
    /// use actuator_sandbox::SandboxError;
    /// let err = SandboxError::unavailable("The sandbox stopped running.");
    /// assert_eq!(err.to_string(), "The sandbox stopped running.");
    /// ```
    pub fn unavailable(message: impl Into<String>) -> Self {
        SandboxError::Unavailable {
            message: message.into(),
            source: None,
        }
    }

    /// An [`Unavailable`](SandboxError::Unavailable) error caused by `source`, kept as its
    /// `source()`; a model reads both (`message: source`).
    ///
    /// ```
    /// use std::error::Error as _;
    /// use actuator_sandbox::SandboxError;
    /// let io = std::io::Error::from(std::io::ErrorKind::NotFound);
    /// let err = SandboxError::unavailable_from("The sandbox could not start a process", io);
    /// assert_eq!(err.to_string(), "The sandbox could not start a process");
    /// assert!(err.source().unwrap().downcast_ref::<std::io::Error>().is_some());
    /// assert_eq!(
    ///     err.into_tool_error().message(),
    ///     "The sandbox could not start a process: entity not found"
    /// );
    /// ```
    pub fn unavailable_from(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        SandboxError::Unavailable {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The tool error a model sees for this failure, in the reference's wording. A timeout
    /// keeps the partial output (`stderr\nstdout` when there is stderr, else stdout), an
    /// output limit the truncated output, both as the tool message content.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            SandboxError::Timeout { stdout, stderr } => {
                let partial = combine_output(&stdout, &stderr);
                let err = ToolError::timeout();
                if partial.is_empty() {
                    err
                } else {
                    err.with_output(partial)
                }
            }
            SandboxError::OutputLimit {
                limit,
                stdout,
                stderr,
            } => ToolError::with_kind(
                ToolErrorKind::Limit,
                format!(
                    "The tool exceeded its output limit of {}.",
                    format_size(limit)
                ),
            )
            .with_output(combine_output(&stdout, &stderr)),
            SandboxError::UnicodeDecode { reason } => ToolError::unicode_decode("utf-8", &reason),
            SandboxError::File { kind, message } => ToolError::with_kind(kind, message),
            SandboxError::NulByte => ToolError::parsing("an argument contained a null byte"),
            other @ (SandboxError::BubblewrapMissing
            | SandboxError::BubblewrapRefused { .. }
            | SandboxError::Unavailable { .. }
            | SandboxError::SupervisorMisbehaved { .. }) => {
                ToolError::sandbox_unavailable(ErrorChain(&other).to_string())
            }
            other => ToolError::new(ErrorChain(&other).to_string()),
        }
    }
}

impl From<SandboxError> for ToolError {
    fn from(err: SandboxError) -> Self {
        err.into_tool_error()
    }
}

/// The reference's output convention for `bash` and `python`: `"{stderr}\n{stdout}"` when
/// there is standard error, else standard output alone.
///
/// ```
/// assert_eq!(actuator_sandbox::SandboxError::combine("out", ""), "out");
/// assert_eq!(actuator_sandbox::SandboxError::combine("out", "err"), "err\nout");
/// ```
pub fn combine_output(stdout: &str, stderr: &str) -> String {
    if stderr.is_empty() {
        stdout.to_owned()
    } else {
        format!("{stderr}\n{stdout}")
    }
}

impl SandboxError {
    /// [`combine_output`] under a name reachable from the error type: `"{stderr}\n{stdout}"`
    /// when there is standard error, else standard output.
    pub fn combine(stdout: &str, stderr: &str) -> String {
        combine_output(stdout, stderr)
    }
}

/// Python's reason for a UTF-8 decoding failure.
pub(crate) fn utf8_reason(err: &std::str::Utf8Error) -> &'static str {
    match err.error_len() {
        None => "unexpected end of data",
        Some(_) => "invalid start byte",
    }
}

/// Formats a byte count the way the reference does (`10 MiB`, `4 KiB`, `100 bytes`).
///
/// ```
/// assert_eq!(actuator_sandbox::format_size(10 * 1024 * 1024), "10 MiB");
/// assert_eq!(actuator_sandbox::format_size(1000), "1000 bytes");
/// ```
pub fn format_size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = KIB * 1024;
    const GIB: usize = MIB * 1024;
    if bytes >= GIB && bytes.is_multiple_of(GIB) {
        format!("{} GiB", bytes / GIB)
    } else if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
