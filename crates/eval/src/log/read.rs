//! Reading a log, either format, finished or not.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use zip::ZipArchive;

use crate::error::LogError;
use crate::error::{format_err, io, zip_err};
use crate::log::pool::resolve_events_data;
use crate::log::schema::{EvalLog, EvalSample};

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
        for sample in samples.iter_mut() {
            resolve_events_data(&mut sample.events, sample.events_data.take());
        }
        samples.sort_by(|a, b| (&a.id, a.epoch).cmp(&(&b.id, b.epoch)));
    }
    Ok(log)
}
