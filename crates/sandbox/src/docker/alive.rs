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
    lock_dir_in(&std::env::temp_dir())
}

/// `base/actuator-compose-<uid>`, made if missing; refused unless it is a directory (not a
/// link to one) of this user's that no one else can enter.
fn lock_dir_in(base: &Path) -> std::io::Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let dir = base.join(format!("actuator-compose-{uid}"));
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

/// Opens (or makes) a lock file: never through a link, never blocking on a FIFO, and only a
/// regular file counts.
fn open_lock(path: &Path) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(fd)
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
        Self::mark_in(&lock_dir()?, project)
    }

    fn mark_in(dir: &Path, project: &str) -> std::io::Result<Alive> {
        let path = lock_path(dir, project);
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
    lock_dir().is_ok_and(|dir| is_alive_in(&dir, project))
}

fn is_alive_in(dir: &Path, project: &str) -> bool {
    let path = lock_path(dir, project);
    // `symlink_metadata`: a link planted there is not followed, and is no owner.
    if path.symlink_metadata().is_err() {
        return false;
    }
    let Ok(fd) = open_lock(&path) else {
        // Not a file we made (a link, a FIFO): no owner; the name goes.
        let _ = std::fs::remove_file(&path);
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

    /// What another user of the machine could plant where the locks go, or in their place.
    #[test]
    fn a_planted_link_fifo_or_open_directory_is_never_followed_or_used() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let uid = rustix::process::geteuid().as_raw();
        let dir_name = format!("actuator-compose-{uid}");

        // The directory as a link to one of the attacker's: refused.
        let theirs = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(theirs.path(), base.path().join(&dir_name)).unwrap();
        assert!(lock_dir_in(base.path()).is_err());
        std::fs::remove_file(base.path().join(&dir_name)).unwrap();

        // A directory others can write: refused.
        std::fs::create_dir(base.path().join(&dir_name)).unwrap();
        let open = std::fs::Permissions::from_mode(0o777);
        std::fs::set_permissions(base.path().join(&dir_name), open).unwrap();
        assert!(lock_dir_in(base.path()).is_err());
        let own = std::fs::Permissions::from_mode(0o700);
        std::fs::set_permissions(base.path().join(&dir_name), own).unwrap();
        let dir = lock_dir_in(base.path()).unwrap();

        // A link where a project's lock goes: not followed, the file it names untouched.
        let victim = theirs.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let project = "actuator-planted-iabcdef";
        std::os::unix::fs::symlink(&victim, lock_path(&dir, project)).unwrap();
        assert!(Alive::mark_in(&dir, project).is_err());
        assert!(!is_alive_in(&dir, project));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        assert!(
            lock_path(&dir, project).symlink_metadata().is_err(),
            "the link is gone"
        );

        // A FIFO there: neither marking nor checking blocks on it, and it is no owner.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            lock_path(&dir, project),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(Alive::mark_in(&dir, project).is_err());
        assert!(!is_alive_in(&dir, project));
    }
}
