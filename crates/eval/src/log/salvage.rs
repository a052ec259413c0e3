//! Reading what a `.eval` log holds when its writer died part way through a write.
//!
//! The writer appends each flush's entries over the old central directory and writes the new
//! one after them (see `zip_append`): a process killed in between leaves a file whose entries
//! from offset 0 are whole up to the torn flush, and no directory. The entries are read here
//! in file order from their local headers, each checked (its CRC, and a sample's JSON), up to
//! the first one that is not whole: everything flushed before the crash, nothing torn.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use serde_json::Value;

use crate::error::{LogError, format_err, io};
use crate::log::schema::{EvalLog, EvalSample};

/// The most one entry may hold once inflated: a bound on what a damaged or hostile file can
/// make a reader allocate (far above any sample the writer produces).
const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// Reads the whole entries of the `.eval` file `path` in order, giving each sample to
/// `sample` with the log's start as it is read (so that no more than one is held at once), and
/// stops at the first entry that is not whole (a torn write) or at the central directory (a
/// whole file). Returns the log's start (status `started`).
///
/// # Errors
///
/// The file cannot be opened, it does not start with a whole start of a log, or `sample`
/// fails.
pub(crate) fn salvage(
    path: &Path,
    mut sample: impl FnMut(&EvalLog, EvalSample) -> Result<(), LogError>,
) -> Result<EvalLog, LogError> {
    let mut reader = BufReader::new(File::open(path).map_err(io(path))?);
    let mut start = None;
    while let Some((name, body)) = next_entry(&mut reader) {
        if name == "_journal/start.json" {
            start = Some(started_log(path, &body)?);
            continue;
        }
        let Some(start) = &start else { break };
        if name.starts_with("samples/") && name.ends_with(".json") {
            // A torn entry can read as whole and empty (its sizes were never written back):
            // its body, not its CRC, says so.
            match serde_json::from_slice::<EvalSample>(&body) {
                Ok(s) => sample(start, s)?,
                Err(_) => break,
            }
        } else if serde_json::from_slice::<serde_json::Value>(&body).is_err() {
            break;
        }
    }
    start.ok_or_else(|| {
        format_err(
            path,
            "it has no whole _journal/start.json, so nothing of it can be read",
        )
    })
}

/// The next entry's name and inflated body, or `None` at the directory or at the first entry
/// that does not read whole (cut short, a wrong CRC, too large).
fn next_entry(reader: &mut BufReader<File>) -> Option<(String, Vec<u8>)> {
    let mut entry = zip::read::read_zipfile_from_stream(reader).ok()??;
    let name = entry.name().to_owned();
    let mut body = Vec::new();
    // The CRC is checked when the reader reaches the entry's end.
    let read = (&mut entry)
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut body)
        .ok()?;
    (read as u64 <= MAX_ENTRY_BYTES).then_some((name, body))
}

/// The header of an unfinished `.eval` log from its `_journal/start.json` body: status
/// `started`, no results, empty times.
pub(crate) fn started_log(path: &Path, body: &[u8]) -> Result<EvalLog, LogError> {
    let mut start: serde_json::Map<String, Value> =
        serde_json::from_slice(body).map_err(|e| format_err(path, e))?;
    start.insert("status".into(), "started".into());
    start.insert(
        "stats".into(),
        serde_json::json!({"started_at": "", "completed_at": ""}),
    );
    serde_json::from_value::<EvalLog>(Value::Object(start)).map_err(|e| format_err(path, e))
}
