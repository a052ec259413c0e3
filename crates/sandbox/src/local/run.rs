//! Collecting a command's output under a timeout and an output limit (both modes), and, for
//! the unconfined mode, spawning a command as its own process group and killing the whole
//! group when it is done, timed out or dropped.

use std::collections::HashSet;
use std::future::Future;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::time::Instant;

use crate::SandboxError;

/// The process groups a sandbox has started and not yet reaped: killed when it is dropped.
#[derive(Debug, Default, Clone)]
pub(crate) struct LiveGroups(Arc<Mutex<HashSet<i32>>>);

impl LiveGroups {
    fn add(&self, pgid: i32) {
        if let Ok(mut set) = self.0.lock() {
            set.insert(pgid);
        }
    }

    fn remove(&self, pgid: i32) {
        if let Ok(mut set) = self.0.lock() {
            set.remove(&pgid);
        }
    }

    /// Kills every live group (the sandbox is going away).
    pub(crate) fn kill_all(&self) {
        let groups: Vec<i32> = match self.0.lock() {
            Ok(mut set) => set.drain().collect(),
            Err(_) => return,
        };
        for pgid in groups {
            kill_group(pgid);
        }
    }
}

/// Sends SIGKILL to a process group; a group that is already gone is not an error.
pub(crate) fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Kills a process group when dropped (a finished, timed-out, over-limit or dropped call).
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<i32>,
    live: LiveGroups,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
            self.live.remove(pgid);
        }
    }
}

/// Spawns `command` as the leader of a new process group, registered in `live`.
pub(crate) fn spawn(
    mut command: Command,
    stdin: bool,
    live: &LiveGroups,
) -> Result<(Child, GroupGuard), SandboxError> {
    command
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| SandboxError::unavailable_from("The sandbox could not start a process", e))?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pgid {
        live.add(pgid);
    }
    Ok((
        child,
        GroupGuard {
            pgid,
            live: live.clone(),
        },
    ))
}

/// What a command produced, undecoded.
#[derive(Debug)]
pub(crate) struct RawOutput {
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// How collecting a command's output ended.
#[derive(Debug)]
pub(crate) enum Collected {
    /// Both streams closed and the command exited.
    Exited(RawOutput),
    /// The command exited, and [`EXIT_DRAIN`] later something it left behind still held its
    /// output open (the output until then). The caller kills the command's group, as for a
    /// timeout, but the call succeeds: the command itself finished.
    Lingering(RawOutput),
    /// Both streams closed but the exit was not reported within the grace the caller gave.
    Unreported,
    /// The deadline passed first (the output until then).
    TimedOut { stdout: Vec<u8>, stderr: Vec<u8> },
    /// More than the limit arrived (the output until then, not yet cut).
    OverLimit { stdout: Vec<u8>, stderr: Vec<u8> },
    /// The exit status could not be learnt.
    Failed(SandboxError),
}

impl Collected {
    /// The call's result; the caller has already killed what a timeout or the output limit
    /// left running.
    pub(crate) fn into_result(self, limit: usize) -> Result<RawOutput, SandboxError> {
        match self {
            Collected::Exited(raw) | Collected::Lingering(raw) => Ok(raw),
            Collected::TimedOut { stdout, stderr } => Err(SandboxError::Timeout {
                stdout: lossy(&stdout),
                stderr: lossy(&stderr),
            }),
            Collected::OverLimit {
                mut stdout,
                mut stderr,
            } => {
                // Cut standard output first: standard error is usually the shorter and says why.
                stderr.truncate(limit);
                stdout.truncate(limit - stderr.len());
                Err(SandboxError::OutputLimit {
                    limit,
                    stdout: lossy(&stdout),
                    stderr: lossy(&stderr),
                })
            }
            Collected::Failed(err) => Err(err),
            // Callers that give a grace handle this themselves (it says the host lost track
            // of the command); as a result alone, the command's end is unknown.
            Collected::Unreported => Err(SandboxError::unavailable(
                "The command's streams closed but how it ended was never reported",
            )),
        }
    }
}

/// How long a command's output is still read once the command has exited. What it wrote
/// before exiting is already in the pipes and is read in microseconds; only a process it
/// left running (`server &`, or a `sleep` that missed the group's SIGTERM) can hold the
/// streams open longer, and without this bound the call would wait for that process, or
/// until its timeout, for output nobody waits for. The command's group is killed after.
pub(crate) const EXIT_DRAIN: Duration = Duration::from_secs(1);

/// Reads both streams until they close, watching `exit` at the same time, stopping at
/// `deadline`, when more than `limit` bytes arrived, or [`EXIT_DRAIN`] after the exit.
/// When the streams close before the exit is known, waits for it (for at most
/// `report_grace`, when given). Kills nothing: the caller does, on anything but
/// [`Collected::Exited`].
pub(crate) async fn collect_streams<O, E, W>(
    mut stdout: Option<O>,
    mut stderr: Option<E>,
    exit: W,
    deadline: Option<Instant>,
    limit: usize,
    report_grace: Option<Duration>,
) -> Collected
where
    O: AsyncRead + Unpin,
    E: AsyncRead + Unpin,
    W: Future<Output = Result<Option<i32>, SandboxError>>,
{
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut buf_out = vec![0u8; 16 * 1024];
    let mut buf_err = vec![0u8; 16 * 1024];
    let sleep = sleep_until(deadline);
    tokio::pin!(sleep, exit);
    // Armed when the exit is known.
    let drain = tokio::time::sleep(EXIT_DRAIN);
    tokio::pin!(drain);
    let mut exited: Option<Option<i32>> = None;
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            n = read_some(&mut stdout, &mut buf_out) => {
                if let Some(n) = n { out.extend_from_slice(&buf_out[..n]) } else { stdout = None }
            }
            n = read_some(&mut stderr, &mut buf_err) => {
                if let Some(n) = n { err.extend_from_slice(&buf_err[..n]) } else { stderr = None }
            }
            status = &mut exit, if exited.is_none() => match status {
                Ok(status) => {
                    exited = Some(status);
                    drain.as_mut().reset(Instant::now() + EXIT_DRAIN);
                }
                Err(e) => return Collected::Failed(e),
            },
            () = &mut drain, if exited.is_some() => {
                let status = exited.flatten();
                return Collected::Lingering(RawOutput { status, stdout: out, stderr: err });
            }
            () = &mut sleep => return Collected::TimedOut { stdout: out, stderr: err },
        }
        if out.len() + err.len() > limit {
            return Collected::OverLimit {
                stdout: out,
                stderr: err,
            };
        }
    }
    if let Some(status) = exited {
        return Collected::Exited(RawOutput {
            status,
            stdout: out,
            stderr: err,
        });
    }
    let report = async {
        match report_grace {
            Some(grace) => tokio::time::timeout(grace, &mut exit).await.ok(),
            None => Some((&mut exit).await),
        }
    };
    tokio::select! {
        status = report => match status {
            Some(Ok(status)) => Collected::Exited(RawOutput { status, stdout: out, stderr: err }),
            Some(Err(e)) => Collected::Failed(e),
            None => Collected::Unreported,
        },
        () = &mut sleep => Collected::TimedOut { stdout: out, stderr: err },
    }
}

/// Feeds `input` to an unconfined child, collects its output, and kills its whole group
/// when it is done (so nothing it started outlives it), timed out or over the limit.
pub(crate) async fn collect(
    mut child: Child,
    guard: GroupGuard,
    input: Option<Vec<u8>>,
    timeout: Option<Duration>,
    limit: usize,
) -> Result<RawOutput, SandboxError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    if let (Some(mut stdin), Some(data)) = (child.stdin.take(), input) {
        // A separate task, so a command that does not read its input cannot block ours.
        tokio::spawn(async move {
            let _ = stdin.write_all(&data).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let exit = async {
        let status = child.wait().await?;
        Ok(status.code())
    };
    let collected = collect_streams(stdout, stderr, exit, deadline, limit, None).await;
    // Anything the command left behind in its group goes now (and on a timeout or over the
    // limit, the command itself; `kill_on_drop` reaps the child).
    drop(guard);
    collected.into_result(limit)
}

/// Reads once; `None` at end of stream, on error, or when the stream is already closed
/// (then it never resolves, so `select!` waits on the other branches).
async fn read_some<R: AsyncRead + Unpin>(stream: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match stream {
        Some(s) => match s.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

pub(crate) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
