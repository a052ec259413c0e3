//! The [`Sandbox`] trait, its requests and results, and [`SandboxHandle`], the run resource
//! tools find their sandbox through.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actuator_tool_core::{BoxFuture, ResourceRequirement, ToolContext, ToolError};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::SandboxError;

/// The output limit of one exec when a request sets none: 10 MiB, the reference's
/// `SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE`. A larger output fails the command; it
/// is not the limit of what the model reads of a tool's output (that is
/// `actuator_tool_core::DEFAULT_MAX_TOOL_OUTPUT`, 16 KiB, which truncates).
///
/// ```
/// assert_eq!(actuator_sandbox::DEFAULT_MAX_EXEC_OUTPUT, 10 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_EXEC_OUTPUT: usize = 10 * 1024 * 1024;

/// The error text of a tool called in a run that has no sandbox (a `sandbox_unavailable`
/// error), in the reference's words.
pub const NO_SANDBOX_MESSAGE: &str = "No sandbox environment has been provided for the current sample or task. Please specify a sandbox for the sample or a global default sandbox for the task";

/// One command to run in a sandbox.
///
/// ```
/// use std::time::Duration;
/// use actuator_sandbox::ExecRequest;
/// let req = ExecRequest::new(["python3", "-"])
///     .stdin("print(1)")
///     .timeout(Duration::from_secs(5))
///     .env("PYTHONUNBUFFERED", "1");
/// assert_eq!(req.argv, ["python3", "-"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecRequest {
    /// The program and its arguments (no shell unless `argv` starts one).
    pub argv: Vec<String>,
    /// Bytes written to the command's standard input (then closed).
    pub stdin: Option<Vec<u8>>,
    /// The working directory; relative paths are taken from the sandbox's working directory,
    /// which is also the default.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The user to run as (`None`: the sandbox's default user).
    pub user: Option<String>,
    /// Kill the command (its whole process group) after this long.
    pub timeout: Option<Duration>,
    /// The most bytes of output (stdout and stderr together) kept; more is an
    /// [`SandboxError::OutputLimit`]. `None`: [`DEFAULT_MAX_EXEC_OUTPUT`].
    pub max_output: Option<usize>,
}

impl ExecRequest {
    /// A request to run `argv`.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExecRequest {
            argv: argv.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Sets the standard input.
    #[must_use]
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the user (`None`: the default user).
    #[must_use]
    pub fn user(mut self, user: Option<String>) -> Self {
        self.user = user;
        self
    }

    /// Sets the timeout (`None`: none).
    #[must_use]
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// Sets the output limit in bytes.
    #[must_use]
    pub fn max_output(mut self, limit: usize) -> Self {
        self.max_output = Some(limit);
        self
    }

    /// Whether any argument, environment entry or the working directory holds a NUL byte
    /// (which no process can take).
    pub fn has_nul_byte(&self) -> bool {
        self.argv.iter().any(|a| a.contains('\0'))
            || self
                .env
                .iter()
                .any(|(k, v)| k.contains('\0') || v.contains('\0'))
            || self.cwd.as_deref().is_some_and(|c| c.contains('\0'))
    }
}

/// What a finished command produced. A non-zero exit is a result, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// The exit code. A command killed by signal `n` is `Some(128 + n)` in a confined
    /// [`LocalSandbox`](crate::LocalSandbox) (its supervisor learns statuses as a shell
    /// does) and `None` unconfined.
    pub status: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl ExecOutput {
    /// Whether the command exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// The reference's `bash`/`python` convention: `"{stderr}\n{stdout}"` when there is
    /// standard error, else standard output.
    pub fn combined(&self) -> String {
        crate::error::combine_output(&self.stdout, &self.stderr)
    }
}

/// A long-lived process to talk to (the shell of a `bash_session`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRequest {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Whether the process gets a terminal (a pseudo-terminal, so `\u{3}` interrupts).
    pub terminal: bool,
}

impl SessionRequest {
    /// A request for `argv`, with a terminal.
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SessionRequest {
            argv: argv.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            terminal: true,
        }
    }
}

/// A running interactive process: its input, its output (standard error merged in) and a
/// guard that kills it, with everything it started, when dropped.
pub struct InteractiveProcess {
    /// Writes to the process (its terminal, when it has one).
    pub input: Pin<Box<dyn AsyncWrite + Send>>,
    /// Reads what it printed.
    pub output: Pin<Box<dyn AsyncRead + Send>>,
    /// Kills the process when dropped.
    pub guard: Box<dyn Send + Sync>,
}

impl fmt::Debug for InteractiveProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InteractiveProcess").finish_non_exhaustive()
    }
}

/// Where tools run: commands, file reads and writes, and interactive processes.
///
/// Object-safe: tools hold an `Arc<dyn Sandbox>` (through a [`SandboxHandle`]), so a docker,
/// Kubernetes or remote backend is a new implementation, not a change to the tools.
pub trait Sandbox: Send + Sync + fmt::Debug {
    /// A short name for logs and errors (`"local"`).
    fn name(&self) -> &str;

    /// The working directory commands start in, as the sandbox sees it.
    fn workdir(&self) -> &str;

    /// Runs a command to completion (or its timeout, or its output limit).
    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>>;

    /// Reads a file (relative paths from [`Sandbox::workdir`]).
    fn read_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>>;

    /// Writes a file, creating its parent directories.
    fn write_file<'a>(
        &'a self,
        path: &'a str,
        contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>>;

    /// Starts an interactive process that lives until its guard is dropped or the sandbox
    /// is.
    fn spawn_interactive(
        &self,
        request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>>;

    /// How a person attaches to the sandbox while it runs (the reference's
    /// `SandboxConnection`), when it can be reached from outside the run.
    ///
    /// ```
    /// use actuator_sandbox::{LocalSandbox, Sandbox};
    /// let sandbox = LocalSandbox::builder().unconfined().build().unwrap();
    /// assert!(sandbox.connection().is_none());
    /// ```
    fn connection(&self) -> Option<SandboxConnection> {
        None
    }

    /// The host directory that holds the working directory's files, when they are plain host
    /// files (a local sandbox's): a checkpoint saves them from there. `None` (the default)
    /// when they are elsewhere (a container's).
    ///
    /// ```
    /// use actuator_sandbox::{LocalSandbox, Sandbox};
    /// let sandbox = LocalSandbox::builder().unconfined().build().unwrap();
    /// assert_eq!(sandbox.files_on_host(), Some(sandbox.host_workdir()));
    /// ```
    fn files_on_host(&self) -> Option<&std::path::Path> {
        None
    }

    /// Releases what the sandbox holds outside this process (a container, a pod) and waits
    /// until it is gone. An evaluation calls it when a sample ends, before dropping the
    /// sandbox; dropping without it still releases everything, but may block the dropping
    /// thread while it does (a backend whose teardown is a network call does it there).
    /// After it, commands fail. The default does nothing.
    fn cleanup(&self) -> BoxFuture<'_, Result<(), SandboxError>> {
        Box::pin(async { Ok(()) })
    }
}

/// How to attach to a running sandbox (the reference's `SandboxConnection`).
///
/// ```
/// use actuator_sandbox::SandboxConnection;
/// let connection = SandboxConnection::new("docker", "docker exec -it 3f2a bash -l");
/// assert_eq!(connection.kind, "docker");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxConnection {
    /// The kind of sandbox (`docker`, …).
    pub kind: String,
    /// A shell command that opens a terminal in it.
    pub command: String,
    /// The container, when there is one.
    pub container: Option<String>,
}

impl SandboxConnection {
    /// A connection of `kind`, opened by `command`.
    pub fn new(kind: impl Into<String>, command: impl Into<String>) -> Self {
        SandboxConnection {
            kind: kind.into(),
            command: command.into(),
            container: None,
        }
    }
}

/// The run resource through which tools find their run's sandbox.
///
/// Put one in a run with `RunOptions::new().resource(SandboxHandle::new(sandbox))` (or
/// `RunContext::with_resource`); the tools of `actuator-tools` take it from
/// `ToolContext::extensions`, and return the reference's `sandbox_unavailable` error when
/// there is none.
///
/// ```
/// use actuator_sandbox::{SandboxHandle, NO_SANDBOX_MESSAGE};
/// use actuator_tool_core::{ToolContext, ToolErrorKind};
/// let ctx = ToolContext::new("call_1", "bash");
/// let err = SandboxHandle::from_context(&ctx).unwrap_err();
/// assert_eq!(err.kind(), ToolErrorKind::SandboxUnavailable);
/// assert_eq!(err.message(), NO_SANDBOX_MESSAGE);
/// ```
///
/// A handle also keeps the tools' per-sandbox state ([`SandboxHandle::state`]: the text
/// editor's undo history, the shells of `bash_session`), which lives exactly as long as the
/// handle and its clones, that is, as long as the run.
#[derive(Clone)]
pub struct SandboxHandle {
    sandbox: Arc<dyn Sandbox>,
    state: Arc<StateMap>,
}

type StateMap = std::sync::Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>;

impl fmt::Debug for SandboxHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxHandle")
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

impl SandboxHandle {
    /// Wraps a sandbox.
    pub fn new(sandbox: impl Sandbox + 'static) -> Self {
        Self::from_arc(Arc::new(sandbox))
    }

    /// Wraps a shared sandbox.
    pub fn from_arc(sandbox: Arc<dyn Sandbox>) -> Self {
        SandboxHandle {
            sandbox,
            state: Arc::default(),
        }
    }

    /// What a tool that runs in the run's sandbox declares
    /// ([`ToolDef::with_requirement`](actuator_tool_core::ToolDef::with_requirement)), so that
    /// a run without a `SandboxHandle` is refused before it starts, with how to give it one.
    ///
    /// ```
    /// use actuator_sandbox::{LocalSandbox, SandboxHandle};
    /// use actuator_tool_core::Extensions;
    /// let needs = SandboxHandle::requirement();
    /// let mut resources = Extensions::new();
    /// assert!(!needs.is_met_by(&resources));
    /// resources.insert(SandboxHandle::new(LocalSandbox::builder().unconfined().build().unwrap()));
    /// assert!(needs.is_met_by(&resources));
    /// assert!(needs.how().contains("SandboxHandle::new(LocalSandbox::new()?)"));
    /// ```
    pub fn requirement() -> ResourceRequirement {
        ResourceRequirement::of::<SandboxHandle>(
            "a sandbox",
            "give the run one with RunOptions::new().resource(SandboxHandle::new(LocalSandbox::new()?)) \
             (in an eval: Task::sandbox(|| LocalSandbox::new().map(SandboxHandle::new)))",
        )
    }

    /// The sandbox.
    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.sandbox
    }

    /// The tools' state of type `T` for this sandbox, made with `T::default()` on first use
    /// and shared by every clone of the handle (use interior mutability inside `T`).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use actuator_sandbox::{LocalSandbox, SandboxHandle};
    /// #[derive(Default)]
    /// struct Calls(AtomicU32);
    /// let handle = SandboxHandle::new(LocalSandbox::builder().unconfined().build().unwrap());
    /// handle.state::<Calls>().0.fetch_add(1, Ordering::Relaxed);
    /// assert_eq!(handle.clone().state::<Calls>().0.load(Ordering::Relaxed), 1);
    /// ```
    pub fn state<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut map = match self.state.lock() {
            Ok(map) => map,
            Err(poisoned) => poisoned.into_inner(),
        };
        let entry = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        match Arc::clone(entry).downcast::<T>() {
            Ok(value) => value,
            // Unreachable: the map is keyed by the type; replace rather than panic.
            Err(_) => {
                let value = Arc::new(T::default());
                *entry = value.clone();
                value
            }
        }
    }

    /// The sandbox of the run a tool call belongs to, or the `sandbox_unavailable` error.
    pub fn from_context(ctx: &ToolContext) -> Result<&SandboxHandle, ToolError> {
        ctx.extensions
            .get::<SandboxHandle>()
            .ok_or_else(|| ToolError::sandbox_unavailable(NO_SANDBOX_MESSAGE))
    }
}

impl std::ops::Deref for SandboxHandle {
    type Target = dyn Sandbox;
    fn deref(&self) -> &Self::Target {
        &*self.sandbox
    }
}
