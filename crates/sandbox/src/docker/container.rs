//! Commands in one running container, fast: one long-lived supervisor per user, started once
//! with `docker exec` (about 100 ms), then each command costs what it costs on this machine
//! (a script written to the control directory, a line to the supervisor, two FIFOs), not a
//! `docker exec` of its own.
//!
//! The control directory is the host's, bind-mounted **read-only** at the same path in the
//! container (the compose project adds the mount), exactly as bubblewrap binds it for a
//! [`LocalSandbox`](crate::LocalSandbox): the same supervisor, the same scripts, the same
//! semantics and texts for timeouts, output limits and process groups, and nothing a command
//! writes can become a path the host opens.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::local::command::Identity;
use crate::local::run::RawOutput;
use crate::local::script::{Input, Launch};
use crate::local::supervisor::{Supervisor, SupervisorHost};
use crate::{DEFAULT_MAX_EXEC_OUTPUT, ExecRequest, InteractiveProcess, SandboxError};

/// How long a one-off `docker` command (a user's ids, an inspect) may take.
const DOCKER_CLI_TIMEOUT: Duration = Duration::from_secs(30);

/// The most a one-off `docker` command's output is read.
const DOCKER_CLI_OUTPUT: usize = 64 * 1024;

/// The status of a command run as a user the container does not know: `docker exec`'s.
const UNKNOWN_USER_STATUS: i32 = 126;

/// Why a user has no supervisor.
#[derive(Debug)]
enum NoSupervisor {
    /// The container has no such user (or group): Docker's message, which names it.
    UnknownUser(String),
    /// Anything else.
    Failed(SandboxError),
}

impl From<NoSupervisor> for SandboxError {
    fn from(no: NoSupervisor) -> Self {
        match no {
            NoSupervisor::UnknownUser(message) => SandboxError::unavailable(message),
            NoSupervisor::Failed(e) => e,
        }
    }
}

/// Docker's refusal of a user or group the container's `/etc/passwd` or `/etc/group` does
/// not have, from a failed `docker exec`: exactly its shape (status 126, one line,
/// `unable to find user nobody2: no matching entries in passwd file`), so that what a
/// command prints is never taken for it.
fn unknown_user(ran: &Ran) -> Option<String> {
    let printed = if ran.stderr.is_empty() {
        &ran.stdout
    } else {
        &ran.stderr
    };
    let known_shape = ran.code == Some(UNKNOWN_USER_STATUS)
        && !printed.contains('\n')
        && (printed.starts_with("unable to find user ")
            || printed.starts_with("unable to find group "))
        && printed.ends_with(" file");
    known_shape.then(|| printed.clone())
}

/// One container's commands.
#[derive(Debug)]
pub(crate) struct ContainerExec {
    docker: PathBuf,
    container: String,
    workdir: PathBuf,
    /// Bound read-only at the same path in the container; a control directory per user in it.
    ctl_root: PathBuf,
    /// The supervisors' standard error (the host's only).
    logs: PathBuf,
    default_user: Option<String>,
    supervisors: Mutex<HashMap<Option<String>, Arc<Supervisor>>>,
    /// Held while a supervisor starts, so that commands arriving meanwhile (the first ones,
    /// the set-up's warming) wait for it rather than start another.
    starting: tokio::sync::Mutex<()>,
    next: AtomicU64,
}

/// Starts a supervisor in a container as one user.
#[derive(Debug)]
struct DockerExec {
    docker: PathBuf,
    container: String,
    user: Option<String>,
    workdir: PathBuf,
    ctl: PathBuf,
    log: PathBuf,
    identity: Identity,
}

impl SupervisorHost for DockerExec {
    fn command(&self, argv: &[String]) -> Result<std::process::Command, SandboxError> {
        let mut command = std::process::Command::new(&self.docker);
        // `--flag=value`: a value can never be read as a flag of its own.
        command.args(["exec", "--interactive"]);
        if let Some(user) = &self.user {
            command.arg(format!("--user={user}"));
        }
        let mut workdir = std::ffi::OsString::from("--workdir=");
        workdir.push(&self.workdir);
        command
            .arg(workdir)
            .arg("--")
            .arg(&self.container)
            .args(argv);
        Ok(command)
    }

    fn ctl(&self) -> &Path {
        &self.ctl
    }

    fn identity(&self) -> Identity {
        self.identity
    }

    fn log(&self) -> &Path {
        &self.log
    }

    fn start_dir(&self) -> &Path {
        &self.workdir
    }

    fn missing(&self) -> SandboxError {
        // The module's one error for it, with how to install Docker.
        SandboxError::from(super::DockerError::DockerMissing {
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }

    fn refused(&self, printed: String) -> SandboxError {
        SandboxError::unavailable(format!(
            "The container {} could not start the sandbox's supervisor (it needs bash): {printed}",
            self.container
        ))
    }
}

/// What a one-off `docker` command printed (each stream cut to [`DOCKER_CLI_OUTPUT`] and
/// trimmed) and how it exited.
#[derive(Debug)]
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ran {
    /// The error of a command that failed: what it printed (standard error, else standard
    /// output, where runc puts its refusals).
    fn failure(&self, args: &[&str]) -> SandboxError {
        let printed = if self.stderr.is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        SandboxError::unavailable(format!("`docker {}` failed: {printed}", args.join(" ")))
    }
}

/// Runs a one-off `docker` command, bounded in time and output (the module's CLI runner:
/// what a container prints through it, its own `id` included, is read bounded).
async fn docker_run(docker: &Path, args: &[&str]) -> Result<Ran, SandboxError> {
    let os_args: Vec<std::ffi::OsString> = args.iter().map(std::ffi::OsString::from).collect();
    let out = super::cli::run_program(docker, &os_args, DOCKER_CLI_TIMEOUT)
        .await
        .map_err(SandboxError::from)?;
    let cut = |text: &str| {
        let mut end = text.len().min(DOCKER_CLI_OUTPUT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].trim().to_owned()
    };
    Ok(Ran {
        code: out.code,
        stdout: cut(&out.stdout),
        stderr: cut(&out.stderr),
    })
}

/// Runs a one-off `docker` command, bounded in time and output; its standard output, or an
/// error with what it printed.
pub(crate) async fn docker_output(docker: &Path, args: &[&str]) -> Result<String, SandboxError> {
    let ran = docker_run(docker, args).await?;
    if ran.code == Some(0) {
        Ok(ran.stdout)
    } else {
        Err(ran.failure(args))
    }
}

impl ContainerExec {
    /// Commands in `container`, whose control directories are made in `ctl_root` (bound
    /// read-only at the same path in the container) and whose supervisors log to `logs`.
    /// The working directory is the container's (its image's `WORKDIR`, else `/`).
    pub(crate) async fn new(
        docker: PathBuf,
        container: String,
        ctl_root: PathBuf,
        logs: PathBuf,
        default_user: Option<String>,
    ) -> Result<ContainerExec, SandboxError> {
        let workdir = docker_output(
            &docker,
            &[
                "inspect",
                "--format",
                "{{.Config.WorkingDir}}",
                "--",
                &container,
            ],
        )
        .await?;
        let workdir = if workdir.starts_with('/') {
            PathBuf::from(workdir)
        } else {
            PathBuf::from("/")
        };
        Ok(ContainerExec {
            docker,
            container,
            workdir,
            ctl_root,
            logs,
            default_user,
            supervisors: Mutex::default(),
            starting: tokio::sync::Mutex::new(()),
            next: AtomicU64::new(0),
        })
    }

    /// The container's id.
    pub(crate) fn container(&self) -> &str {
        &self.container
    }

    /// The directory commands start in.
    pub(crate) fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The uid and gid of `user` in the container (its default user when `None`), as the
    /// identity its control directory's files are handed to.
    async fn identity(&self, user: Option<&str>) -> Result<Identity, NoSupervisor> {
        let user_flag = user.map(|u| format!("--user={u}"));
        let mut args = vec!["exec"];
        if let Some(flag) = &user_flag {
            args.push(flag);
        }
        args.extend(["--", self.container.as_str(), "sh", "-c", "id -u; id -g"]);
        let ran = docker_run(&self.docker, &args)
            .await
            .map_err(NoSupervisor::Failed)?;
        if ran.code != Some(0) {
            return Err(match unknown_user(&ran) {
                Some(refusal) => NoSupervisor::UnknownUser(refusal),
                None => NoSupervisor::Failed(ran.failure(&args)),
            });
        }
        let printed = ran.stdout;
        let mut ids = printed.lines().map(|l| l.trim().parse::<u32>());
        let (Some(Ok(uid)), Some(Ok(gid))) = (ids.next(), ids.next()) else {
            return Err(NoSupervisor::Failed(SandboxError::unavailable(format!(
                "The container {} did not say who its user {} is: {printed:?}",
                self.container,
                user.unwrap_or("(default)")
            ))));
        };
        Ok(if uid == rustix::process::geteuid().as_raw() {
            Identity::Caller
        } else {
            Identity::Drop { uid, gid }
        })
    }

    /// Starts the default user's supervisor, so that the first command costs what the others
    /// do; a command arriving while it starts waits for it.
    pub(crate) async fn warm(&self) -> Result<(), SandboxError> {
        self.supervisor(None).await?;
        Ok(())
    }

    /// The running supervisor of `user`, or a new one (the first command as that user, or
    /// one after a command killed the last).
    async fn supervisor(&self, user: Option<String>) -> Result<Arc<Supervisor>, NoSupervisor> {
        let user = user.or_else(|| self.default_user.clone());
        if let Some(running) = self.running(&user) {
            return Ok(running);
        }
        let _starting = self.starting.lock().await;
        // Started by the one that held the lock before.
        if let Some(running) = self.running(&user) {
            return Ok(running);
        }
        let identity = self.identity(user.as_deref()).await?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let host = DockerExec {
            docker: self.docker.clone(),
            container: self.container.clone(),
            user: user.clone(),
            workdir: self.workdir.clone(),
            ctl: self.ctl_root.join(format!("s{n}")),
            log: self.logs.join(format!("supervisor-{n}.log")),
            identity,
        };
        // Starting waits for the supervisor's first line: a `docker exec` away.
        let started = tokio::task::spawn_blocking(move || Supervisor::start(&host))
            .await
            .map_err(|e| {
                SandboxError::unavailable_from("The sandbox's supervisor did not start", e)
            })
            .and_then(|started| started)
            .map_err(NoSupervisor::Failed)?;
        let fresh = Arc::new(started);
        self.supervisors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(user, Arc::clone(&fresh));
        Ok(fresh)
    }

    /// `user`'s supervisor, when it runs.
    fn running(&self, user: &Option<String>) -> Option<Arc<Supervisor>> {
        let slot = self
            .supervisors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.get(user).filter(|s| s.alive()).map(Arc::clone)
    }

    /// Runs `request` to completion, as [`Sandbox::exec`](crate::Sandbox::exec) says.
    pub(crate) async fn exec_raw(&self, request: ExecRequest) -> Result<RawOutput, SandboxError> {
        if request.has_nul_byte() || request.user.as_deref().is_some_and(|u| u.contains('\0')) {
            return Err(SandboxError::NulByte);
        }
        let cwd = match request.cwd.as_deref() {
            None => self.workdir.clone(),
            Some(c) => self.workdir.join(c),
        };
        let limit = request.max_output.unwrap_or(DEFAULT_MAX_EXEC_OUTPUT);
        let supervisor = match self.supervisor(request.user).await {
            Ok(supervisor) => supervisor,
            // As `docker exec` has it (and the reference returns): a failed command with
            // Docker's message.
            Err(NoSupervisor::UnknownUser(message)) => {
                return Ok(RawOutput {
                    status: Some(UNKNOWN_USER_STATUS),
                    stdout: Vec::new(),
                    stderr: format!("{message}\n").into_bytes(),
                });
            }
            Err(NoSupervisor::Failed(e)) => return Err(e),
        };
        let launch = Launch {
            argv: &request.argv,
            cwd: &cwd,
            env: &request.env,
            input: request.stdin.map_or(Input::Null, Input::Bytes),
            stderr: true,
        };
        supervisor.exec(launch, request.timeout, limit).await
    }

    /// Starts an interactive process as the default user.
    pub(crate) async fn session(
        &self,
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<InteractiveProcess, SandboxError> {
        let supervisor = self.supervisor(None).await.map_err(SandboxError::from)?;
        let launch = Launch {
            argv,
            cwd: &self.workdir,
            env,
            input: Input::Pipe,
            stderr: false,
        };
        supervisor.session(launch).await
    }
}
