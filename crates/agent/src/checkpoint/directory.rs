//! A host directory's files as a checkpoint part (a local sandbox's working directory).
//!
//! The directory is written by the sandbox, that is, by the model: nothing in it is followed.
//! The walk opens every directory and file relative to its parent's descriptor with
//! `O_NOFOLLOW` (a symbolic link is saved as a link, its target as text, never read through),
//! skips what is neither file, directory nor link, and stops at a bound on bytes and entries.
//! Files are kept as content-addressed blobs: a checkpoint writes only the files that changed
//! since the last (a file whose size, times and inode are unchanged is not read again).

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use actuator_model::BoxFuture;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::part::{CheckpointPart, PartBlobs};
use super::store::CheckpointError;

/// The default bound of a directory part: 256 MiB of file content.
pub const DEFAULT_MAX_DIRECTORY_BYTES: u64 = 256 << 20;

/// The default bound on its entries (files, directories and links).
pub const DEFAULT_MAX_DIRECTORY_ENTRIES: usize = 100_000;

/// Directories deeper than this are not walked (the checkpoint fails, saying so).
const MAX_DEPTH: usize = 128;

/// The blob naming the blobs the latest save wrote (not a hash: no content is named so).
const UNCOMMITTED: &str = "uncommitted";

/// The blobs the latest save wrote, which its record may not use (the process died first).
async fn uncommitted(blobs: PartBlobs<'_>) -> Vec<String> {
    match blobs.load(UNCOMMITTED).await {
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The files of a host directory, saved with each checkpoint and put back on resume (the
/// directory emptied first), so that a resumed run's files are as they were at its
/// checkpoint. An evaluation adds one for each sample's local sandbox.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::checkpoint::{Checkpoints, DirectoryPart, FileCheckpoints};
/// let workdir = std::env::temp_dir();
/// let checkpoints = Checkpoints::new(Arc::new(FileCheckpoints::new("ckpt")), "run-1")
///     .part(Arc::new(DirectoryPart::new("workdir", workdir).max_bytes(64 << 20)));
/// # drop(checkpoints);
/// ```
pub struct DirectoryPart {
    name: String,
    root: PathBuf,
    max_bytes: u64,
    max_entries: usize,
    state: Arc<Mutex<Known>>,
}

impl std::fmt::Debug for DirectoryPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectoryPart")
            .field("name", &self.name)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// What the part knows between checkpoints.
#[derive(Default)]
struct Known {
    /// Each file's stat when last hashed, and its hash (so an unchanged file is not read).
    hashed: HashMap<String, (StatKey, String)>,
    /// The blobs the last written record uses.
    live: BTreeSet<String>,
    /// The blobs the description being written uses (live once it is committed).
    pending: BTreeSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatKey {
    len: u64,
    ino: u64,
    mtime: (i128, i128),
    ctime: (i128, i128),
}

/// An entry as saved: its path relative to the root, `/`-separated, each name escaped
/// losslessly (see [`escape_name`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entry {
    Dir {
        path: String,
        mode: u32,
        #[serde(flatten)]
        owner: Owner,
    },
    File {
        path: String,
        mode: u32,
        sha256: String,
        #[serde(flatten)]
        owner: Owner,
    },
    Link {
        path: String,
        target: String,
        #[serde(flatten)]
        owner: Owner,
    },
}

/// Who owned an entry: a sandbox run as another user (a local sandbox started by root runs
/// as `nobody`) must own its files again once they are put back.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Owner {
    #[serde(default)]
    uid: u32,
    #[serde(default)]
    gid: u32,
}

impl Owner {
    fn of(stat: &rustix::fs::Stat) -> Self {
        Owner {
            uid: stat.st_uid,
            gid: stat.st_gid,
        }
    }
}

/// The description in the record.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    entries: Vec<Entry>,
    /// Blobs the record before used and this one does not: removed once this one is
    /// written (again on resume, if the process died first).
    #[serde(default)]
    obsolete: Vec<String>,
}

impl DirectoryPart {
    /// The files under `root` (the directory itself is kept; its contents are saved and
    /// restored), under the part name `name`.
    pub fn new(name: impl Into<String>, root: impl Into<PathBuf>) -> Self {
        DirectoryPart {
            name: name.into(),
            root: root.into(),
            max_bytes: DEFAULT_MAX_DIRECTORY_BYTES,
            max_entries: DEFAULT_MAX_DIRECTORY_ENTRIES,
            state: Arc::default(),
        }
    }

    /// The most file content it saves ([`DEFAULT_MAX_DIRECTORY_BYTES`]): over it, the
    /// checkpoint is not taken (the run goes on from the one before, and says so).
    #[must_use]
    pub fn max_bytes(mut self, max: u64) -> Self {
        self.max_bytes = max;
        self
    }

    /// The most entries it saves ([`DEFAULT_MAX_DIRECTORY_ENTRIES`]).
    #[must_use]
    pub fn max_entries(mut self, max: usize) -> Self {
        self.max_entries = max;
        self
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn error(&self, reason: impl std::fmt::Display) -> CheckpointError {
        CheckpointError::Format {
            key: format!("{} ({})", self.name, self.root.display()),
            reason: reason.to_string(),
        }
    }
}

/// A walk's result: the entries, and the content of files not yet in the store.
struct Walked {
    entries: Vec<Entry>,
    new_blobs: Vec<(String, Vec<u8>)>,
    hashed: HashMap<String, (StatKey, String)>,
}

struct Walk<'a> {
    known: &'a HashMap<String, (StatKey, String)>,
    live: &'a BTreeSet<String>,
    max_bytes: u64,
    max_entries: usize,
    bytes: u64,
    out: Walked,
    new: BTreeSet<String>,
}

fn io(e: impl std::fmt::Display, what: &str) -> String {
    format!("{what}: {e}")
}

impl Walk<'_> {
    fn dir(&mut self, fd: &OwnedFd, prefix: &str, depth: usize) -> Result<(), String> {
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

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A file name as text, losslessly: `%` and bytes that are not UTF-8 as `%XX`.
fn escape_name(name: &[u8]) -> String {
    let mut out = String::new();
    for chunk in name.utf8_chunks() {
        out.push_str(&chunk.valid().replace('%', "%25"));
        for b in chunk.invalid() {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unescape_name(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `path` (as saved) as a path under the root: plain names only, so that nothing in a
/// record can name a place outside it.
fn relative(path: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.split('/') {
        let name = unescape_name(part)?;
        if name.is_empty() || name.contains(&0) || name.contains(&b'/') {
            return None;
        }
        let os = OsStr::from_bytes(&name);
        if !matches!(
            Path::new(os).components().next(),
            Some(Component::Normal(_))
        ) {
            return None;
        }
        out.push(os);
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

impl CheckpointPart for DirectoryPart {
    fn name(&self) -> &str {
        &self.name
    }

    fn save<'a>(&'a self, blobs: PartBlobs<'a>) -> BoxFuture<'a, Result<Value, CheckpointError>> {
        Box::pin(async move {
            let (known, live) = {
                let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                (s.hashed.clone(), s.live.clone())
            };
            let root = self.root.clone();
            let (max_bytes, max_entries) = (self.max_bytes, self.max_entries);
            let walked = tokio::task::spawn_blocking(move || {
                let fd = rustix::fs::open(
                    &root,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| io(e, "cannot open the directory"))?;
                let mut walk = Walk {
                    known: &known,
                    live: &live,
                    max_bytes,
                    max_entries,
                    bytes: 0,
                    out: Walked {
                        entries: Vec::new(),
                        new_blobs: Vec::new(),
                        hashed: HashMap::new(),
                    },
                    new: BTreeSet::new(),
                };
                walk.dir(&fd, "", 0)?;
                Ok::<_, String>((walk.out, live))
            })
            .await
            .map_err(|e| self.error(format!("the walk did not finish: {e}")))?;
            let (walked, live) = walked.map_err(|e| self.error(e))?;
            // The new blobs are named before they are written: if the process dies before
            // the record that uses them, a restore or a clear finds and removes them.
            if !walked.new_blobs.is_empty() {
                let names: Vec<&String> = walked.new_blobs.iter().map(|(h, _)| h).collect();
                let names = serde_json::to_vec(&names).map_err(|e| self.error(e))?;
                blobs.save(UNCOMMITTED, names).await?;
            }
            for (hash, bytes) in walked.new_blobs {
                blobs.save(&hash, bytes).await?;
            }
            let used: BTreeSet<String> = walked
                .entries
                .iter()
                .filter_map(|e| match e {
                    Entry::File { sha256, .. } => Some(sha256.clone()),
                    _ => None,
                })
                .collect();
            let saved = Saved {
                obsolete: live.difference(&used).cloned().collect(),
                entries: walked.entries,
            };
            {
                let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                s.hashed = walked.hashed;
                s.pending = used;
            }
            serde_json::to_value(&saved).map_err(|e| self.error(e))
        })
    }

    fn committed<'a>(&'a self, blobs: PartBlobs<'a>, saved: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            {
                let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                s.live = std::mem::take(&mut s.pending);
            }
            if let Ok(saved) = Saved::deserialize(saved) {
                for hash in &saved.obsolete {
                    let _ = blobs.remove(hash).await;
                }
            }
        })
    }

    fn restore<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let saved: Saved = serde_json::from_value(saved).map_err(|e| self.error(e))?;
            // Everything is read and checked before the directory is touched.
            let mut contents: HashMap<String, Vec<u8>> = HashMap::new();
            for entry in &saved.entries {
                if let Entry::File { sha256, .. } = entry
                    && !contents.contains_key(sha256)
                {
                    let bytes = blobs.load(sha256).await?.ok_or_else(|| {
                        self.error(format!("the content {sha256} is not in the store"))
                    })?;
                    if hex(&Sha256::digest(&bytes)) != *sha256 {
                        return Err(self.error(format!("the content {sha256} is corrupted")));
                    }
                    contents.insert(sha256.clone(), bytes);
                }
            }
            let root = self.root.clone();
            let entries = saved.entries;
            let used: BTreeSet<String> = contents.keys().cloned().collect();
            tokio::task::spawn_blocking(move || put_back(&root, &entries, &contents))
                .await
                .map_err(|e| self.error(format!("the restore did not finish: {e}")))?
                .map_err(|e| self.error(e))?;
            let mut unused = saved.obsolete;
            unused.extend(uncommitted(blobs).await);
            for hash in unused.iter().filter(|h| !used.contains(*h)) {
                let _ = blobs.remove(hash).await;
            }
            let _ = blobs.remove(UNCOMMITTED).await;
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.hashed.clear();
            s.live = used;
            s.pending.clear();
            Ok(())
        })
    }

    fn clear<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let saved: Saved = serde_json::from_value(saved).map_err(|e| self.error(e))?;
            let mut hashes: BTreeSet<String> = saved.obsolete.into_iter().collect();
            for entry in saved.entries {
                if let Entry::File { sha256, .. } = entry {
                    hashes.insert(sha256);
                }
            }
            {
                let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                hashes.extend(s.live.iter().cloned());
                hashes.extend(s.pending.iter().cloned());
            }
            hashes.extend(uncommitted(blobs).await);
            for hash in &hashes {
                blobs.remove(hash).await?;
            }
            blobs.remove(UNCOMMITTED).await?;
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            *s = Known::default();
            Ok(())
        })
    }
}

/// Empties `root` and writes `entries` into it: directories and files first (each created
/// anew, never through a link), links last, so that no path is resolved through one.
fn put_back(
    root: &Path,
    entries: &[Entry],
    contents: &HashMap<String, Vec<u8>>,
) -> Result<(), String> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let listing = std::fs::read_dir(root).map_err(|e| io(e, "cannot list the directory"))?;
    for entry in listing {
        let entry = entry.map_err(|e| io(e, "cannot list the directory"))?;
        let path = entry.path();
        // symlink_metadata: a link is removed, never followed.
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) => Err(e),
        };
        removed.map_err(|e| io(e, &format!("cannot empty '{}'", path.display())))?;
    }
    let mut links = Vec::new();
    for entry in entries {
        match entry {
            Entry::Dir { path, mode, .. } => {
                let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
                let at = root.join(rel);
                std::fs::create_dir(&at).map_err(|e| io(e, &format!("cannot make '{path}'")))?;
                // Its mode once its contents are in (a read-only directory stays writable
                // until then).
                let _ = std::fs::set_permissions(
                    &at,
                    std::fs::Permissions::from_mode((mode & 0o777) | 0o700),
                );
            }
            Entry::File {
                path, mode, sha256, ..
            } => {
                let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
                let bytes = contents
                    .get(sha256)
                    .ok_or_else(|| format!("no content for '{path}'"))?;
                // create_new: O_EXCL, which never follows a link.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(mode & 0o777)
                    .custom_flags(OFlags::NOFOLLOW.bits() as i32)
                    .open(root.join(rel))
                    .map_err(|e| io(e, &format!("cannot write '{path}'")))?;
                std::io::Write::write_all(&mut f, bytes)
                    .map_err(|e| io(e, &format!("cannot write '{path}'")))?;
            }
            Entry::Link { path, target, .. } => links.push((path, target)),
        }
    }
    for (path, target) in links {
        let rel = relative(path).ok_or_else(|| format!("'{path}' is not a plain path"))?;
        let target =
            unescape_name(target).ok_or_else(|| format!("the link '{path}' is malformed"))?;
        std::os::unix::fs::symlink(OsStr::from_bytes(&target), root.join(rel))
            .map_err(|e| io(e, &format!("cannot make the link '{path}'")))?;
    }
    // Owners as they were (only root can give a file away; others own what they write).
    if rustix::process::geteuid().is_root() {
        for entry in entries {
            let (Entry::Dir { path, owner, .. }
            | Entry::File { path, owner, .. }
            | Entry::Link { path, owner, .. }) = entry;
            if let Some(rel) = relative(path) {
                std::os::unix::fs::lchown(root.join(rel), Some(owner.uid), Some(owner.gid))
                    .map_err(|e| io(e, &format!("cannot give '{path}' its owner")))?;
            }
        }
    }
    for entry in entries.iter().rev() {
        if let Entry::Dir { path, mode, .. } = entry
            && let Some(rel) = relative(path)
        {
            let _ = std::fs::set_permissions(
                root.join(rel),
                std::fs::Permissions::from_mode(mode & 0o777),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_losslessly_and_paths_stay_under_the_root() {
        for name in [&b"plain"[..], b"50%", b"\xff\xfe bad", b"%41"] {
            assert_eq!(unescape_name(&escape_name(name)).unwrap(), name);
        }
        assert_eq!(relative("a/b%25c"), Some(PathBuf::from("a/b%c")));
        for bad in [
            "", "..", "a/../b", "/etc", "a//b", ".", "a/%2F", "a/%00", "%2E%2E",
        ] {
            assert_eq!(relative(bad), None, "{bad}");
        }
    }
}
