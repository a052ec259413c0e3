//! The walk that saves a directory: every entry opened relative to its parent, nothing
//! followed, unchanged files not read again.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::entry::{Entry, Owner, escape_name, hex, io};

/// Directories deeper than this are not walked (the checkpoint fails, saying so).
pub(super) const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StatKey {
    pub(super) len: u64,
    pub(super) ino: u64,
    pub(super) mtime: (i128, i128),
    pub(super) ctime: (i128, i128),
}

/// A walk's result: the entries, and the content of files not yet in the store.
pub(super) struct Walked {
    pub(super) entries: Vec<Entry>,
    pub(super) new_blobs: Vec<(String, Vec<u8>)>,
    pub(super) hashed: HashMap<String, (StatKey, String)>,
}

pub(super) struct Walk<'a> {
    pub(super) known: &'a HashMap<String, (StatKey, String)>,
    pub(super) live: &'a BTreeSet<String>,
    pub(super) max_bytes: u64,
    pub(super) max_entries: usize,
    pub(super) bytes: u64,
    pub(super) out: Walked,
    pub(super) new: BTreeSet<String>,
}

impl Walk<'_> {
    pub(super) fn dir(&mut self, fd: &OwnedFd, prefix: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "'{prefix}' is more than {MAX_DEPTH} directories deep"
            ));
        }
        let mut names: Vec<Vec<u8>> = Vec::new();
        for entry in Dir::read_from(fd).map_err(|e| io(e, "cannot list a directory"))? {
            let entry = entry.map_err(|e| io(e, "cannot list a directory"))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        names.sort();
        for name in names {
            if self.out.entries.len() >= self.max_entries {
                return Err(format!(
                    "more than {} entries: raise max_entries, or keep fewer files",
                    self.max_entries
                ));
            }
            let os = OsStr::from_bytes(&name);
            let path = if prefix.is_empty() {
                escape_name(&name)
            } else {
                format!("{prefix}/{}", escape_name(&name))
            };
            let stat = match rustix::fs::statat(fd, os, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(s) => s,
                // Gone since it was listed (the sandbox is not stopped while we walk).
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => return Err(io(e, &format!("cannot stat '{path}'"))),
            };
            let mode = stat.st_mode & 0o7777;
            let owner = Owner::of(&stat);
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    let sub = match rustix::fs::openat(
                        fd,
                        os,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    ) {
                        Ok(sub) => sub,
                        Err(rustix::io::Errno::NOENT) => continue,
                        Err(e) => return Err(io(e, &format!("cannot open '{path}'"))),
                    };
                    self.out.entries.push(Entry::Dir {
                        path: path.clone(),
                        mode,
                        owner,
                    });
                    self.dir(&sub, &path, depth + 1)?;
                }
                FileType::RegularFile => self.file(fd, os, path, mode)?,
                FileType::Symlink => {
                    let target = match rustix::fs::readlinkat(fd, os, Vec::new()) {
                        Ok(t) => t,
                        Err(rustix::io::Errno::NOENT) => continue,
                        Err(e) => return Err(io(e, &format!("cannot read the link '{path}'"))),
                    };
                    self.out.entries.push(Entry::Link {
                        path,
                        target: escape_name(target.as_bytes()),
                        owner,
                    });
                }
                // Sockets, pipes, devices: nothing a checkpoint can hold.
                _ => {}
            }
        }
        Ok(())
    }

    fn file(&mut self, dir: &OwnedFd, os: &OsStr, path: String, mode: u32) -> Result<(), String> {
        // NONBLOCK: a file swapped for a pipe since its stat does not hang the open.
        let fd = match rustix::fs::openat(
            dir,
            os,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(()),
            Err(e) => return Err(io(e, &format!("cannot open '{path}'"))),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(e, &format!("cannot stat '{path}'")))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Ok(());
        }
        let key = StatKey {
            len: u64::try_from(stat.st_size).unwrap_or(0),
            ino: stat.st_ino,
            mtime: (i128::from(stat.st_mtime), i128::from(stat.st_mtime_nsec)),
            ctime: (i128::from(stat.st_ctime), i128::from(stat.st_ctime_nsec)),
        };
        self.bytes = self.bytes.saturating_add(key.len);
        if self.bytes > self.max_bytes {
            return Err(format!(
                "more than {} bytes of files: raise max_bytes, or keep less",
                self.max_bytes
            ));
        }
        let hash = match self.known.get(&path) {
            Some((k, hash)) if *k == key && self.live.contains(hash) => hash.clone(),
            _ => {
                let mut bytes = Vec::new();
                std::fs::File::from(fd)
                    .take(key.len.saturating_add(1))
                    .read_to_end(&mut bytes)
                    .map_err(|e| io(e, &format!("cannot read '{path}'")))?;
                if bytes.len() as u64 != key.len {
                    return Err(format!("'{path}' changed while it was read"));
                }
                let hash = hex(&Sha256::digest(&bytes));
                if !self.live.contains(&hash) && self.new.insert(hash.clone()) {
                    self.out.new_blobs.push((hash.clone(), bytes));
                }
                hash
            }
        };
        self.out.hashed.insert(path.clone(), (key, hash.clone()));
        self.out.entries.push(Entry::File {
            path,
            mode,
            sha256: hash,
            owner: Owner::of(&stat),
        });
        Ok(())
    }
}
