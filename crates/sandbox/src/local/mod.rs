//! [`LocalSandbox`]: a per-run working directory on this machine, every command confined
//! with bubblewrap.

pub(crate) mod command;
mod control;
mod events;
pub(crate) mod run;
pub(crate) mod script;
pub(crate) mod supervisor;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use actuator_tool_core::BoxFuture;
use tokio::process::Command;

pub use command::ResourceLimits;
use command::{Confined, Identity, SANDBOX_PATH, find_bwrap, has_controlling_terminal};
use run::{LiveGroups, collect, spawn};
use script::{Input, Launch};
use supervisor::Supervisor;

use crate::shell;
use crate::{
    DEFAULT_MAX_EXEC_OUTPUT, ExecOutput, ExecRequest, InteractiveProcess, Sandbox, SandboxError,
    SessionRequest,
};

/// How a [`LocalSandbox`] runs its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Confinement {
    /// Confined with bubblewrap (the default).
    Bubblewrap,
    /// Plain subprocesses in the working directory, like Inspect's `local` sandbox: no
    /// isolation at all. Only ever chosen explicitly.
    Unconfined,
}

/// Builds a [`LocalSandbox`].
#[derive(Debug, Clone)]
pub struct LocalSandboxBuilder {
    confinement: Confinement,
    network: bool,
    limits: ResourceLimits,
    run_as: (u32, u32),
    ro_binds: Vec<PathBuf>,
    parent: Option<PathBuf>,
    bwrap: Option<PathBuf>,
}

impl Default for LocalSandboxBuilder {
    fn default() -> Self {
        LocalSandboxBuilder {
            confinement: Confinement::Bubblewrap,
            network: false,
            limits: ResourceLimits::default(),
            run_as: (65534, 65534),
            ro_binds: Vec::new(),
            parent: None,
            bwrap: None,
        }
    }
}

impl LocalSandboxBuilder {
    /// Lets commands reach the network (off by default: no interface but a private
    /// loopback).
    #[must_use]
    pub fn network(mut self, enabled: bool) -> Self {
        self.network = enabled;
        self
    }

    /// Sets the resource limits.
    #[must_use]
    pub fn limits(mut self, limits: ResourceLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The host user and group commands run as when the caller is root (default `nobody`,
    /// 65534). Ignored for an unprivileged caller, whose commands run as itself.
    #[must_use]
    pub fn run_as(mut self, uid: u32, gid: u32) -> Self {
        self.run_as = (uid, gid);
        self
    }

    /// Also makes `path` visible, read-only, at the same place (a toolchain, a dataset).
    #[must_use]
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.ro_binds.push(path.into());
        self
    }

    /// Creates the sandbox's directory under `parent` (default: the system temp dir).
    #[must_use]
    pub fn parent_dir(mut self, parent: impl Into<PathBuf>) -> Self {
        self.parent = Some(parent.into());
        self
    }

    /// Uses this `bwrap` binary instead of the one on `PATH`.
    #[must_use]
    pub fn bwrap(mut self, path: impl Into<PathBuf>) -> Self {
        self.bwrap = Some(path.into());
        self
    }

    /// Runs commands **unconfined**: plain subprocesses that can read, write and reach
    /// everything the caller can. For machines without bubblewrap, chosen knowingly.
    #[must_use]
    pub fn unconfined(mut self) -> Self {
        self.confinement = Confinement::Unconfined;
        self
    }

    /// Creates the working directory and starts the sandbox (bubblewrap and the supervisor
    /// inside it: a short blocking start, a few milliseconds). Fails with
    /// [`SandboxError::BubblewrapMissing`] or [`SandboxError::BubblewrapRefused`], whose
    /// texts say how to fix it.
    pub fn build(self) -> Result<LocalSandbox, SandboxError> {
        let root = match &self.parent {
            Some(p) => tempfile::Builder::new()
                .prefix("actuator-sandbox-")
                .tempdir_in(p)?,
            None => tempfile::Builder::new()
                .prefix("actuator-sandbox-")
                .tempdir()?,
        };
        let workdir = root.path().join("work");
        let tmp = root.path().join("tmp");
        std::fs::create_dir(&workdir)?;
        std::fs::create_dir(&tmp)?;
        let (confined, supervisor) = match self.confinement {
            Confinement::Unconfined => (None, None),
            Confinement::Bubblewrap => {
                let bwrap = self
                    .bwrap
                    .or_else(find_bwrap)
                    .filter(|p| p.is_file())
                    .ok_or(SandboxError::BubblewrapMissing)?;
                let identity = if rustix::process::geteuid().is_root() {
                    let (uid, gid) = self.run_as;
                    for dir in [&workdir, &tmp] {
                        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
                    }
                    Identity::Drop { uid, gid }
                } else {
                    Identity::Caller
                };
                let confined = Confined {
                    bwrap,
                    workdir: workdir.clone(),
                    tmp: tmp.clone(),
                    network: self.network,
                    identity,
                    limits: self.limits,
                    ro_binds: self.ro_binds,
                    ctl: root.path().join("ctl"),
                    log: root.path().join("supervisor.log"),
                    new_session: has_controlling_terminal(),
                };
                let supervisor = Arc::new(Supervisor::start(&confined)?);
                (Some(confined), Some(supervisor))
            }
        };
        Ok(LocalSandbox {
            workdir_str: workdir.to_string_lossy().into_owned(),
            workdir,
            tmp,
            confined,
            supervisor: Mutex::new(supervisor),
            live: LiveGroups::default(),
            root,
        })
    }
}

/// The embedded sandbox: a fresh working directory per run, every command confined with
/// bubblewrap (see the crate docs for what that means).
///
/// Confined, it is one long-lived bubblewrap sandbox (one PID namespace) started when it is
/// built, with a small supervisor inside that forks each command as its own process group:
/// a process a command leaves in the background keeps running, as in the reference, until
/// the sandbox goes, provided its output goes elsewhere (`server > log 2>&1 &`). If a command
/// kills the supervisor, the next command starts a fresh sandbox (the working directory is
/// kept, background processes are not). Unconfined, each command is a plain subprocess whose
/// whole process group is killed when it exits.
///
/// A call returns at most a second after its command exits, with the output read until then:
/// a process the command left holding its standard output or error open cannot make the call
/// wait for it (the reference waits until it ends or the call times out). Such a process is
/// killed with the command's group when the call returns.
///
/// Dropping it kills every process it started that is still running (the whole PID
/// namespace, when confined) and deletes its directory, so a run that ends, is cancelled or
/// panics leaves nothing behind.
#[derive(Debug)]
pub struct LocalSandbox {
    workdir: PathBuf,
    workdir_str: String,
    tmp: PathBuf,
    confined: Option<Confined>,
    supervisor: Mutex<Option<Arc<Supervisor>>>,
    live: LiveGroups,
    // Last, so processes are killed before the directory goes.
    root: tempfile::TempDir,
}

impl LocalSandbox {
    /// A confined sandbox with the default options (see [`LocalSandboxBuilder::build`]).
    pub fn new() -> Result<Self, SandboxError> {
        Self::builder().build()
    }

    /// A builder for other options (network, limits, unconfined).
    pub fn builder() -> LocalSandboxBuilder {
        LocalSandboxBuilder::default()
    }

    /// The working directory on the host (the same path inside the sandbox).
    pub fn host_workdir(&self) -> &Path {
        &self.workdir
    }

    /// The directory seen as `/tmp` inside the sandbox.
    pub fn host_tmp(&self) -> &Path {
        &self.tmp
    }

    /// The sandbox's own directory on the host (working directory and `/tmp` inside it).
    pub fn host_root(&self) -> &Path {
        self.root.path()
    }

    /// How commands are run.
    pub fn confinement(&self) -> Confinement {
        if self.confined.is_some() {
            Confinement::Bubblewrap
        } else {
            Confinement::Unconfined
        }
    }

    /// An unconfined command.
    fn command(&self, argv: &[String], cwd: &Path, env: &[(String, String)]) -> Command {
        let mut cmd = Command::new(argv.first().map_or("true", String::as_str));
        cmd.args(argv.iter().skip(1))
            .env_clear()
            .env("PATH", SANDBOX_PATH)
            .env("HOME", &self.workdir)
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", "/tmp")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd);
        cmd
    }

    /// The running supervisor, or a fresh one when a command killed the last.
    fn supervisor(&self, confined: &Confined) -> Result<Arc<Supervisor>, SandboxError> {
        let mut slot = match self.supervisor.lock() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(running) = slot.as_ref().filter(|s| s.alive()) {
            return Ok(Arc::clone(running));
        }
        tracing::warn!("the sandbox's supervisor is gone; starting a new sandbox");
        let fresh = Arc::new(Supervisor::start(confined)?);
        *slot = Some(Arc::clone(&fresh));
        Ok(fresh)
    }

    fn cwd(&self, cwd: Option<&str>) -> PathBuf {
        match cwd {
            None => self.workdir.clone(),
            Some(c) => self.workdir.join(c),
        }
    }

    async fn exec_raw(&self, request: ExecRequest) -> Result<run::RawOutput, SandboxError> {
        if request.has_nul_byte() {
            return Err(SandboxError::NulByte);
        }
        if let Some(user) = request.user {
            return Err(SandboxError::UserUnsupported {
                name: "LocalSandbox".to_owned(),
                user,
            });
        }
        let cwd = self.cwd(request.cwd.as_deref());
        let limit = request.max_output.unwrap_or(DEFAULT_MAX_EXEC_OUTPUT);
        if let Some(confined) = &self.confined {
            let supervisor = self.supervisor(confined)?;
            let launch = Launch {
                argv: &request.argv,
                cwd: &cwd,
                env: &request.env,
                input: request.stdin.map_or(Input::Null, Input::Bytes),
                stderr: true,
            };
            return supervisor.exec(launch, request.timeout, limit).await;
        }
        let cmd = self.command(&request.argv, &cwd, &request.env);
        let (child, guard) = spawn(cmd, request.stdin.is_some(), &self.live)?;
        collect(child, guard, request.stdin, request.timeout, limit).await
    }
}

impl Drop for LocalSandbox {
    fn drop(&mut self) {
        self.live.kill_all();
        // Kills bwrap, and with it the sandbox's whole PID namespace.
        if let Ok(mut slot) = self.supervisor.lock() {
            slot.take();
        }
    }
}

impl Sandbox for LocalSandbox {
    fn name(&self) -> &str {
        "local"
    }

    fn workdir(&self) -> &str {
        &self.workdir_str
    }

    fn files_on_host(&self) -> Option<&Path> {
        Some(self.host_workdir())
    }

    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        Box::pin(async move {
            let program = shell::program(&request);
            let raw = self.exec_raw(request).await?;
            shell::exec_output(&program, raw)
        })
    }

    fn read_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>> {
        Box::pin(async move {
            // Read inside the sandbox, so it sees exactly what its commands see.
            shell::read_result(path, self.exec_raw(shell::read_request(path)).await)
        })
    }

    fn write_file<'a>(
        &'a self,
        path: &'a str,
        contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async move {
            let raw = self.exec_raw(shell::write_request(path, contents)).await?;
            shell::write_result(path, raw)
        })
    }

    fn spawn_interactive(
        &self,
        request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>> {
        Box::pin(async move {
            let (argv, env) = shell::session_command(&request)?;
            if let Some(confined) = &self.confined {
                let supervisor = self.supervisor(confined)?;
                let launch = Launch {
                    argv: &argv,
                    cwd: &self.workdir,
                    env: &env,
                    input: Input::Pipe,
                    stderr: false,
                };
                return supervisor.session(launch).await;
            }
            let cmd = self.command(&argv, &self.workdir, &env);
            let (mut child, guard) = spawn(cmd, true, &self.live)?;
            // The terminal carries the shell's standard error; only `script`'s own is here.
            drop(child.stderr.take());
            let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(SandboxError::unavailable(
                    "The sandbox could not open the session's pipes.".to_owned(),
                ));
            };
            Ok(InteractiveProcess {
                input: Box::pin(input),
                output: Box::pin(output),
                guard: Box::new((guard, ChildHolder(std::sync::Mutex::new(child)))),
            })
        })
    }
}

/// Keeps the child (and its `kill_on_drop`) alive as long as the session's guard.
struct ChildHolder(#[allow(dead_code)] std::sync::Mutex<tokio::process::Child>);
