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
//! (`ID.in`) or, for an interactive process, a FIFO. The control directory is bound inside
//! the sandbox at its host path, so commands can see it: it is not a boundary between the
//! commands of one sandbox (they all run as one user), only between the sandbox and the host.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::net::unix::pipe;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use std::time::Duration;

use tokio::time::Instant;

use super::command::{Confined, Identity, SANDBOX_PATH};
use super::run::{Collected, RawOutput, collect_streams, sleep_until};
use super::script::{SUPERVISOR, command_script};
use crate::{InteractiveProcess, SandboxError};

fn gone() -> SandboxError {
    SandboxError::Unavailable(
        "The sandbox stopped running (its supervisor was killed); the next command starts a new one."
            .to_owned(),
    )
}

/// What the supervisor reports about one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The command's streams are open; it runs as this process group (sandbox PID).
    Started(i32),
    /// The command exited with this status (128 + n when killed by signal n).
    Exited(i32),
    /// The sandbox is gone.
    Gone,
}

/// A call waiting for its command's events, or one dropped before its command started.
#[derive(Debug)]
enum Pending {
    /// The call waits; `started` is its group once the `s` event was passed on (the call may
    /// be dropped before it reads it, and then its guard kills that group).
    Waiting {
        tx: UnboundedSender<Event>,
        started: Option<i32>,
    },
    Cancelled,
}

/// What the host side of the supervisor shares with its dispatcher thread and the guards.
#[derive(Debug)]
struct Shared {
    ctl: PathBuf,
    pending: Mutex<HashMap<u64, Pending>>,
    alive: AtomicBool,
    kills: Mutex<Option<File>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Shared {
    /// Asks the killer to `SIGKILL` a process group of the sandbox.
    fn kill(&self, pgid: i32) {
        if pgid <= 1 {
            return;
        }
        if let Some(file) = lock(&self.kills).as_mut() {
            // Non-blocking and shorter than PIPE_BUF: written whole, or not at all when the
            // killer is gone (then so is the sandbox, soon).
            let _ = file.write_all(format!("{pgid}\n").as_bytes());
        }
    }

    fn remove_files(&self, id: u64) {
        for ext in ["sh", "in", "out", "err"] {
            let _ = std::fs::remove_file(self.ctl.join(format!("{id}.{ext}")));
        }
    }

    /// Routes one event line (`ID s PGID`, `ID x STATUS`); anything else is ignored.
    fn dispatch(&self, line: &str) {
        let mut parts = line.split_ascii_whitespace();
        let (Some(id), Some(kind), Some(value), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        let (Ok(id), Ok(value)) = (id.parse::<u64>(), value.parse::<i32>()) else {
            return;
        };
        let event = match kind {
            "s" => Event::Started(value),
            "x" => Event::Exited(value),
            _ => return,
        };
        let mut pending = lock(&self.pending);
        match (pending.get_mut(&id), event) {
            (Some(Pending::Waiting { tx, .. }), Event::Exited(_)) => {
                let _ = tx.send(event);
                pending.remove(&id);
            }
            (Some(Pending::Waiting { tx, started }), _) => {
                if let Event::Started(pgid) = event {
                    *started = Some(pgid);
                }
                let _ = tx.send(event);
            }
            (Some(Pending::Cancelled), Event::Started(pgid)) => {
                pending.remove(&id);
                drop(pending);
                self.kill(pgid);
                self.remove_files(id);
            }
            (Some(Pending::Cancelled), _) => {
                pending.remove(&id);
                drop(pending);
                self.remove_files(id);
            }
            (None, _) => {}
        }
    }

    /// The sandbox is gone: every waiting call learns it.
    fn gone(&self) {
        self.alive.store(false, Ordering::SeqCst);
        *lock(&self.kills) = None;
        let pending = std::mem::take(&mut *lock(&self.pending));
        for (_, entry) in pending {
            if let Pending::Waiting { tx, .. } = entry {
                let _ = tx.send(Event::Gone);
            }
        }
    }
}

/// The host side of one running supervisor (one bwrap process).
#[derive(Debug)]
pub(crate) struct Supervisor {
    child: Mutex<Child>,
    requests: Mutex<Option<ChildStdin>>,
    shared: Arc<Shared>,
    identity: Identity,
    /// The supervisor's working directory (the sandbox's).
    start_dir: PathBuf,
}

/// How a launched command gets its standard input.
#[derive(Debug)]
pub(crate) enum Input {
    /// `/dev/null`.
    Null,
    /// These bytes (a file in the control directory).
    Bytes(Vec<u8>),
    /// A FIFO the host writes to (an interactive process).
    Pipe,
}

/// One command to start in the sandbox.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub input: Input,
    /// Whether standard error is kept (else it goes to `/dev/null`).
    pub stderr: bool,
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

fn fifo(path: &Path, identity: Identity) -> Result<(), SandboxError> {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .map_err(std::io::Error::from)?;
    chown(path, identity)
}

fn chown(path: &Path, identity: Identity) -> Result<(), SandboxError> {
    if let Identity::Drop { uid, gid } = identity {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))?;
    }
    Ok(())
}

fn refused(stderr: String) -> SandboxError {
    SandboxError::BubblewrapRefused { stderr }
}

impl Supervisor {
    /// Starts bwrap with the supervisor and waits until it is ready. bwrap missing or
    /// refusing are the builder's errors, with what bwrap printed.
    pub fn start(confined: &Confined) -> Result<Supervisor, SandboxError> {
        let ctl = &confined.ctl;
        match std::fs::create_dir(ctl) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.into()),
            _ => {}
        }
        chown(ctl, confined.identity)?;
        let kill_path = ctl.join("kill");
        let _ = std::fs::remove_file(&kill_path);
        fifo(&kill_path, confined.identity)?;
        let log_path = confined.log.clone();
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
        argv.push(ctl.to_string_lossy().into_owned());
        let full = confined.argv(&confined.workdir, &argv);
        let (program, args) = full.split_first().ok_or(SandboxError::BubblewrapMissing)?;
        let mut child = std::process::Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", SANDBOX_PATH)
            .env("HOME", &confined.workdir)
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", "/tmp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => SandboxError::BubblewrapMissing,
                _ => refused(e.to_string()),
            })?;
        let (Some(requests), Some(events)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(refused("its pipes could not be opened".to_owned()));
        };
        let mut events = BufReader::new(events);
        let mut line = String::new();
        let ready = events.read_line(&mut line).is_ok() && line == "ready\n";
        if !ready {
            let _ = child.kill();
            let status = child.wait();
            let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
            let printed = printed.trim();
            return Err(refused(if !printed.is_empty() {
                printed.to_owned()
            } else {
                match status {
                    Ok(status) => format!("it exited with {status}"),
                    Err(e) => format!("it exited: {e}"),
                }
            }));
        }
        // Read-write, so opening never waits for the killer; non-blocking, so a stalled
        // killer cannot block a drop.
        let kills = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&kill_path)?;
        rustix::fs::fcntl_setfl(&kills, rustix::fs::OFlags::NONBLOCK)
            .map_err(std::io::Error::from)?;
        let shared = Arc::new(Shared {
            ctl: ctl.clone(),
            pending: Mutex::default(),
            alive: AtomicBool::new(true),
            kills: Mutex::new(Some(kills)),
        });
        let thread_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("actuator-sandbox-events".to_owned())
            .spawn(move || {
                let mut line = String::new();
                loop {
                    line.clear();
                    match events.read_line(&mut line) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => thread_shared.dispatch(&line),
                    }
                }
                thread_shared.gone();
            });
        if let Err(e) = spawned {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e.into());
        }
        Ok(Supervisor {
            child: Mutex::new(child),
            requests: Mutex::new(Some(requests)),
            shared,
            identity: confined.identity,
            start_dir: confined.workdir.clone(),
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
        let path = |ext: &str| ctl.join(format!("{id}.{ext}"));
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
            SandboxError::Unavailable(format!("The sandbox could not start a process: {e}"))
        };
        let out_path = path("out");
        fifo(&out_path, self.identity)?;
        let stdout = pipe::OpenOptions::new()
            .open_receiver(&out_path)
            .map_err(unavailable)?;
        let stderr = if launch.stderr {
            let err_path = path("err");
            fifo(&err_path, self.identity)?;
            Some(
                pipe::OpenOptions::new()
                    .open_receiver(&err_path)
                    .map_err(unavailable)?,
            )
        } else {
            None
        };
        let in_path = path("in");
        let stdin = match &launch.input {
            Input::Null => None,
            Input::Bytes(bytes) => {
                std::fs::write(&in_path, bytes)?;
                chown(&in_path, self.identity)?;
                None
            }
            Input::Pipe => {
                fifo(&in_path, self.identity)?;
                // Read-write, so it opens before the command's end does and the command's
                // open does not wait; the command sees end of file when this is dropped.
                Some(
                    pipe::OpenOptions::new()
                        .read_write(true)
                        .open_sender(&in_path)
                        .map_err(unavailable)?,
                )
            }
        };
        let stdin_path = match launch.input {
            Input::Null => "/dev/null".to_owned(),
            _ => in_path.to_string_lossy().into_owned(),
        };
        let script = command_script(
            id,
            &stdin_path,
            &out_path,
            launch.stderr.then(|| path("err")).as_deref(),
            &launch,
            &self.start_dir,
        );
        std::fs::write(path("sh"), script)?;
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
        let mut exited = None;
        tokio::select! {
            event = events.recv() => match event {
                Some(Event::Started(pgid)) => guard.started(pgid),
                Some(Event::Exited(status)) => exited = Some(status),
                Some(Event::Gone) | None => return Err(gone()),
            },
            // Not started yet: the guard cancels it.
            () = sleep_until(deadline) => return Collected::TimedOut {
                stdout: Vec::new(),
                stderr: Vec::new(),
            }.into_result(limit),
        }
        let exit = async move {
            if let Some(status) = exited {
                return Ok(Some(status));
            }
            loop {
                match events.recv().await {
                    Some(Event::Exited(status)) => return Ok(Some(status)),
                    Some(Event::Started(_)) => {}
                    Some(Event::Gone) | None => return Err(gone()),
                }
            }
        };
        let collected = collect_streams(Some(stdout), stderr, exit, deadline, limit).await;
        if matches!(collected, Collected::Exited(_)) {
            guard.finish();
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
            // It already ended: its output is at end of file, which the caller sees.
            Some(Event::Exited(_)) => {}
            Some(Event::Gone) | None => return Err(gone()),
        }
        let Some(stdin) = stdin else {
            return Err(SandboxError::Unavailable(
                "The sandbox could not open the session's pipes.".to_owned(),
            ));
        };
        Ok(InteractiveProcess {
            input: Box::pin(stdin),
            output: Box::pin(stdout),
            guard: Box::new(guard),
        })
    }

    fn send(&self, id: u64) -> Result<(), SandboxError> {
        let mut requests = lock(&self.requests);
        let written = match requests.as_mut() {
            Some(pipe) => pipe.write_all(format!("{id}\n").as_bytes()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        written.map_err(|e| {
            SandboxError::Unavailable(format!(
                "The sandbox is no longer running and could not start a process: {e}"
            ))
        })
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        // Killing bwrap ends the sandbox's PID namespace, with everything left in it
        // (`--die-with-parent` takes its init down with it).
        self.shared.alive.store(false, Ordering::SeqCst);
        lock(&self.requests).take();
        let mut child = lock(&self.child);
        let _ = child.kill();
        let _ = child.wait();
    }
}
