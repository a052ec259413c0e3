//! Writing and reading log files in the reference's two formats.
//!
//! `.eval` is a zip: `_journal/start.json` (the spec and plan) at once, each sample as
//! `samples/{id}_epoch_{n}.json` with its summary journaled in `_journal/summaries/{k}.json`
//! as buffers flush, and `summaries.json` and `header.json` at the end. Every flush leaves a
//! complete zip (the zip is reopened in append mode and its directory rewritten), so a crash
//! loses at most the samples not yet flushed, and the reference reads an unfinished log from
//! its journal. `.json` is one document; its samples are spooled to a side file as they finish
//! and the document is assembled at the end.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::error::LogError;
use crate::log::schema::{EvalLog, EvalSample};

/// The log file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// The reference's default: a zip written incrementally (`.eval`).
    #[default]
    Eval,
    /// One JSON document (`.json`).
    Json,
}

impl LogFormat {
    fn extension(self) -> &'static str {
        match self {
            LogFormat::Eval => "eval",
            LogFormat::Json => "json",
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_owned(),
        source,
    }
}

fn zip_err(path: &Path) -> impl FnOnce(zip::result::ZipError) -> LogError + '_ {
    move |e| LogError::Zip {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

fn format_err(path: &Path, reason: impl std::fmt::Display) -> LogError {
    LogError::Format {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

fn to_json(path: &Path, value: &impl serde::Serialize) -> Result<Vec<u8>, LogError> {
    serde_json::to_vec(value).map_err(|e| format_err(path, e))
}

/// The shortest time between two writes of a full buffer.
const MIN_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// Writes one evaluation's log as its samples finish.
pub(crate) struct LogWriter {
    path: PathBuf,
    format: LogFormat,
    buffer: Vec<EvalSample>,
    buffer_size: usize,
    last_flush: Instant,
    journaled: usize,
    spool: Option<(PathBuf, File)>,
}

impl LogWriter {
    /// Creates the file in `dir` (named as the reference names logs) and writes the start.
    pub(crate) fn create(
        dir: &Path,
        start: &EvalLog,
        format: LogFormat,
        buffer_size: usize,
    ) -> Result<Self, LogError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let stamp = start.eval.created.replace(':', "-");
        let stamp = stamp.split('.').next().unwrap_or(&stamp).to_owned() + "+00-00";
        let task: String = start
            .eval
            .task
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let short: String = start.eval.eval_id.chars().take(22).collect();
        let path = dir.join(format!("{stamp}_{task}_{short}.{}", format.extension()));
        let mut writer = LogWriter {
            path: path.clone(),
            format,
            buffer: Vec::new(),
            buffer_size: buffer_size.max(1),
            last_flush: Instant::now(),
            journaled: 0,
            spool: None,
        };
        match format {
            LogFormat::Eval => {
                let file = File::create(&path).map_err(io(&path))?;
                let mut zip = ZipWriter::new(file);
                let body = serde_json::json!({"version": start.version, "eval": start.eval, "plan": start.plan});
                write_entry(
                    &mut zip,
                    &path,
                    "_journal/start.json",
                    &to_json(&path, &body)?,
                )?;
                zip.finish().map_err(zip_err(&path))?;
            }
            LogFormat::Json => {
                // The document itself is written at the end; until then it holds the start.
                std::fs::write(&path, to_json(&path, start)?).map_err(io(&path))?;
                let spool_path = path.with_extension("samples.jsonl");
                let spool = File::create(&spool_path).map_err(io(&spool_path))?;
                writer.spool = Some((spool_path, spool));
            }
        }
        Ok(writer)
    }

    /// Records a finished sample (written at the next flush).
    pub(crate) fn sample(&mut self, sample: EvalSample) -> Result<(), LogError> {
        self.buffer.push(sample);
        // A full buffer is written once a second has passed since the last write (so that a
        // fast run does not rewrite the zip's directory hundreds of times a second), and at
        // once when a hundred buffers' worth wait.
        let full = self.buffer.len() >= self.buffer_size;
        if full
            && (self.last_flush.elapsed() >= MIN_FLUSH_INTERVAL
                || self.buffer.len() >= 100 * self.buffer_size)
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered samples.
    pub(crate) fn flush(&mut self) -> Result<(), LogError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let samples = std::mem::take(&mut self.buffer);
        let summaries: Vec<Value> = samples.iter().map(EvalSample::summary).collect();
        match self.format {
            LogFormat::Eval => {
                let mut zip = self.reopen()?;
                for s in &samples {
                    let name = format!("samples/{}_epoch_{}.json", s.id, s.epoch);
                    write_entry(&mut zip, &self.path, &name, &to_json(&self.path, s)?)?;
                }
                self.journaled += 1;
                let name = format!("_journal/summaries/{}.json", self.journaled);
                write_entry(
                    &mut zip,
                    &self.path,
                    &name,
                    &to_json(&self.path, &summaries)?,
                )?;
                finish(zip, &self.path)?;
            }
            LogFormat::Json => {
                if let Some((spool_path, spool)) = &mut self.spool {
                    for s in &samples {
                        let mut line = to_json(spool_path, s)?;
                        line.push(b'\n');
                        spool.write_all(&line).map_err(io(spool_path))?;
                    }
                    spool.flush().map_err(io(spool_path))?;
                }
            }
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// The summaries journaled so far, as one JSON list, read back from the file (so that they
    /// are never all held in memory as values).
    fn journaled_summaries(&self) -> Result<Vec<u8>, LogError> {
        let file = File::open(&self.path).map_err(io(&self.path))?;
        let mut zip = ZipArchive::new(file).map_err(zip_err(&self.path))?;
        let mut out = vec![b'['];
        for k in 1..=self.journaled {
            let name = format!("_journal/summaries/{k}.json");
            let mut body = Vec::new();
            zip.by_name(&name)
                .map_err(zip_err(&self.path))?
                .read_to_end(&mut body)
                .map_err(io(&self.path))?;
            // Each journal entry is a non-empty list: splice its items.
            let items = body
                .strip_prefix(b"[")
                .and_then(|b| b.strip_suffix(b"]"))
                .ok_or_else(|| format_err(&self.path, format!("{name} is not a list")))?;
            if out.len() > 1 && !items.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(items);
        }
        out.push(b']');
        Ok(out)
    }

    fn reopen(&self) -> Result<ZipWriter<AppendAtDirectory>, LogError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(io(&self.path))?;
        let directory = ZipArchive::new(&file)
            .map_err(zip_err(&self.path))?
            .central_directory_start();
        let armed = Arc::new(AtomicBool::new(false));
        let append = AppendAtDirectory {
            file,
            directory: Some(directory),
            armed: Arc::clone(&armed),
        };
        let zip = ZipWriter::new_append(append).map_err(zip_err(&self.path))?;
        // The archive is read; the writer's next position lands on the old directory.
        armed.store(true, Ordering::SeqCst);
        Ok(zip)
    }

    /// Writes what is left and the final header.
    pub(crate) fn finish(mut self, header: &EvalLog) -> Result<PathBuf, LogError> {
        self.flush()?;
        match self.format {
            LogFormat::Eval => {
                let mut zip = self.reopen()?;
                let summaries = self.journaled_summaries()?;
                write_entry(&mut zip, &self.path, "summaries.json", &summaries)?;
                write_entry(
                    &mut zip,
                    &self.path,
                    "header.json",
                    &to_json(&self.path, header)?,
                )?;
                finish(zip, &self.path)?;
            }
            LogFormat::Json => {
                let Some((spool_path, spool)) = self.spool.take() else {
                    return Ok(self.path);
                };
                drop(spool);
                let mut doc = header.clone();
                doc.samples = None;
                let mut head = to_json(&self.path, &doc)?;
                // `{...}` → `{..., "samples": [<spooled lines>]}`
                head.pop();
                let mut out = File::create(&self.path).map_err(io(&self.path))?;
                out.write_all(&head).map_err(io(&self.path))?;
                out.write_all(b",\"samples\":[").map_err(io(&self.path))?;
                let reader = BufReader::new(File::open(&spool_path).map_err(io(&spool_path))?);
                for (i, line) in reader.lines().enumerate() {
                    let line = line.map_err(io(&spool_path))?;
                    if i > 0 {
                        out.write_all(b",").map_err(io(&self.path))?;
                    }
                    out.write_all(line.as_bytes()).map_err(io(&self.path))?;
                }
                out.write_all(b"]}").map_err(io(&self.path))?;
                out.flush().map_err(io(&self.path))?;
                std::fs::remove_file(&spool_path).map_err(io(&spool_path))?;
            }
        }
        Ok(self.path)
    }
}

/// Writes the directory and cuts the file where it ends (a rewritten directory can end before
/// the old one did).
fn finish(zip: ZipWriter<AppendAtDirectory>, path: &Path) -> Result<(), LogError> {
    let mut inner = zip.finish().map_err(zip_err(path))?;
    let end = inner.file.stream_position().map_err(io(path))?;
    inner.file.set_len(end).map_err(io(path))
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

fn write_entry<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    path: &Path,
    name: &str,
    body: &[u8],
) -> Result<(), LogError> {
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file(name, options).map_err(zip_err(path))?;
    zip.write_all(body).map_err(io(path))
}

/// Reads a log either format, with its samples in id and epoch order.
///
/// A `.eval` log that was not finished (no `header.json`) is read from its journal: its
/// status is `started` and it has the samples flushed so far.
pub fn read_eval_log(path: impl AsRef<Path>) -> Result<EvalLog, LogError> {
    let path = path.as_ref();
    let mut log = if path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read(path).map_err(io(path))?;
        serde_json::from_slice::<EvalLog>(&text).map_err(|e| format_err(path, e))?
    } else {
        let file = File::open(path).map_err(io(path))?;
        let mut zip = ZipArchive::new(file).map_err(zip_err(path))?;
        let read = |zip: &mut ZipArchive<File>, name: &str| -> Result<Option<Vec<u8>>, LogError> {
            let mut entry = match zip.by_name(name) {
                Ok(e) => e,
                Err(zip::result::ZipError::FileNotFound) => return Ok(None),
                Err(e) => return Err(zip_err(path)(e)),
            };
            let mut body = Vec::new();
            entry.read_to_end(&mut body).map_err(io(path))?;
            Ok(Some(body))
        };
        let mut log = match read(&mut zip, "header.json")? {
            Some(body) => {
                serde_json::from_slice::<EvalLog>(&body).map_err(|e| format_err(path, e))?
            }
            None => {
                let body = read(&mut zip, "_journal/start.json")?.ok_or_else(|| {
                    format_err(
                        path,
                        "neither header.json nor _journal/start.json is present",
                    )
                })?;
                let mut start: serde_json::Map<String, Value> =
                    serde_json::from_slice(&body).map_err(|e| format_err(path, e))?;
                start.insert("status".into(), "started".into());
                start.insert(
                    "stats".into(),
                    serde_json::json!({"started_at": "", "completed_at": ""}),
                );
                serde_json::from_value::<EvalLog>(Value::Object(start))
                    .map_err(|e| format_err(path, e))?
            }
        };
        let names: Vec<String> = zip
            .file_names()
            .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
            .map(str::to_owned)
            .collect();
        let mut samples = Vec::with_capacity(names.len());
        for name in names {
            if let Some(body) = read(&mut zip, &name)? {
                samples.push(
                    serde_json::from_slice::<EvalSample>(&body)
                        .map_err(|e| format_err(path, format!("{name}: {e}")))?,
                );
            }
        }
        log.samples = Some(samples);
        log
    };
    if let Some(samples) = &mut log.samples {
        samples.sort_by(|a, b| (&a.id, a.epoch).cmp(&(&b.id, b.epoch)));
    }
    Ok(log)
}
