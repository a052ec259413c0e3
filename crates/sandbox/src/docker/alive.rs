//! Which compose projects still have their owner: each project's process holds an exclusive
//! `flock` on a file named after it, in a directory of this user's own. The kernel releases
//! the lock when that process ends however it ends (SIGKILL and the OOM killer too), so
//! [`cleanup_orphans`](super::cleanup_orphans) takes down the projects of processes that are
//! gone and leaves those of evaluations still running (two shards on one node, say) alone.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags, flock};

/// The directory of the lock files: `$TMPDIR/actuator-compose-<uid>`, `0700`, this user's.
fn lock_dir() -> std::io::Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let dir = std::env::temp_dir().join(format!("actuator-compose-{uid}"));
    match rustix::fs::mkdir(&dir, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = rustix::fs::open(
        &dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    // A directory someone else made (or can write) could hold their files under our names.
    if stat.st_uid != uid || stat.st_mode & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not this user's own (owner {}, mode {:o})",
            dir.display(),
            stat.st_uid,
            stat.st_mode & 0o7777
        )));
    }
    Ok(dir)
}

fn lock_path(dir: &Path, project: &str) -> PathBuf {
    // Project names are `actuator-[a-z0-9-_]*-i[a-z0-9]+`: no separator, no dot.
    dir.join(format!("{project}.lock"))
}

fn open_lock(path: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
}

/// The lock a live project holds; dropping it (the project down) removes the file.
#[derive(Debug)]
pub(crate) struct Alive {
    path: PathBuf,
    _fd: OwnedFd,
}

impl Alive {
    /// Takes `project`'s lock. An error (no temporary directory, one that is not ours) leaves
    /// the project unmarked, as projects were before: `cleanup_orphans` would take it down.
    pub(crate) fn mark(project: &str) -> std::io::Result<Alive> {
        let path = lock_path(&lock_dir()?, project);
        let fd = open_lock(&path)?;
        flock(&fd, FlockOperation::NonBlockingLockExclusive)?;
        Ok(Alive { path, _fd: fd })
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        // Removed while still locked: a cleanup that opens it now finds no file, or a file no
        // one will lock again.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether `project`'s owner is alive: its lock file exists and is locked. A stale file (its
/// owner gone) is removed.
pub(crate) fn is_alive(project: &str) -> bool {
    let Ok(dir) = lock_dir() else {
        return false;
    };
    let path = lock_path(&dir, project);
    if !path.exists() {
        return false;
    }
    let Ok(fd) = open_lock(&path) else {
        return false;
    };
    match flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Err(rustix::io::Errno::WOULDBLOCK) => true,
        _ => {
            let _ = std::fs::remove_file(&path);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_alive_and_a_released_one_is_not() {
        let name = format!("actuator-alive-test-i{}", std::process::id());
        assert!(!is_alive(&name), "no lock file yet");
        let alive = Alive::mark(&name).unwrap();
        // Another open file description of the same file conflicts, as another process's.
        assert!(is_alive(&name));
        drop(alive);
        assert!(!is_alive(&name));
        // A stale file (its owner killed before it could remove it) is not alive, and goes.
        let stale = lock_path(&lock_dir().unwrap(), &name);
        std::fs::write(&stale, b"").unwrap();
        assert!(!is_alive(&name));
        assert!(!stale.exists());
    }
}
