//! Where checkpoints are kept: a trait, so that a cloud store can plug in, and files.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use actuator_model::BoxFuture;

/// Why a checkpoint could not be kept or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Reading or writing the store failed.
    #[error("cannot {action} the checkpoint {path}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The checkpoint is over the store's size bound.
    #[error(
        "the checkpoint is {len} bytes, over the {max} the store keeps: raise the bound, or checkpoint a smaller state"
    )]
    TooLarge {
        /// Its size.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// The record is not a checkpoint this version reads.
    #[error("the checkpoint {key} cannot be read: {reason}")]
    Format {
        /// Its key.
        key: String,
        /// Why.
        reason: String,
    },
}

/// Keeps each key's newest checkpoint, and its previous one: a write that does not finish
/// leaves the previous one readable.
pub trait CheckpointStore: Send + Sync {
    /// Saves `record` as `key`'s newest checkpoint, atomically: after a crash part way, `load`
    /// gives the checkpoint before.
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// `key`'s newest whole checkpoint (a torn or corrupted newest one is skipped for the
    /// previous), or `None`.
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointError>>;

    /// Forgets `key`'s checkpoints (a run that finished), its journal included.
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// Appends `entry` to `key`'s journal, read back by [`entries`](Self::entries): after a
    /// crash part way, the entries before it are whole. The default keeps the journal as one
    /// record, read, extended and saved again; a store that can append does better.
    fn append<'a>(
        &'a self,
        key: &'a str,
        entry: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let mut log = self.load(key).await?.unwrap_or_default();
            super::frames::frame(&mut log, &entry);
            self.save(key, log).await
        })
    }

    /// `key`'s journal: its whole entries, in order (none when there is none).
    fn entries<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<Vec<u8>>, CheckpointError>> {
        Box::pin(async move {
            let log = self.load(key).await?.unwrap_or_default();
            Ok(super::frames::unframe(&log).0)
        })
    }
}

/// The default bound of one checkpoint: 256 MiB.
pub const DEFAULT_MAX_CHECKPOINT_BYTES: usize = 256 << 20;

const MAGIC: &[u8] = b"actuator-checkpoint 1\n";

/// Checkpoints as files in a directory: `<key>.ckpt` and `<key>.ckpt.prev`, each a header
/// with the body's CRC-32 and length, then the body. Written to a temporary file, synced, and
/// renamed into place (the older one kept as `.prev`). Unsynced ([`sync(false)`](Self::sync))
/// they survive the process dying but not the machine, for a fraction of the cost.
///
/// ```
/// use actuator_agent::checkpoint::{CheckpointStore, FileCheckpoints};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("ckpt-doc-{}", std::process::id()));
/// let store = FileCheckpoints::new(&dir);
/// store.save("sample-1", b"{}".to_vec()).await.unwrap();
/// assert_eq!(store.load("sample-1").await.unwrap().as_deref(), Some(&b"{}"[..]));
/// store.remove("sample-1").await.unwrap();
/// assert!(store.load("sample-1").await.unwrap().is_none());
/// # std::fs::remove_dir_all(&dir).ok();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct FileCheckpoints {
    dir: PathBuf,
    max_bytes: usize,
    sync: bool,
    /// Journals appended to by this process (their torn tails, if any, cut off already).
    appending: Arc<Mutex<HashSet<PathBuf>>>,
}

impl FileCheckpoints {
    /// Checkpoints in `dir` (made when first written), at most
    /// [`DEFAULT_MAX_CHECKPOINT_BYTES`] each.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileCheckpoints {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_CHECKPOINT_BYTES,
            sync: true,
            appending: Arc::default(),
        }
    }

    /// Whether each write waits until it is on disk (the default): a checkpoint then
    /// survives the machine losing power. Without, the system holds it in memory for a
    /// while: it survives the process being killed (out of memory, SIGKILL, a panic), not
    /// the machine going down, and a write costs a small fraction (no `fsync`, and a small
    /// one is written without leaving the run's thread).
    ///
    /// ```
    /// use actuator_agent::checkpoint::FileCheckpoints;
    /// let store = FileCheckpoints::new("checkpoints").sync(false);
    /// # drop(store);
    /// ```
    #[must_use]
    pub fn sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// The largest checkpoint kept (a larger one fails to save).
    #[must_use]
    pub fn max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`: its safe characters, then a hash of the whole key (so that keys
    /// never name a path outside the directory, and different keys never share a file).
    fn path(&self, key: &str) -> PathBuf {
        let safe: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let hash = crc32fast::hash(key.as_bytes());
        self.dir.join(format!("{safe}-{hash:08x}.ckpt"))
    }
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError {
    let path = path.to_owned();
    move |source| CheckpointError::Io {
        action,
        path,
        source,
    }
}

/// The body of a checkpoint file, if it is whole.
fn verified(file: &[u8]) -> Option<&[u8]> {
    let rest = file.strip_prefix(MAGIC)?;
    let header_end = rest.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..header_end]).ok()?;
    let (crc, len) = header.split_once(' ')?;
    let crc = u32::from_str_radix(crc, 16).ok()?;
    let len: usize = len.parse().ok()?;
    let body = &rest[header_end + 1..];
    (body.len() == len && crc32fast::hash(body) == crc).then_some(body)
}

/// Unsynced records up to this size are written on the run's thread (a few microseconds).
const INLINE_WRITE_BYTES: usize = 64 << 10;

fn save_file(dir: &Path, path: &Path, record: &[u8], sync: bool) -> Result<(), CheckpointError> {
    let mut tmp = match tempfile::NamedTempFile::new_in(dir) {
        Ok(tmp) => tmp,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(io_err("make the directory of", path))?;
            tempfile::NamedTempFile::new_in(dir).map_err(io_err("write", path))?
        }
        Err(e) => return Err(io_err("write", path)(e)),
    };
    let header = format!("{:08x} {}\n", crc32fast::hash(record), record.len());
    let mut file = Vec::with_capacity(MAGIC.len() + header.len() + record.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(record);
    tmp.write_all(&file)
        .and_then(|()| {
            if sync {
                tmp.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(io_err("write", path))?;
    let prev = path.with_extension("ckpt.prev");
    if path.exists() {
        std::fs::rename(path, &prev).map_err(io_err("keep the previous", path))?;
    }
    tmp.persist(path)
        .map_err(|e| io_err("put in place", path)(e.error))?;
    // The renames are durable once the directory is.
    if sync && let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn load_file(path: &Path) -> Result<Option<Vec<u8>>, CheckpointError> {
    for candidate in [path.to_owned(), path.with_extension("ckpt.prev")] {
        let bytes = match std::fs::read(&candidate) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err("read", &candidate)(e)),
        };
        if let Some(body) = verified(&bytes) {
            return Ok(Some(body.to_vec()));
        }
        tracing::warn!(
            path = %candidate.display(),
            "a checkpoint is torn or corrupted; the one before it is used"
        );
    }
    Ok(None)
}

impl FileCheckpoints {
    fn check_size(&self, len: usize) -> Result<(), CheckpointError> {
        if len > self.max_bytes {
            return Err(CheckpointError::TooLarge {
                len,
                max: self.max_bytes,
            });
        }
        Ok(())
    }
}

/// Runs the file work `f` on a blocking thread, or here when `inline` (a small unsynced
/// write, cheaper than the hand-off); a thread that panicked is an I/O error on `path`.
async fn off_thread<T: Send + 'static>(
    inline: bool,
    action: &'static str,
    path: PathBuf,
    f: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    if inline {
        return f();
    }
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| io_err(action, &path)(std::io::Error::other(e)))?
}

impl CheckpointStore for FileCheckpoints {
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            self.check_size(record.len())?;
            let (dir, path, sync) = (self.dir.clone(), self.path(key), self.sync);
            let inline = !sync && record.len() <= INLINE_WRITE_BYTES;
            off_thread(inline, "write", path.clone(), move || {
                save_file(&dir, &path, &record, sync)
            })
            .await
        })
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointError>> {
        Box::pin(async move {
            let path = self.path(key);
            off_thread(false, "read", path.clone(), move || load_file(&path)).await
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let path = self.path(key);
            let journal = path.with_extension("journal");
            self.appending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&journal);
            for p in [path.with_extension("ckpt.prev"), journal, path] {
                match std::fs::remove_file(&p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_err("remove", &p)(e)),
                }
            }
            Ok(())
        })
    }

    fn append<'a>(
        &'a self,
        key: &'a str,
        entry: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            self.check_size(entry.len())?;
            let path = self.path(key).with_extension("journal");
            let trim = self
                .appending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(path.clone());
            let (dir, sync) = (self.dir.clone(), self.sync);
            let inline = !sync && !trim && entry.len() <= INLINE_WRITE_BYTES;
            let journal = path.clone();
            let write = move || {
                let appended = super::frames::append_file(&path, &entry, sync, trim);
                match appended {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        std::fs::create_dir_all(&dir)
                            .and_then(|()| super::frames::append_file(&path, &entry, sync, trim))
                    }
                    other => other,
                }
                .map_err(io_err("append to", &path))
            };
            off_thread(inline, "append to", journal, write).await
        })
    }

    fn entries<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<Vec<u8>>, CheckpointError>> {
        Box::pin(async move {
            let path = self.path(key).with_extension("journal");
            off_thread(false, "read", path.clone(), move || {
                match std::fs::read(&path) {
                    Ok(log) => Ok(super::frames::unframe(&log).0),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
                    Err(e) => Err(io_err("read", &path)(e)),
                }
            })
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_torn_newest_checkpoint_falls_back_to_the_previous_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCheckpoints::new(dir.path());
        store.save("k/../../etc", b"first".to_vec()).await.unwrap();
        store.save("k/../../etc", b"second".to_vec()).await.unwrap();
        let path = store.path("k/../../etc");
        assert!(
            path.starts_with(dir.path()),
            "keys never leave the directory"
        );
        // A crash mid-write of the newest: cut short.
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
        assert_eq!(store.load("k/../../etc").await.unwrap().unwrap(), b"first");
        // Corrupted in place (same length): the checksum catches it.
        std::fs::write(
            &path,
            bytes
                .iter()
                .map(|b| if *b == b's' { b'S' } else { *b })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(store.load("k/../../etc").await.unwrap().unwrap(), b"first");
        // Too large for the bound.
        let small = FileCheckpoints::new(dir.path()).max_bytes(4);
        assert!(matches!(
            small.save("x", b"12345".to_vec()).await,
            Err(CheckpointError::TooLarge { len: 5, max: 4 })
        ));
    }
}
