//! A host directory's files as a checkpoint part (a local sandbox's working directory).
//!
//! The directory is written by the sandbox, that is, by the model: nothing in it is followed.
//! The walk opens every directory and file relative to its parent's descriptor with
//! `O_NOFOLLOW` (a symbolic link is saved as a link, its target as text, never read through),
//! skips what is neither file, directory nor link, and stops at a bound on bytes and entries.
//! Files are kept as content-addressed blobs: a checkpoint writes only the files that changed
//! since the last (a file whose size, times and inode are unchanged is not read again).

mod entry;
mod restore;
mod walk;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use actuator_model::BoxFuture;
use rustix::fs::{Mode, OFlags};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::part::{CheckpointPart, PartBlobs};
use super::store::CheckpointError;
use entry::{Entry, Saved, hex, io};
use restore::put_back;
use walk::{StatKey, Walk, Walked};

/// The default bound of a directory part: 256 MiB of file content.
pub const DEFAULT_MAX_DIRECTORY_BYTES: u64 = 256 << 20;

/// The default bound on its entries (files, directories and links).
pub const DEFAULT_MAX_DIRECTORY_ENTRIES: usize = 100_000;

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
