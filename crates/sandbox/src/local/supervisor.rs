//! One long-lived bubblewrap sandbox per [`LocalSandbox`](crate::LocalSandbox), and the small
//! bash supervisor inside it that forks each command.
//!
//! bwrap starts once, with `bash` running [`SUPERVISOR`] as its command. The host talks to it
//! over three channels:
//!
//! - **requests**: bwrap's standard input. The host writes a request id per line; the
//!   supervisor sources the script `ID.sh` the host wrote in the control directory, in a
//!   background job of its own (job control is on, so each command is a process group);
//! - **events**: bwrap's standard output. Each command reports `ID s PGID` once its standard
//!   streams are open and `ID x STATUS` when it exits; a dispatcher thread on the host routes
//!   them to the waiting call. End of file means the sandbox is gone;
//! - **kills**: the FIFO `kill` in the control directory, read by a second bash loop that
//!   never forks (so a fork bomb that exhausts the process limit cannot stall it): a process
//!   group id per line, killed with `SIGKILL`.
//!
//! A command's standard output and error are FIFOs (`ID.out`, `ID.err`) the host opens for
//! reading before it sends the request, and reads only after the `s` event (a FIFO read
//! before its writer opened would see end of file); its standard input is a plain file
//! (`ID.in`) or, for an interactive process, a FIFO. The control directory is the host's and
//! bound read-only inside the sandbox (see [`ControlDir`]): nothing a command writes can
//! become a name the host opens.
//!
//! The supervisor runs as the same user as the commands, so a command can take it over
//! (`/proc`, `ptrace`): the host treats it as hostile. An event line longer than
//! [`MAX_EVENT_LINE`](super::events::MAX_EVENT_LINE), one that does not parse, or a supervisor that stops taking requests
//! stops the sandbox (every waiting call gets [`SandboxError::SupervisorMisbehaved`]) and
//! the next command starts a new one; a command that ends without opening its streams
//! returns at once with its status.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::unix::pipe;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use std::time::Duration;

use tokio::time::Instant;

use super::command::{Confined, Identity, SANDBOX_PATH};
use super::control::ControlDir;
use super::events::{Event, Pending, Shared, lock, read_event};
use super::run::{Collected, RawOutput, collect_streams, sleep_until};
use super::script::{Input, Launch, SUPERVISOR, command_script};
use crate::{InteractiveProcess, SandboxError};

/// How long a command's exit report may trail the end of its output (it is written before
/// the output's last holder closes it, so it normally arrives within microseconds).
const EXIT_REPORT_GRACE: Duration = Duration::from_secs(5);

/// The host side of one running supervisor (one bwrap process).
#[derive(Debug)]
pub(crate) struct Supervisor {
    child: Mutex<Child>,
    requests: Mutex<Option<ChildStdin>>,
    shared: Arc<Shared>,
    /// The supervisor's working directory (the sandbox's).
    start_dir: PathBuf,
}

/// A command sent to the supervisor: its events, its streams, and the guard that kills it.
#[derive(Debug)]
pub(crate) struct Launched {
    pub guard: CommandGuard,
    pub events: UnboundedReceiver<Event>,
    pub stdout: pipe::Receiver,
    pub stderr: Option<pipe::Receiver>,
    pub stdin: Option<pipe::Sender>,
}

/// Kills a command's process group when dropped before it finished (a timeout, the output
/// limit, a dropped call or a closed session); a finished command is left alone, so what it
/// started in the background keeps running until the sandbox goes.
#[derive(Debug)]
pub(crate) struct CommandGuard {
    shared: Arc<Shared>,
    id: u64,
    pgid: Option<i32>,
    /// Whether the request reached the supervisor (else there is nothing to cancel).
    sent: bool,
    finished: bool,
}

impl CommandGuard {
    /// Records the command's process group (from its `s` event) and removes its files from
    /// the control directory (its streams are open by now).
    pub fn started(&mut self, pgid: i32) {
        self.pgid = Some(pgid);
        self.shared.remove_files(self.id);
    }

    /// The command ran to completion: nothing to kill.
    pub fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for CommandGuard {
    fn drop(&mut self) {
        if !self.finished {
            match self.pgid {
                Some(pgid) => {
                    lock(&self.shared.pending).remove(&self.id);
                    self.shared.kill(pgid);
                }
                None if !self.sent => {
                    lock(&self.shared.pending).remove(&self.id);
                }
                None => {
                    let mut pending = lock(&self.shared.pending);
                    match pending.get_mut(&self.id) {
                        // Started, but the call was dropped before it read so: kill it here.
                        Some(Pending::Waiting {
                            started: Some(pgid),
                            ..
                        }) => {
                            let pgid = *pgid;
                            pending.remove(&self.id);
                            drop(pending);
                            self.shared.kill(pgid);
                        }
                        // The dispatcher kills it when (if) it starts.
                        Some(entry) => *entry = Pending::Cancelled,
                        None => {}
                    }
                }
            }
        }
        if self.pgid.is_none() {
            // Not removed at the start (there was none, or it is yet to come).
            self.shared.remove_files(self.id);
        }
    }
}

/// Where a supervisor runs and how it is started: on this machine under bubblewrap
/// ([`Confined`]), or in a container through `docker exec`. Each says what its failures to
/// start mean to the user.
pub(crate) trait SupervisorHost: std::fmt::Debug + Send + Sync {
    /// The host command that runs `argv` (bash with the supervisor) where commands run, with
    /// its environment; standard streams are set by the caller.
    fn command(&self, argv: &[String]) -> Result<std::process::Command, SandboxError>;
    /// The control directory (the host's; the same path where commands run).
    fn ctl(&self) -> &Path;
    /// Who commands run as, for the control directory's files.
    fn identity(&self) -> Identity;
    /// Where the supervisor's standard error goes (on the host only).
    fn log(&self) -> &Path;
    /// The directory the supervisor starts in (where commands run by default).
    fn start_dir(&self) -> &Path;
    /// The program that starts the supervisor is not installed.
    fn missing(&self) -> SandboxError;
    /// It started but the supervisor did not come up; `printed` is what it said.
    fn refused(&self, printed: String) -> SandboxError;
}

impl SupervisorHost for Confined {
    fn command(&self, argv: &[String]) -> Result<std::process::Command, SandboxError> {
        let full = self.argv(&self.workdir, argv);
        let (program, args) = full.split_first().ok_or(SandboxError::BubblewrapMissing)?;
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .env("PATH", SANDBOX_PATH)
            .env("HOME", &self.workdir)
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", "/tmp");
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
        SandboxError::BubblewrapMissing
    }

    fn refused(&self, stderr: String) -> SandboxError {
        SandboxError::BubblewrapRefused { stderr }
    }
}

impl Supervisor {
    /// Starts the supervisor where `host` runs commands and waits until it is ready. The
    /// program missing or refusing are `host`'s errors, with what it printed.
    pub fn start(host: &dyn SupervisorHost) -> Result<Supervisor, SandboxError> {
        let ctl = ControlDir::create(host.ctl(), host.identity())?;
        ctl.remove("kill");
        // Read-write, so opening never waits for the killer; non-blocking, so a stalled
        // killer cannot block a drop.
        let kills = File::from(ctl.fifo("kill", false)?);
        let log_path = host.log().to_owned();
        let log = File::create(&log_path)?;

        let mut argv = vec![
            "bash",
            "--noprofile",
            "--norc",
            "-c",
            SUPERVISOR,
            "supervisor",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        argv.push(host.ctl().to_string_lossy().into_owned());
        let mut child = host
            .command(&argv)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => host.missing(),
                _ => host.refused(e.to_string()),
            })?;
        let (Some(requests), Some(events)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(host.refused("its pipes could not be opened".to_owned()));
        };
        let mut events = BufReader::new(events);
        let mut line = Vec::new();
        let ready = read_event(&mut events, &mut line).is_ok_and(|read| read) && line == b"ready\n";
        if !ready {
            let _ = child.kill();
            let status = child.wait();
            let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
            let printed = printed.trim();
            return Err(host.refused(if !printed.is_empty() {
                printed.to_owned()
            } else {
                match status {
                    Ok(status) => format!("it exited with {status}"),
                    Err(e) => format!("it exited: {e}"),
                }
            }));
        }
        // Non-blocking: a supervisor that stops taking requests must not block a caller.
        if let Err(e) = rustix::fs::fcntl_setfl(&requests, rustix::fs::OFlags::NONBLOCK) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::from(e).into());
        }
        let shared = Arc::new(Shared {
            ctl,
            pending: Mutex::default(),
            alive: AtomicBool::new(true),
            kills: Mutex::new(Some(kills)),
            bwrap: Mutex::new(
                i32::try_from(child.id())
                    .ok()
                    .and_then(rustix::process::Pid::from_raw),
            ),
            misbehaved: Mutex::new(None),
        });
        let thread_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("actuator-sandbox-events".to_owned())
            .spawn(move || thread_shared.dispatch_all(events));
        if let Err(e) = spawned {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e.into());
        }
        Ok(Supervisor {
            child: Mutex::new(child),
            requests: Mutex::new(Some(requests)),
            shared,
            start_dir: host.start_dir().to_owned(),
        })
    }

    /// Whether the sandbox is still running (a command may have killed the supervisor).
    pub fn alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// Writes the command's files, opens its streams and sends the request. The command
    /// starts soon after; its events arrive on [`Launched::events`].
    pub fn launch(&self, launch: Launch<'_>) -> Result<Launched, SandboxError> {
        // Unique in the process: a sandbox restarted in the same directory never reuses the
        // name of a file an earlier call may still remove.
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let ctl = &self.shared.ctl;
        let name = |ext: &str| format!("{id}.{ext}");
        let (tx, events) = unbounded_channel();
        lock(&self.shared.pending).insert(id, Pending::Waiting { tx, started: None });
        // From here on, the guard cleans up whatever happens.
        let mut guard = CommandGuard {
            shared: Arc::clone(&self.shared),
            id,
            pgid: None,
            sent: false,
            finished: false,
        };
        let unavailable = |e: std::io::Error| {
            SandboxError::unavailable_from("The sandbox could not start a process", e)
        };
        let stdout =
            pipe::Receiver::from_owned_fd(ctl.fifo(&name("out"), true)?).map_err(unavailable)?;
        let stderr = if launch.stderr {
            Some(
                pipe::Receiver::from_owned_fd(ctl.fifo(&name("err"), true)?)
                    .map_err(unavailable)?,
            )
        } else {
            None
        };
        let stdin = match &launch.input {
            Input::Null => None,
            Input::Bytes(bytes) => {
                ctl.write_new(&name("in"), bytes)?;
                None
            }
            // Read-write, so it opens before the command's end does and the command's open
            // does not wait; the command sees end of file when this is dropped.
            Input::Pipe => Some(
                pipe::Sender::from_owned_fd(ctl.fifo(&name("in"), false)?).map_err(unavailable)?,
            ),
        };
        let stdin_path = match launch.input {
            Input::Null => "/dev/null".to_owned(),
            _ => ctl.path(&name("in")).to_string_lossy().into_owned(),
        };
        let script = command_script(
            id,
            &stdin_path,
            &ctl.path(&name("out")),
            launch.stderr.then(|| ctl.path(&name("err"))).as_deref(),
            &launch,
            &self.start_dir,
        );
        ctl.write_new(&name("sh"), script.as_bytes())?;
        self.send(id)?;
        guard.sent = true;
        Ok(Launched {
            guard,
            events,
            stdout,
            stderr,
            stdin,
        })
    }

    /// Runs a command to completion (its timeout, its output limit), as
    /// [`Sandbox::exec`](crate::Sandbox::exec) does.
    pub async fn exec(
        &self,
        command: Launch<'_>,
        timeout: Option<Duration>,
        limit: usize,
    ) -> Result<RawOutput, SandboxError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let Launched {
            mut guard,
            mut events,
            stdout,
            stderr,
            ..
        } = self.launch(command)?;
        tokio::select! {
            event = events.recv() => match event {
                Some(Event::Started(pgid)) => guard.started(pgid),
                // It ended before its streams opened (they never will: reading them would
                // wait for a writer forever). Nothing was produced; its status says why.
                Some(Event::Exited(status)) => {
                    guard.finish();
                    return Ok(RawOutput { status: Some(status), stdout: Vec::new(), stderr: Vec::new() });
                }
                Some(Event::Gone) | None => return Err(self.shared.lost()),
            },
            // Not started yet: the guard cancels it.
            () = sleep_until(deadline) => return Collected::TimedOut {
                stdout: Vec::new(),
                stderr: Vec::new(),
            }.into_result(limit),
        }
        let shared = &self.shared;
        // Watched while the streams are read. The job shell holds standard output until it
        // has reported the exit, so once both streams are at end of file the report is
        // already on its way, or it never comes (the job shell was killed, say by
        // `kill -9 $PPID`): `collect_streams` waits `EXIT_REPORT_GRACE` for it then.
        let exit = async move {
            loop {
                match events.recv().await {
                    Some(Event::Exited(status)) => return Ok(Some(status)),
                    Some(Event::Started(_)) => {}
                    Some(Event::Gone) | None => return Err(shared.lost()),
                }
            }
        };
        let collected = collect_streams(
            Some(stdout),
            stderr,
            exit,
            deadline,
            limit,
            Some(EXIT_REPORT_GRACE),
        )
        .await;
        match collected {
            Collected::Exited(_) => guard.finish(),
            Collected::Unreported => {
                shared.misbehaved(
                    "lost a command: the shell waiting for it was killed before it \
                     reported how the command ended, without reporting"
                        .to_owned(),
                );
                return Err(shared.lost());
            }
            _ => {}
        }
        // A timeout or the output limit: the command's group is killed here.
        drop(guard);
        collected.into_result(limit)
    }

    /// Starts an interactive process (standard input a FIFO, standard error dropped) that
    /// lives until its guard is dropped or the sandbox goes.
    pub async fn session(&self, command: Launch<'_>) -> Result<InteractiveProcess, SandboxError> {
        let Launched {
            mut guard,
            mut events,
            stdout,
            stdin,
            ..
        } = self.launch(command)?;
        match events.recv().await {
            Some(Event::Started(pgid)) => guard.started(pgid),
            // It ended before its streams opened: there is no session to talk to.
            Some(Event::Exited(status)) => {
                guard.finish();
                return Err(SandboxError::unavailable(format!(
                    "The interactive process could not start (exit status {status} before its \
                     streams opened)."
                )));
            }
            Some(Event::Gone) | None => return Err(self.shared.lost()),
        }
        let Some(stdin) = stdin else {
            return Err(SandboxError::unavailable(
                "The sandbox could not open the session's pipes.".to_owned(),
            ));
        };
        Ok(InteractiveProcess {
            input: Box::pin(stdin),
            output: Box::pin(stdout),
            guard: Box::new(guard),
        })
    }

    /// Sends one request line. The pipe is non-blocking and a line is shorter than
    /// `PIPE_BUF`, so it is written whole or not at all: a full pipe means the supervisor
    /// stopped taking requests, and the sandbox is stopped rather than waited on.
    fn send(&self, id: u64) -> Result<(), SandboxError> {
        let mut requests = lock(&self.requests);
        let written = match requests.as_mut() {
            Some(pipe) => pipe.write_all(format!("{id}\n").as_bytes()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        match written {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                drop(requests);
                self.shared
                    .misbehaved("stopped taking requests (its request pipe is full)".to_owned());
                Err(self.shared.lost())
            }
            Err(e) => Err(SandboxError::unavailable_from(
                "The sandbox is no longer running and could not start a process",
                e,
            )),
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Killing bwrap ends the sandbox's PID namespace, with everything left in it
        // (`--die-with-parent` takes its init down with it).
        self.shared.alive.store(false, Ordering::SeqCst);
        lock(&self.requests).take();
        // Once reaped, its id may go to another process: nothing may signal it after this.
        let mut bwrap = lock(&self.shared.bwrap);
        bwrap.take();
        let mut child = lock(&self.child);
        let _ = child.kill();
        let _ = child.wait();
        drop(bwrap);
    }
}
