//! Adding entries to a finished `.eval` zip, in place, and putting it back as it was when a
//! write fails part way (a full disk): the new entries overwrite the old central directory,
//! so a copy of its bytes is kept until the new one is written. The old directory is never
//! parsed (the zip crate's append mode holds every entry's metadata, twice, at each flush), so
//! a write holds the new entries and about 70 bytes an old one.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::error::LogError;
use crate::error::io;

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

/// The end of a `.eval` file before a write: where its directory starts, the directory and
/// the end records after it (as raw bytes, about 70 a entry: never parsed into the zip crate's
/// entries, which take several hundred bytes each), and what the end records say.
struct Saved {
    at: u64,
    tail: Vec<u8>,
    directory: Directory,
}

/// What a zip's end records say of its central directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Directory {
    /// Where it starts.
    start: u64,
    /// Its length in bytes.
    size: u64,
    /// How many entries it lists.
    entries: u64,
}

const END: u32 = 0x0605_4b50;
const END64: u32 = 0x0606_4b50;
const END64_LOCATOR: u32 = 0x0706_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
/// The end record's length without a comment.
const END_LEN: usize = 22;
/// The zip64 end record's length (without extensible data) and its locator's.
const END64_LEN: usize = 56;
const LOCATOR_LEN: usize = 20;

fn u16_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from(u16::from_le_bytes(
        b.get(i..i + 2)?.try_into().ok()?,
    )))
}

fn u32_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from(u32::from_le_bytes(
        b.get(i..i + 4)?.try_into().ok()?,
    )))
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Finds the central directory of the zip `file` from its end records (zip64 ones included).
fn locate(file: &mut File, path: &Path) -> Result<Directory, LogError> {
    let broken = |reason: &str| LogError::Zip {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let len = file.seek(SeekFrom::End(0)).map_err(io(path))?;
    // The end record, a comment of at most 64 KiB after it, and a zip64 locator before it.
    let window = len.min((END_LEN + LOCATOR_LEN + usize::from(u16::MAX)) as u64);
    let mut end = vec![0; window as usize];
    file.seek(SeekFrom::Start(len - window))
        .and_then(|_| file.read_exact(&mut end))
        .map_err(io(path))?;
    let at = (0..=end.len().saturating_sub(END_LEN))
        .rev()
        .find(|&i| {
            u32_at(&end, i) == Some(u64::from(END))
                && u16_at(&end, i + 20).is_some_and(|c| i + END_LEN + c as usize == end.len())
        })
        .ok_or_else(|| broken("no end of central directory record"))?;
    let field = |i| u16_at(&end, at + i).ok_or_else(|| broken("a cut end record"));
    let wide = |i| u32_at(&end, at + i).ok_or_else(|| broken("a cut end record"));
    let mut directory = Directory {
        start: wide(16)?,
        size: wide(12)?,
        entries: field(10)?,
    };
    let locator = at.checked_sub(LOCATOR_LEN);
    if let Some(l) = locator.filter(|&l| u32_at(&end, l) == Some(u64::from(END64_LOCATOR))) {
        let record_at = u64_at(&end, l + 8).ok_or_else(|| broken("a cut zip64 locator"))?;
        let mut record = [0; END64_LEN];
        file.seek(SeekFrom::Start(record_at))
            .and_then(|_| file.read_exact(&mut record))
            .map_err(io(path))?;
        if u32_at(&record, 0) != Some(u64::from(END64)) {
            return Err(broken("the zip64 locator points at no zip64 end record"));
        }
        let cut = || broken("a cut zip64 end record");
        directory = Directory {
            entries: u64_at(&record, 32).ok_or_else(cut)?,
            size: u64_at(&record, 40).ok_or_else(cut)?,
            start: u64_at(&record, 48).ok_or_else(cut)?,
        };
    }
    if directory
        .start
        .checked_add(directory.size)
        .is_none_or(|e| e > len)
    {
        return Err(broken(
            "the central directory lies past the end of the file",
        ));
    }
    Ok(directory)
}

/// The name and local header offset of each entry of the central directory `records`.
fn entries(records: &[u8], path: &Path) -> Result<Vec<(String, u64)>, LogError> {
    let broken = || LogError::Zip {
        path: path.to_owned(),
        reason: "a cut central directory record".to_owned(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < records.len() {
        if u32_at(records, i) != Some(u64::from(CENTRAL_HEADER)) {
            return Err(broken());
        }
        let [csize, size, offset] = [20, 24, 42].map(|k| u32_at(records, i + k));
        let [name_len, extra_len, comment_len] = [28, 30, 32].map(|k| u16_at(records, i + k));
        let (Some(csize), Some(size), Some(mut offset)) = (csize, size, offset) else {
            return Err(broken());
        };
        let (Some(name_len), Some(extra_len), Some(comment_len)) =
            (name_len, extra_len, comment_len)
        else {
            return Err(broken());
        };
        let name_at = i + 46;
        let extra_at = name_at + name_len as usize;
        let next = extra_at + extra_len as usize + comment_len as usize;
        let name = records.get(name_at..extra_at).ok_or_else(broken)?;
        let extra = records
            .get(extra_at..extra_at + extra_len as usize)
            .ok_or_else(broken)?;
        if offset == u64::from(u32::MAX) {
            // The zip64 extra field holds, in order, the sizes that overflowed, then this.
            let mut k = 0;
            while let (Some(id), Some(len)) = (u16_at(extra, k), u16_at(extra, k + 2)) {
                if id == 1 {
                    let skip = [size, csize]
                        .iter()
                        .filter(|&&s| s == u64::from(u32::MAX))
                        .count();
                    offset = u64_at(extra, k + 4 + 8 * skip).ok_or_else(broken)?;
                    break;
                }
                k += 4 + len as usize;
            }
        }
        out.push((String::from_utf8_lossy(name).into_owned(), offset));
        i = next;
    }
    Ok(out)
}

/// The end records of a directory: zip64 ones too when a count or place overflows the
/// classic record (the classic fields then say so, as the zip crate and Python's `zipfile`
/// write them).
fn end_records(d: Directory) -> Vec<u8> {
    let mut out = Vec::with_capacity(END64_LEN + LOCATOR_LEN + END_LEN);
    let wide = u64::from(u32::MAX);
    if d.entries >= u64::from(u16::MAX) || d.size >= wide || d.start >= wide {
        out.extend_from_slice(&END64.to_le_bytes());
        out.extend_from_slice(&(END64_LEN as u64 - 12).to_le_bytes());
        out.extend_from_slice(&45u16.to_le_bytes()); // made by
        out.extend_from_slice(&45u16.to_le_bytes()); // needed to extract
        out.extend_from_slice(&0u32.to_le_bytes()); // this disk
        out.extend_from_slice(&0u32.to_le_bytes()); // the directory's disk
        out.extend_from_slice(&d.entries.to_le_bytes());
        out.extend_from_slice(&d.entries.to_le_bytes());
        out.extend_from_slice(&d.size.to_le_bytes());
        out.extend_from_slice(&d.start.to_le_bytes());
        out.extend_from_slice(&END64_LOCATOR.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(d.start + d.size).to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    let entries = d.entries.min(u64::from(u16::MAX)) as u16;
    out.extend_from_slice(&END.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&(d.size.min(wide) as u32).to_le_bytes());
    out.extend_from_slice(&(d.start.min(wide) as u32).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // no comment
    out
}

/// A write of new entries into a `.eval` zip.
///
/// The zip crate's own append mode parses the whole central directory into entries of
/// several hundred bytes each, for the writer and again for its reader, at every flush: a
/// long evaluation's peak grew by about 550 bytes a sample. Here the old directory is kept as
/// its raw bytes, the new entries are written where it was by a zip writer that knows only
/// them, and the old directory's records then go back in front of the new ones.
pub(crate) struct Append {
    zip: ZipWriter<File>,
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
        let directory = locate(&mut file, path)?;
        let at = directory.start;
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(at))
            .and_then(|_| file.read_to_end(&mut tail))
            .map_err(io(path))?;
        let saved = Saved {
            at,
            tail,
            directory,
        };
        // The new entries go where the directory was; the file ends there until it is back.
        let cut = file
            .set_len(at)
            .and_then(|()| file.seek(SeekFrom::Start(at)).map(drop));
        if let Err(source) = cut {
            return Err(restore(
                path,
                saved,
                write_err(path, "opening the log to add samples")(source),
            ));
        }
        Ok(Append {
            zip: ZipWriter::new(file),
            saved,
            path: path.to_owned(),
        })
    }

    /// Adds an entry.
    pub(crate) fn entry(&mut self, name: &str, body: &[u8], action: &str) -> Result<(), LogError> {
        write_entry(&mut self.zip, &self.path, name, body, action)
    }

    /// Starts an entry whose body follows in pieces ([`Append::write`]).
    pub(crate) fn start(&mut self, name: &str, action: &str) -> Result<(), LogError> {
        write_entry(&mut self.zip, &self.path, name, b"", action)
    }

    /// Adds `bytes` to the entry started last.
    pub(crate) fn write(&mut self, bytes: &[u8], action: &str) -> Result<(), LogError> {
        self.zip
            .write_all(bytes)
            .map_err(write_err(&self.path, action))
    }

    /// Ends the write: writes the directory (the old records, then the new ones), or, when
    /// `written` (or that) failed, puts the file back as it was. Returns the new entries'
    /// names and where their local headers start.
    pub(crate) fn end(
        self,
        written: Result<(), LogError>,
        action: &str,
    ) -> Result<Vec<(String, u64)>, LogError> {
        let Append { zip, saved, path } = self;
        let ended = match written {
            Ok(()) => finish(zip, &saved, &path, action),
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

/// Ends the new entries and writes the whole directory after them: the zip writer writes the
/// new entries' records and end records, which are then overwritten by the old records, the
/// new ones, and end records counting both.
fn finish(
    zip: ZipWriter<File>,
    saved: &Saved,
    path: &Path,
    action: &str,
) -> Result<Vec<(String, u64)>, LogError> {
    let mut file = zip.finish().map_err(zip_write_err(path, action))?;
    let new = locate(&mut file, path)?;
    let mut records = vec![0; new.size as usize];
    file.seek(SeekFrom::Start(new.start))
        .and_then(|_| file.read_exact(&mut records))
        .map_err(io(path))?;
    let added = entries(&records, path)?;
    let old = saved.directory;
    let old_records = saved
        .tail
        .get(..old.size as usize)
        .ok_or_else(|| LogError::Zip {
            path: path.to_owned(),
            reason: "the central directory lies past the end of the file".to_owned(),
        })?;
    let whole = Directory {
        start: new.start,
        size: old.size + new.size,
        entries: old.entries + new.entries,
    };
    let fail = write_err(path, action);
    let written = file
        .seek(SeekFrom::Start(new.start))
        .and_then(|_| file.write_all(old_records))
        .and_then(|()| file.write_all(&records))
        .and_then(|()| file.write_all(&end_records(whole)))
        .and_then(|()| file.stream_position())
        .and_then(|end| file.set_len(end))
        .and_then(|()| file.flush());
    written.map_err(fail)?;
    Ok(added)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::print_stderr)]
mod tests {
    use super::*;
    use zip::ZipArchive;

    fn started(dir: &Path) -> PathBuf {
        let path = dir.join("log.eval");
        let mut zip = ZipWriter::new(File::create(&path).unwrap());
        write_entry(&mut zip, &path, "start.json", b"{}", "starting").unwrap();
        zip.finish().unwrap();
        path
    }

    /// Appends `names` (each entry's body is its name) and returns where they start.
    fn append(path: &Path, names: &[String]) -> Vec<(String, u64)> {
        let mut zip = Append::open(path).unwrap();
        let written = names
            .iter()
            .try_for_each(|n| zip.entry(n, n.as_bytes(), "appending"));
        zip.end(written, "appending").unwrap()
    }

    fn read_at(path: &Path, at: u64) -> Vec<u8> {
        let mut file = File::open(path).unwrap();
        file.seek(SeekFrom::Start(at)).unwrap();
        let mut body = Vec::new();
        zip::read::read_zipfile_from_stream(&mut file)
            .unwrap()
            .unwrap()
            .read_to_end(&mut body)
            .unwrap();
        body
    }

    #[test]
    fn appended_entries_keep_the_old_ones_and_say_where_they_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = started(dir.path());
        let mut all = vec!["start.json".to_owned()];
        for round in 0..3 {
            let names: Vec<String> = (0..4).map(|i| format!("samples/{round}_{i}")).collect();
            let added = append(&path, &names);
            assert_eq!(
                added.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                names.iter().collect::<Vec<_>>()
            );
            for (name, at) in &added {
                assert_eq!(read_at(&path, *at), name.as_bytes());
            }
            all.extend(names);
        }
        let mut zip = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(zip.len(), all.len());
        for (i, name) in all.iter().enumerate() {
            let mut body = String::new();
            zip.by_index(i).unwrap().read_to_string(&mut body).unwrap();
            let expected = if i == 0 { "{}" } else { name.as_str() };
            assert_eq!(body, expected);
        }
        // One directory, at the end: nothing dead left behind by the appends.
        let directory = locate(&mut File::open(&path).unwrap(), &path).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        assert_eq!(directory.start + directory.size + END_LEN as u64, len);
    }

    #[test]
    fn past_65535_entries_the_end_records_are_zip64_ones_and_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.eval");
        // 65,534 stored entries by the zip crate (a classic end record), then appends past
        // the classic record's count: ours writes zip64 end records, then reads them back.
        let mut zip = ZipWriter::new(File::create(&path).unwrap());
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        for i in 0..65_534 {
            zip.start_file(format!("a{i}"), stored).unwrap();
        }
        zip.finish().unwrap();
        append(&path, &["b0".to_owned(), "b1".to_owned()]);
        let directory = locate(&mut File::open(&path).unwrap(), &path).unwrap();
        assert_eq!(directory.entries, 65_536);
        let added = append(&path, &["last".to_owned()]);
        assert_eq!(read_at(&path, added[0].1), b"last");
        let mut zip = ZipArchive::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(zip.len(), 65_537);
        let mut body = String::new();
        zip.by_name("b1")
            .unwrap()
            .read_to_string(&mut body)
            .unwrap();
        assert_eq!(body, "b1");
        body.clear();
        zip.by_name("a65533")
            .unwrap()
            .read_to_string(&mut body)
            .unwrap();
        assert_eq!(body, "");
        // Python's `zipfile`, which the reference reads logs with, reads it too.
        let script = "import sys, zipfile\n\
                      z = zipfile.ZipFile(sys.argv[1])\n\
                      assert len(z.infolist()) == 65537, len(z.infolist())\n\
                      assert z.read('last') == b'last'\n";
        match std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&path)
            .output()
        {
            Ok(out) => assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => eprintln!("skipping Python's zipfile: no python3 ({e})"),
        }
    }

    #[test]
    fn a_failed_append_puts_the_file_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = started(dir.path());
        append(&path, &["one".to_owned()]);
        let before = std::fs::read(&path).unwrap();
        let mut zip = Append::open(&path).unwrap();
        zip.entry("two", b"two", "appending").unwrap();
        let failure = LogError::Zip {
            path: path.clone(),
            reason: "simulated".into(),
        };
        assert!(zip.end(Err(failure), "appending").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
