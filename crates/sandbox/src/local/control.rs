//! The supervisor's control directory, seen from the host: where a call's script, input and
//! stream FIFOs live.
//!
//! Everything in a sandbox is an attacker (the model writes its commands), and the host is
//! often root. So the directory is the host's own (never chowned to the sandbox's user), bound
//! **read-only** inside the sandbox, and held open here as a descriptor: every file the host
//! makes or opens in it is named relative to that descriptor, with `O_NOFOLLOW` and, for
//! regular files, `O_EXCL`, and handed to the sandbox's user with `fchown` on the open file,
//! never by path. A link the sandbox could plant (it cannot, the mount is read-only) would
//! make the open fail instead of reaching a host file.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::command::Identity;
use crate::SandboxError;

/// The host's open control directory.
#[derive(Debug)]
pub(crate) struct ControlDir {
    dir: OwnedFd,
    path: PathBuf,
    identity: Identity,
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

impl ControlDir {
    /// Creates (or reopens, for a restarted sandbox) the directory at `path`, owned by the
    /// host and searchable but not writable by anyone else (`0711`).
    ///
    /// Refuses a directory that is not the caller's own or that others can write: only then
    /// does a name in it mean what the host made.
    pub fn create(path: &Path, identity: Identity) -> Result<ControlDir, SandboxError> {
        match rustix::fs::mkdir(path, Mode::from_raw_mode(0o711)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(io(e).into()),
        }
        let dir = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        let stat = rustix::fs::fstat(&dir).map_err(io)?;
        let others_write = stat.st_mode & 0o022 != 0;
        if stat.st_uid != rustix::process::geteuid().as_raw() || others_write {
            return Err(SandboxError::unavailable(format!(
                "The sandbox's control directory {} is not the host's own (owner {}, mode {:o}); \
                 refusing to use it.",
                path.display(),
                stat.st_uid,
                stat.st_mode & 0o7777
            )));
        }
        // mkdir's mode went through the umask; make it exactly 0711.
        rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o711)).map_err(io)?;
        Ok(ControlDir {
            dir,
            path: path.to_owned(),
            identity,
        })
    }

    /// The path of `name` as the sandbox sees it (bound at the same place inside).
    pub fn path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Hands an open file to the sandbox's user (when the host is root).
    fn give(&self, fd: impl AsFd) -> Result<(), SandboxError> {
        if let Identity::Drop { uid, gid } = self.identity {
            std::os::unix::fs::fchown(fd, Some(uid), Some(gid))?;
        }
        Ok(())
    }

    /// Makes the FIFO `name` and opens it (`read`: for reading only, else read-write so the
    /// open never waits for the other end), non-blocking, owned by the sandbox's user.
    pub fn fifo(&self, name: &str, read: bool) -> Result<OwnedFd, SandboxError> {
        rustix::fs::mkfifoat(&self.dir, name, Mode::from_raw_mode(0o600)).map_err(io)?;
        let access = if read { OFlags::RDONLY } else { OFlags::RDWR };
        let fd = rustix::fs::openat(
            &self.dir,
            name,
            access | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io)?;
        // Only a FIFO the host just made: anything else under this name is refused.
        let stat = rustix::fs::fstat(&fd).map_err(io)?;
        if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Fifo {
            return Err(SandboxError::unavailable(format!(
                "The sandbox's control file {name} is not the FIFO the host made."
            )));
        }
        self.give(&fd)?;
        Ok(fd)
    }

    /// Writes a new regular file `name` (it must not exist), readable by the sandbox's user.
    pub fn write_new(&self, name: &str, contents: &[u8]) -> Result<(), SandboxError> {
        let fd = rustix::fs::openat(
            &self.dir,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(io)?;
        self.give(&fd)?;
        let mut file = std::fs::File::from(fd);
        file.write_all(contents)?;
        Ok(())
    }

    /// Removes `name` (a link is removed, never followed); a missing file is not an error.
    pub fn remove(&self, name: &str) {
        let _ = rustix::fs::unlinkat(&self.dir, name, AtFlags::empty());
    }
}
