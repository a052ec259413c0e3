//! The host's side of the supervisor's event channel: reading event lines (bounded), routing
//! them to waiting calls, and stopping the sandbox when the supervisor breaks the protocol.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::mpsc::UnboundedSender;

use super::control::ControlDir;
use crate::SandboxError;

/// The longest event line the host reads (`ID s PGID` is under 40 bytes): past it, the
/// supervisor is misbehaving.
pub(crate) const MAX_EVENT_LINE: usize = 256;

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
pub(super) enum Pending {
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
pub(super) struct Shared {
    pub(super) ctl: ControlDir,
    pub(super) pending: Mutex<HashMap<u64, Pending>>,
    pub(super) alive: AtomicBool,
    pub(super) kills: Mutex<Option<File>>,
    /// bwrap's process while it is unreaped (so its id cannot be reused): taken by
    /// [`Supervisor`](super::supervisor::Supervisor)'s drop before it reaps bwrap.
    pub(super) bwrap: Mutex<Option<rustix::process::Pid>>,
    /// Why the sandbox was stopped, when the supervisor misbehaved.
    pub(super) misbehaved: Mutex<Option<String>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl Shared {
    /// Asks the killer to `SIGKILL` a process group of the sandbox.
    pub(super) fn kill(&self, pgid: i32) {
        if pgid <= 1 {
            return;
        }
        if let Some(file) = lock(&self.kills).as_mut() {
            // Non-blocking and shorter than PIPE_BUF: written whole, or not at all when the
            // killer is gone (then so is the sandbox, soon).
            let _ = file.write_all(format!("{pgid}\n").as_bytes());
        }
    }

    pub(super) fn remove_files(&self, id: u64) {
        for ext in ["sh", "in", "out", "err"] {
            self.ctl.remove(&format!("{id}.{ext}"));
        }
    }

    /// The error a call gets when the sandbox went away under it.
    pub(super) fn lost(&self) -> SandboxError {
        match lock(&self.misbehaved).clone() {
            Some(detail) => SandboxError::SupervisorMisbehaved { detail },
            None => SandboxError::unavailable(
                "The sandbox stopped running (its supervisor was killed); the next command \
                 starts a new one."
                    .to_owned(),
            ),
        }
    }

    /// The supervisor broke the protocol: stop the whole sandbox (bwrap, and with it the PID
    /// namespace), so no call waits on it and the next command starts a fresh one.
    pub(super) fn misbehaved(&self, detail: String) {
        tracing::warn!("stopping the sandbox: its supervisor {detail}");
        lock(&self.misbehaved).get_or_insert(detail);
        // Under the lock, so the drop cannot reap bwrap between the look and the kill.
        let bwrap = lock(&self.bwrap);
        if let Some(pid) = *bwrap {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        drop(bwrap);
        self.gone();
    }

    /// Routes one event line (`ID s PGID`, `ID x STATUS`). Anything else is a protocol
    /// violation (`false`): only the host's script writes here.
    fn dispatch(&self, line: &[u8]) -> bool {
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        let mut parts = line.split_ascii_whitespace();
        let (Some(id), Some(kind), Some(value), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let (Ok(id), Ok(value)) = (id.parse::<u64>(), value.parse::<i32>()) else {
            return false;
        };
        let event = match kind {
            "s" => Event::Started(value),
            "x" => Event::Exited(value),
            _ => return false,
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
            // A call that was dropped and forgotten.
            (None, _) => {}
        }
        true
    }

    /// The sandbox is gone: every waiting call learns it.
    pub(super) fn gone(&self) {
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

/// Why reading an event line failed.
#[derive(Debug)]
pub(super) enum EventError {
    /// Longer than [`MAX_EVENT_LINE`].
    TooLong,
    /// The pipe failed.
    Io,
}

/// Reads one event line into `line` (cleared first), reading at most [`MAX_EVENT_LINE`]
/// bytes, so a supervisor that never ends its line costs the host nothing. `Ok(false)` at
/// end of file.
pub(super) fn read_event(
    events: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> Result<bool, EventError> {
    line.clear();
    let limit = u64::try_from(MAX_EVENT_LINE).unwrap_or(u64::MAX);
    let read = std::io::Read::take(&mut *events, limit)
        .read_until(b'\n', line)
        .map_err(|_| EventError::Io)?;
    if read == 0 {
        return Ok(false);
    }
    if line.last() != Some(&b'\n') {
        // Cut at the limit, or end of file mid-line (the supervisor died writing it).
        return if line.len() >= MAX_EVENT_LINE {
            Err(EventError::TooLong)
        } else {
            Ok(false)
        };
    }
    Ok(true)
}

impl Shared {
    /// The dispatcher thread's loop: routes events until the sandbox ends or misbehaves.
    pub(super) fn dispatch_all(&self, mut events: impl BufRead) {
        let mut line = Vec::with_capacity(64);
        loop {
            match read_event(&mut events, &mut line) {
                Ok(true) if self.dispatch(&line) => {}
                Ok(true) => {
                    let shown = String::from_utf8_lossy(&line);
                    self.misbehaved(format!("sent a malformed event {:?}", shown.trim_end()));
                    return;
                }
                Err(EventError::TooLong) => {
                    self.misbehaved(format!(
                        "sent an event line longer than {MAX_EVENT_LINE} bytes"
                    ));
                    return;
                }
                Ok(false) | Err(EventError::Io) => break,
            }
        }
        self.gone();
    }
}
