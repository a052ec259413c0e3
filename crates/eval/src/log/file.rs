//! Writing and reading log files in the reference's two formats.
//!
//! `.eval` is a zip: `_journal/start.json` (the spec and plan) at once, each sample as
//! `samples/{id}_epoch_{n}.json` with its summary journaled in `_journal/summaries/{k}.json`
//! as buffers flush, and `summaries.json` and `header.json` at the end. Every flush leaves a
//! complete zip (the zip is reopened in append mode and its directory rewritten), so a crash
//! loses at most the samples not yet flushed, and the reference reads an unfinished log from
//! its journal. `.json` is one document; its samples are spooled to a side file as they finish
//! and the document is assembled at the end (in a side file, renamed over the log when whole).
//! A finished sample waits for its write already serialized, its summary too (at most a
//! second's worth, a hundred buffers, or 8 MiB), so a fast run's memory holds bytes, not value
//! trees; the end's `summaries.json` is streamed from the journal, one journal entry at a
//! time, so the end holds no more than a flush does, however many samples the log has.
//!
//! A write that fails part way (a full disk) leaves the file as it was before it: a flush
//! overwrites the zip's old directory, so the writer keeps a copy of it and puts it back,
//! cutting the file where it ended; the samples of the failed write stay buffered.

use actuator_tool_core::ErrorChain;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zip::ZipWriter;

use crate::error::{LogError, format_err, io, zip_err};
use crate::log::schema::{EvalErrorInfo, EvalLog, EvalSample};
use crate::log::zip_append::{Append, write_entry, write_err, zip_write_err};

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

fn to_json(path: &Path, value: &impl serde::Serialize) -> Result<Vec<u8>, LogError> {
    serde_json::to_vec(value).map_err(|e| format_err(path, e))
}

/// The shortest time between two writes of a full buffer.
const MIN_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// The most a buffer holds, serialized, before it is written whatever the interval.
const MAX_BUFFERED_BYTES: usize = 8 << 20;

/// A finished sample waiting to be written: already serialized, so a fast run's buffer holds
/// the log's bytes rather than the sample's value trees (several times larger).
struct Buffered {
    /// `samples/{id}_epoch_{epoch}.json`.
    entry: String,
    /// The sample as the log holds it.
    body: Vec<u8>,
    /// Its summary for the `.eval` journal, serialized.
    summary: Vec<u8>,
}

/// Writes one evaluation's log as its samples finish.
pub(crate) struct LogWriter {
    path: PathBuf,
    format: LogFormat,
    buffer: Vec<Buffered>,
    /// The bytes of the buffered samples (bodies and summaries).
    buffered_bytes: usize,
    buffer_size: usize,
    last_flush: Instant,
    /// Where each `_journal/summaries/{k}.json` entry's local header starts, in order: the
    /// end's `summaries.json` is streamed from them, one journal entry at a time.
    journals: Vec<u64>,
    /// The `.json` format's spooled samples, and the spool's length after the last whole write.
    spool: Option<(PathBuf, File, u64)>,
}

impl LogWriter {
    /// Creates the file in `dir` (named as the reference names logs) and writes the start.
    /// A start that cannot be written leaves no file.
    pub(crate) fn create(
        dir: &Path,
        start: &EvalLog,
        format: LogFormat,
        buffer_size: usize,
    ) -> Result<Self, LogError> {
        std::fs::create_dir_all(dir).map_err(write_err(dir, "making the log directory"))?;
        Self::create_at(log_path(dir, start, format), start, format, buffer_size)
    }

    /// Creates the log at `path` and writes the start, as [`LogWriter::create`] does.
    pub(crate) fn create_at(
        path: PathBuf,
        start: &EvalLog,
        format: LogFormat,
        buffer_size: usize,
    ) -> Result<Self, LogError> {
        let mut writer = LogWriter {
            path: path.clone(),
            format,
            buffer: Vec::new(),
            buffered_bytes: 0,
            buffer_size: buffer_size.max(1),
            last_flush: Instant::now(),
            journals: Vec::new(),
            spool: None,
        };
        const ACTION: &str = "starting the log (nothing was recorded; no file is left)";
        let started = match format {
            LogFormat::Eval => File::create(&path)
                .map_err(write_err(&path, ACTION))
                .and_then(|file| {
                    let mut zip = ZipWriter::new(file);
                    let body = serde_json::json!({"version": start.version, "eval": start.eval, "plan": start.plan});
                    let body = to_json(&path, &body)?;
                    write_entry(&mut zip, &path, "_journal/start.json", &body, ACTION)?;
                    zip.finish().map_err(zip_write_err(&path, ACTION))?;
                    Ok(())
                }),
            LogFormat::Json => {
                // The document itself is written at the end; until then it holds the start.
                let spool_path = path.with_extension("samples.jsonl");
                to_json(&path, start)
                    .and_then(|doc| std::fs::write(&path, doc).map_err(write_err(&path, ACTION)))
                    .and_then(|()| {
                        let spool =
                            File::create(&spool_path).map_err(write_err(&spool_path, ACTION))?;
                        writer.spool = Some((spool_path.clone(), spool, 0));
                        Ok(())
                    })
                    .inspect_err(|_| {
                        let _ = std::fs::remove_file(&spool_path);
                    })
            }
        };
        if let Err(e) = started {
            // Nothing was recorded yet: a half-written start is no log.
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        Ok(writer)
    }

    /// Records a finished sample (written at the next flush).
    pub(crate) fn sample(&mut self, sample: EvalSample) -> Result<(), LogError> {
        // Held until the next write: without the room a growing vector keeps spare (up to
        // as much again as it holds).
        let mut body = to_json(&self.path, &sample)?;
        body.shrink_to_fit();
        let mut summary = match self.format {
            LogFormat::Eval => to_json(&self.path, &sample.summary())?,
            LogFormat::Json => Vec::new(),
        };
        summary.shrink_to_fit();
        self.buffered_bytes += body.len() + summary.len();
        self.buffer.push(Buffered {
            entry: format!("samples/{}_epoch_{}.json", sample.id, sample.epoch),
            summary,
            body,
        });
        drop(sample);
        // A full buffer is written once a second has passed since the last write (so that a
        // fast run does not rewrite the zip's directory hundreds of times a second), and at
        // once when a hundred buffers' worth, or MAX_BUFFERED_BYTES, wait.
        let full = self.buffer.len() >= self.buffer_size;
        if full
            && (self.last_flush.elapsed() >= MIN_FLUSH_INTERVAL
                || self.buffer.len() >= 100 * self.buffer_size
                || self.buffered_bytes >= MAX_BUFFERED_BYTES)
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Samples recorded and not yet written to the file.
    pub(crate) fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// The bytes of the samples recorded and not yet written (bodies and summaries).
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buffered_bytes
    }

    /// Removes what was written of the log (and a `.json` log's spool): for a log that must
    /// not be left half made.
    pub(crate) fn discard(mut self) {
        if let Some((spool_path, spool, _)) = self.spool.take() {
            drop(spool);
            let _ = std::fs::remove_file(spool_path);
        }
        let _ = std::fs::remove_file(&self.path);
    }

    /// Writes the buffered samples; when that fails, the file is as it was and the samples
    /// stay buffered.
    pub(crate) fn flush(&mut self) -> Result<(), LogError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let samples = std::mem::take(&mut self.buffer);
        let bytes = std::mem::take(&mut self.buffered_bytes);
        let written = match self.format {
            LogFormat::Eval => self.flush_eval(&samples),
            LogFormat::Json => self.flush_json(&samples),
        };
        if let Err(e) = written {
            self.buffer = samples;
            self.buffered_bytes = bytes;
            return Err(e);
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    fn flush_eval(&mut self, samples: &[Buffered]) -> Result<(), LogError> {
        let action = format!("writing {} samples", samples.len());
        let mut summaries = vec![b'['];
        for (i, s) in samples.iter().enumerate() {
            if i > 0 {
                summaries.push(b',');
            }
            summaries.extend_from_slice(&s.summary);
        }
        summaries.push(b']');
        let mut zip = Append::open(&self.path)?;
        let journal = format!("_journal/summaries/{}.json", self.journals.len() + 1);
        let written = samples
            .iter()
            .try_for_each(|s| zip.entry(&s.entry, &s.body, &action))
            .and_then(|()| zip.entry(&journal, &summaries, &action));
        let added = zip.end(written, &action)?;
        let at = added
            .iter()
            .find_map(|(name, at)| (*name == journal).then_some(*at))
            .ok_or_else(|| format_err(&self.path, format!("{journal} was not written")))?;
        self.journals.push(at);
        Ok(())
    }

    fn flush_json(&mut self, samples: &[Buffered]) -> Result<(), LogError> {
        let Some((spool_path, spool, whole)) = &mut self.spool else {
            return Ok(());
        };
        let action = format!("spooling {} samples", samples.len());
        let mut lines = Vec::new();
        for s in samples {
            lines.extend_from_slice(&s.body);
            lines.push(b'\n');
        }
        let written = spool.write_all(&lines).and_then(|()| spool.flush());
        if let Err(source) = written {
            // Cut the spool back to its last whole line.
            let _ = spool
                .set_len(*whole)
                .and_then(|()| spool.seek(SeekFrom::Start(*whole)).map(drop));
            return Err(write_err(spool_path, action)(source));
        }
        *whole += lines.len() as u64;
        Ok(())
    }

    /// Writes `summaries.json`: the summaries journaled so far as one JSON list, streamed from
    /// the journal entries (read back one at a time from the file, which the new entries do
    /// not reach: they go after the old directory), so that they are never all held at once.
    fn write_summaries(&self, zip: &mut Append, action: &str) -> Result<(), LogError> {
        let mut file = BufReader::new(File::open(&self.path).map_err(io(&self.path))?);
        zip.start("summaries.json", action)?;
        zip.write(b"[", action)?;
        let mut body = Vec::new();
        let mut first = true;
        for (k, at) in self.journals.iter().enumerate() {
            let name = format!("_journal/summaries/{}.json", k + 1);
            file.seek(SeekFrom::Start(*at)).map_err(io(&self.path))?;
            body.clear();
            zip::read::read_zipfile_from_stream(&mut file)
                .map_err(zip_err(&self.path))?
                .ok_or_else(|| format_err(&self.path, format!("{name} is missing")))?
                .read_to_end(&mut body)
                .map_err(io(&self.path))?;
            // Each journal entry is a non-empty list: splice its items.
            let items = body
                .strip_prefix(b"[")
                .and_then(|b| b.strip_suffix(b"]"))
                .ok_or_else(|| format_err(&self.path, format!("{name} is not a list")))?;
            if items.is_empty() {
                continue;
            }
            if !first {
                zip.write(b",", action)?;
            }
            first = false;
            zip.write(items, action)?;
        }
        zip.write(b"]", action)
    }

    /// Writes what is left and the final header. Samples that cannot be written are left
    /// out, and the header then says why (status `error`); a header that cannot be written
    /// leaves the file as it was after the last whole write (a `.eval` log then reads from its
    /// journal, `started`). Either way the first failure is returned.
    pub(crate) fn finish(mut self, header: &EvalLog) -> Result<PathBuf, LogError> {
        let unflushed = self.flush().err();
        let ended = match &unflushed {
            None => self.write_end(header),
            Some(e) => {
                let mut failed = header.clone();
                failed.status = "error".into();
                failed.error = Some(EvalErrorInfo::new(ErrorChain(e).to_string()));
                self.write_end(&failed)
            }
        };
        match (unflushed, ended) {
            (Some(first), _) | (None, Err(first)) => Err(first),
            (None, Ok(())) => Ok(self.path),
        }
    }

    /// Writes the summaries and the header (`.eval`), or the document (`.json`).
    fn write_end(&mut self, header: &EvalLog) -> Result<(), LogError> {
        const ACTION: &str = "finishing the log";
        match self.format {
            LogFormat::Eval => {
                let header = to_json(&self.path, header)?;
                let mut zip = Append::open(&self.path)?;
                let written = self
                    .write_summaries(&mut zip, ACTION)
                    .and_then(|()| zip.entry("header.json", &header, ACTION));
                zip.end(written, ACTION)?;
            }
            LogFormat::Json => {
                let Some((spool_path, spool, _)) = self.spool.take() else {
                    return Ok(());
                };
                drop(spool);
                let mut doc = header.clone();
                doc.samples = None;
                // Assembled beside the log and renamed over it when whole: a failure leaves
                // the log as it was, and the samples in the spool.
                let partial = self.path.with_extension("json.partial");
                let action = format!(
                    "finishing the log (the samples finished so far are in {})",
                    spool_path.display()
                );
                let assembled = assemble(&doc, &spool_path, &partial, &action).and_then(|()| {
                    std::fs::rename(&partial, &self.path)
                        .map_err(write_err(&self.path, action.as_str()))
                });
                if let Err(e) = assembled {
                    let _ = std::fs::remove_file(&partial);
                    return Err(e);
                }
                std::fs::remove_file(&spool_path).map_err(io(&spool_path))?;
            }
        }
        Ok(())
    }
}

/// The path of a new log in `dir`, named as the reference names logs: when it was created,
/// its task and its id.
fn log_path(dir: &Path, start: &EvalLog, format: LogFormat) -> PathBuf {
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
    dir.join(format!("{stamp}_{task}_{short}.{}", format.extension()))
}

/// Writes the `.json` document `doc` with the spooled samples to `out`.
fn assemble(
    doc: &EvalLog,
    spool_path: &Path,
    out_path: &Path,
    action: &str,
) -> Result<(), LogError> {
    let mut head = to_json(out_path, doc)?;
    // `{...}` → `{..., "samples": [<spooled lines>]}`
    head.pop();
    let fail = |e| write_err(out_path, action)(e);
    let mut out = std::io::BufWriter::new(File::create(out_path).map_err(fail)?);
    out.write_all(&head).map_err(fail)?;
    out.write_all(b",\"samples\":[").map_err(fail)?;
    let reader = BufReader::new(File::open(spool_path).map_err(io(spool_path))?);
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(io(spool_path))?;
        if i > 0 {
            out.write_all(b",").map_err(fail)?;
        }
        out.write_all(line.as_bytes()).map_err(fail)?;
    }
    out.write_all(b"]}").map_err(fail)?;
    out.into_inner()
        .map_err(|e| fail(e.into_error()))?
        .sync_all()
        .map_err(fail)
}
