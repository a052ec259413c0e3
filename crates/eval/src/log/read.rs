//! Reading a log, either format, finished or not.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use zip::ZipArchive;

use crate::error::LogError;
use crate::error::{format_err, io, zip_err};
use crate::log::pool::resolve_events_data;
use crate::log::salvage::started_log;
use crate::log::schema::{EvalLog, EvalSample};

/// Reads a log either format, with its samples in id and epoch order.
///
/// A `.eval` log that was not finished (no `header.json`) is read from its journal: its
/// status is `started` and it has the samples flushed so far. So is one whose writer died
/// part way through a write (no central directory): the samples whole before that write are
/// read, and [`recover_eval_log`](crate::log::recover_eval_log) makes a finished log of them.
pub fn read_eval_log(path: impl AsRef<Path>) -> Result<EvalLog, LogError> {
    let path = path.as_ref();
    let mut samples = Vec::new();
    let mut log = for_each_sample(path, |_, mut sample| {
        resolve_events_data(&mut sample.events, sample.events_data.take());
        samples.push(sample);
        Ok(())
    })?
    .log;
    samples.sort_by(|a, b| (&a.id, a.epoch).cmp(&(&b.id, b.epoch)));
    log.samples = Some(samples);
    Ok(log)
}

/// What [`for_each_sample`] found of a log besides its samples.
pub(crate) struct LogHead {
    /// The header (status `started` for an unfinished `.eval` log), without samples.
    pub(crate) log: EvalLog,
    /// Whether the log was torn (its writer died mid-write): its samples are those whole
    /// before the torn write.
    pub(crate) torn: bool,
}

/// Reads the log `path` (either format, finished, unfinished or torn) and gives its samples
/// to `each` one at a time with the log's header, as the log holds them (model events
/// condensed), in file order: a `.eval` log's samples are never all in memory at once.
pub(crate) fn for_each_sample(
    path: &Path,
    mut each: impl FnMut(&EvalLog, EvalSample) -> Result<(), LogError>,
) -> Result<LogHead, LogError> {
    if path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read(path).map_err(io(path))?;
        let mut log = serde_json::from_slice::<EvalLog>(&text).map_err(|e| format_err(path, e))?;
        drop(text);
        for sample in log.samples.take().unwrap_or_default() {
            each(&log, sample)?;
        }
        // Until its end the document holds the start only; its samples are in the spool.
        let spool = path.with_extension("samples.jsonl");
        if log.status == "started" && spool.exists() {
            let torn = read_spool(&spool, |sample| each(&log, sample))?;
            return Ok(LogHead { log, torn });
        }
        return Ok(LogHead { log, torn: false });
    }
    let file = File::open(path).map_err(io(path))?;
    let Ok(mut zip) = ZipArchive::new(file) else {
        // No central directory: the writer died part way through a write.
        let log = crate::log::salvage::salvage(path, each)?;
        return Ok(LogHead { log, torn: true });
    };
    let log = zip_header(&mut zip, path)?;
    let names: Vec<String> = zip
        .file_names()
        .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
        .map(str::to_owned)
        .collect();
    for name in names {
        let Some(body) = entry(&mut zip, path, &name)? else {
            continue;
        };
        let sample = serde_json::from_slice::<EvalSample>(&body)
            .map_err(|e| format_err(path, format!("{name}: {e}")))?;
        each(&log, sample)?;
    }
    Ok(LogHead { log, torn: false })
}

/// Gives each sample of the spool of an unfinished `.json` log to `each`, one line at a time,
/// up to a line that is not whole (the write the process died in). Whether one was not.
fn read_spool(
    spool: &Path,
    mut each: impl FnMut(EvalSample) -> Result<(), LogError>,
) -> Result<bool, LogError> {
    use std::io::BufRead;
    let reader = std::io::BufReader::new(File::open(spool).map_err(io(spool))?);
    for line in reader.split(b'\n') {
        let line = line.map_err(io(spool))?;
        match serde_json::from_slice::<EvalSample>(&line) {
            Ok(sample) => each(sample)?,
            Err(_) => return Ok(true),
        }
    }
    Ok(false)
}

/// The header of the log `path` without its samples (status `started` when unfinished).
pub(crate) fn read_log_header(path: &Path) -> Result<EvalLog, LogError> {
    if path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read(path).map_err(io(path))?;
        let mut log = serde_json::from_slice::<EvalLog>(&text).map_err(|e| format_err(path, e))?;
        log.samples = None;
        return Ok(log);
    }
    let file = File::open(path).map_err(io(path))?;
    let Ok(mut zip) = ZipArchive::new(file) else {
        // Torn: only its start is of use here.
        return crate::log::salvage::salvage(path, |_, _| Ok(()));
    };
    zip_header(&mut zip, path)
}

/// The body of the entry `name` of the `.eval` log `path`, when it has one.
fn entry(zip: &mut ZipArchive<File>, path: &Path, name: &str) -> Result<Option<Vec<u8>>, LogError> {
    let mut entry = match zip.by_name(name) {
        Ok(e) => e,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(zip_err(path)(e)),
    };
    let mut body = Vec::new();
    entry.read_to_end(&mut body).map_err(io(path))?;
    Ok(Some(body))
}

/// The header of the `.eval` log `path`: its `header.json`, or its start when unfinished.
fn zip_header(zip: &mut ZipArchive<File>, path: &Path) -> Result<EvalLog, LogError> {
    if let Some(body) = entry(zip, path, "header.json")? {
        return serde_json::from_slice::<EvalLog>(&body).map_err(|e| format_err(path, e));
    }
    let body = entry(zip, path, "_journal/start.json")?.ok_or_else(|| {
        format_err(
            path,
            "neither header.json nor _journal/start.json is present",
        )
    })?;
    started_log(path, &body)
}
