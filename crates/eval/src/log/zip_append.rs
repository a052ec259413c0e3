//! Adding entries to a finished `.eval` zip, in place, and putting it back as it was when a
//! write fails part way (a full disk): the new entries overwrite the old central directory,
//! so a copy of it is kept until the new one is written.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::error::LogError;
use crate::error::{io, zip_err};

/// A failed write of `action` on `path`.
pub(crate) fn write_err(
    path: &Path,
    action: impl Into<String>,
) -> impl FnOnce(std::io::Error) -> LogError {
    let (path, action) = (path.to_owned(), action.into());
    move |source| LogError::Write {
        path,
        action,
        source,
    }
}

/// A failed zip write: an I/O error is a [`LogError::Write`], anything else a broken zip.
pub(crate) fn zip_write_err(
    path: &Path,
    action: impl Into<String>,
) -> impl FnOnce(zip::result::ZipError) -> LogError {
    let (path, action) = (path.to_owned(), action.into());
    move |e| match e {
        zip::result::ZipError::Io(source) => LogError::Write {
            path,
            action,
            source,
        },
        other => LogError::Zip {
            path,
            reason: other.to_string(),
        },
    }
}

/// The end of a `.eval` file before a write: where its directory starts, and the directory.
struct Saved {
    at: u64,
    tail: Vec<u8>,
}

/// A write of new entries into a `.eval` zip.
pub(crate) struct Append {
    zip: ZipWriter<AppendAtDirectory>,
    saved: Saved,
    path: PathBuf,
}

impl Append {
    /// Opens the zip at `path` to add entries over its old directory, a copy of which is kept
    /// to put back should the write fail.
    pub(crate) fn open(path: &Path) -> Result<Self, LogError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io(path))?;
        let directory = ZipArchive::new(&file)
            .map_err(zip_err(path))?
            .central_directory_start();
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(directory))
            .and_then(|_| file.read_to_end(&mut tail))
            .map_err(io(path))?;
        let armed = Arc::new(AtomicBool::new(false));
        let append = AppendAtDirectory {
            file,
            directory: Some(directory),
            armed: Arc::clone(&armed),
        };
        let zip = ZipWriter::new_append(append).map_err(zip_err(path))?;
        // The archive is read; the writer's next position lands on the old directory.
        armed.store(true, Ordering::SeqCst);
        Ok(Append {
            zip,
            saved: Saved {
                at: directory,
                tail,
            },
            path: path.to_owned(),
        })
    }

    /// Adds an entry.
    pub(crate) fn entry(&mut self, name: &str, body: &[u8], action: &str) -> Result<(), LogError> {
        write_entry(&mut self.zip, &self.path, name, body, action)
    }

    /// Ends the write: writes the directory, or, when `written` (or that) failed, puts the
    /// file back as it was.
    pub(crate) fn end(self, written: Result<(), LogError>, action: &str) -> Result<(), LogError> {
        let Append { zip, saved, path } = self;
        let ended = match written {
            Ok(()) => finish(zip, &path, action),
            Err(e) => {
                drop(zip);
                Err(e)
            }
        };
        ended.map_err(|e| restore(&path, saved, e))
    }
}

/// Puts back the file's end as it was before a write that failed with `failure`.
fn restore(path: &Path, saved: Saved, failure: LogError) -> LogError {
    let put_back = OpenOptions::new().write(true).open(path).and_then(|mut f| {
        f.set_len(saved.at)?;
        f.seek(SeekFrom::Start(saved.at))?;
        f.write_all(&saved.tail)?;
        f.flush()
    });
    match put_back {
        Ok(()) => failure,
        Err(source) => {
            tracing::error!(log = %path.display(), "{failure}");
            LogError::Write {
                path: path.to_owned(),
                action: format!(
                    "putting the log back after a failed write ({failure}); the file is \
                     damaged"
                ),
                source,
            }
        }
    }
}

/// Writes the directory and cuts the file where it ends (a rewritten directory can end before
/// the old one did).
fn finish(zip: ZipWriter<AppendAtDirectory>, path: &Path, action: &str) -> Result<(), LogError> {
    let mut inner = zip.finish().map_err(zip_write_err(path, action))?;
    let end = inner
        .file
        .stream_position()
        .map_err(write_err(path, action))?;
    inner.file.set_len(end).map_err(write_err(path, action))?;
    inner.file.flush().map_err(write_err(path, action))
}

/// The log file, reopened for appending so that new entries overwrite the old central
/// directory, as Python's `zipfile` does in append mode. The zip crate's `new_append` goes on
/// after the old directory, which would leave a dead copy of it at every flush (quadratic
/// growth over a long run); this wrapper moves the first write position back onto it.
struct AppendAtDirectory {
    file: File,
    directory: Option<u64>,
    armed: Arc<AtomicBool>,
}

impl AppendAtDirectory {
    fn reposition(&mut self) -> std::io::Result<()> {
        if self.armed.load(Ordering::SeqCst)
            && let Some(at) = self.directory.take()
        {
            self.file.seek(SeekFrom::Start(at))?;
        }
        Ok(())
    }
}

impl Read for AppendAtDirectory {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.reposition()?;
        self.file.read(buf)
    }
}

impl Write for AppendAtDirectory {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.reposition()?;
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for AppendAtDirectory {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            // A relative move starts from where the next entry goes.
            SeekFrom::Current(_) => self.reposition()?,
            // An absolute one knows where it is going.
            _ => {
                if self.armed.load(Ordering::SeqCst) {
                    self.directory = None;
                }
            }
        }
        self.file.seek(pos)
    }
}

pub(crate) fn write_entry<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    path: &Path,
    name: &str,
    body: &[u8],
    action: &str,
) -> Result<(), LogError> {
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file(name, options)
        .map_err(zip_write_err(path, action))?;
    zip.write_all(body).map_err(write_err(path, action))
}
