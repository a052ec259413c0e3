//! Reading datasets from JSON Lines, JSON and CSV, from a file or any reader. Every error about
//! the content names the file and the 1-based line (and the record): a
//! [`DatasetError::Record`].

use std::io::Read;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{DatasetError, JsonSyntaxError, RecordError};
use crate::sample::{Dataset, FieldSpec};

/// One record of a file: its 1-based line and record number, and its fields.
struct Located {
    line: u64,
    record: u64,
    fields: Map<String, Value>,
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl Dataset {
    /// Reads a JSON Lines file (one object per line, blank lines skipped) or a JSON file
    /// holding an array of objects (when its first non-blank character is `[`), mapping fields
    /// with `spec`. The dataset is named after the file's stem.
    ///
    /// An error about the content ([`DatasetError::Record`]) names the file, the 1-based line
    /// and the record: text that is not UTF-8 or not JSON, a record that is not an object, a
    /// missing input field, an input list that is not messages.
    pub fn from_json(path: impl AsRef<Path>, spec: &FieldSpec) -> Result<Self, DatasetError> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| DatasetError::io(path, e))?;
        Self::from_json_reader(file, path, spec)
    }

    /// [`from_json`](Self::from_json) on the bytes of `reader` (read to its end): `path`
    /// names the source in errors and gives the dataset its name and location. A leading
    /// UTF-8 byte-order mark is skipped.
    ///
    /// ```
    /// use actuator_eval::{Dataset, DatasetError, FieldSpec};
    /// let text = "{\"input\": \"2 + 2?\", \"target\": \"4\"}\n{\"question\": \"?\"}\n";
    /// let err = Dataset::from_json_reader(text.as_bytes(), "qa.jsonl", &FieldSpec::default())
    ///     .unwrap_err();
    /// assert!(matches!(err, DatasetError::Record { line: 2, record: Some(2), .. }), "{err}");
    /// // The message says where; its source says what is wrong there.
    /// assert_eq!(err.to_string(), "Invalid dataset qa.jsonl, line 2 (record 2)");
    /// assert_eq!(
    ///     actuator_tool_core::ErrorChain(&err).to_string(),
    ///     "Invalid dataset qa.jsonl, line 2 (record 2): the record has no 'input' field"
    /// );
    /// ```
    pub fn from_json_reader(
        mut reader: impl Read,
        path: impl AsRef<Path>,
        spec: &FieldSpec,
    ) -> Result<Self, DatasetError> {
        let path = path.as_ref();
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| DatasetError::io(path, e))?;
        let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(&bytes);
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let records = if first == Some(&b'[') {
            json_array(bytes, path)?
        } else {
            json_lines(bytes, path)?
        };
        Self::from_records(path, records, spec)
    }

    /// Reads a CSV file with a header row, mapping columns with `spec` (every value is text).
    /// Every row must have as many fields as the header. An error about the content names the
    /// file, the line the record starts on, and the record's number after the header.
    pub fn from_csv(path: impl AsRef<Path>, spec: &FieldSpec) -> Result<Self, DatasetError> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| DatasetError::io(path, e))?;
        Self::from_csv_reader(file, path, spec)
    }

    /// [`from_csv`](Self::from_csv) on the bytes of `reader`: `path` names the source in
    /// errors and gives the dataset its name and location.
    ///
    /// ```
    /// use actuator_eval::{Dataset, DatasetError, FieldSpec};
    /// let text = "input,target\n\"2 + 2?\",4\n\"3 + 3?\",6,extra\n";
    /// let err = Dataset::from_csv_reader(text.as_bytes(), "qa.csv", &FieldSpec::default())
    ///     .unwrap_err();
    /// assert!(matches!(err, DatasetError::Record { line: 3, record: Some(2), .. }), "{err}");
    /// ```
    pub fn from_csv_reader(
        reader: impl Read,
        path: impl AsRef<Path>,
        spec: &FieldSpec,
    ) -> Result<Self, DatasetError> {
        let path = path.as_ref();
        let mut reader = csv::Reader::from_reader(reader);
        let headers = reader
            .headers()
            .map_err(|e| csv_error(path, e, None))?
            .clone();
        let mut records = Vec::new();
        let mut row = csv::StringRecord::new();
        loop {
            let number = records.len() as u64 + 1;
            match reader.read_record(&mut row) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(csv_error(path, e, Some(number))),
            }
            let line = row.position().map_or(1, csv::Position::line);
            let fields = headers
                .iter()
                .zip(row.iter())
                .map(|(h, v)| (h.to_owned(), Value::String(v.to_owned())))
                .collect();
            records.push(Located {
                line,
                record: number,
                fields,
            });
        }
        Self::from_records(path, records, spec)
    }

    fn from_records(
        path: &Path,
        records: Vec<Located>,
        spec: &FieldSpec,
    ) -> Result<Self, DatasetError> {
        let samples = records
            .iter()
            .map(|r| {
                spec.to_sample(&r.fields)
                    .map_err(|e| DatasetError::record(path, r.line, Some(r.record), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Dataset {
            name: path.file_stem().map(|s| s.to_string_lossy().into_owned()),
            location: Some(path.display().to_string()),
            samples,
        })
    }
}

/// One object per line; blank lines (ASCII whitespace only) are skipped. A line may end with
/// `\r\n`.
fn json_lines(bytes: &[u8], path: &Path) -> Result<Vec<Located>, DatasetError> {
    let mut records = Vec::new();
    for (line, text) in (1u64..).zip(bytes.split(|b| *b == b'\n')) {
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let record = records.len() as u64 + 1;
        let fail = |source| DatasetError::record(path, line, Some(record), source);
        let text = std::str::from_utf8(text).map_err(|e| fail(RecordError::Utf8(e)))?;
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(fields)) => records.push(Located {
                line,
                record,
                fields,
            }),
            Ok(_) => return Err(fail(RecordError::NotAnObject)),
            Err(source) => return Err(fail(json_error(source))),
        }
    }
    Ok(records)
}

/// A JSON array of objects; each record's line is where its value starts.
fn json_array(bytes: &[u8], path: &Path) -> Result<Vec<Located>, DatasetError> {
    let text = std::str::from_utf8(bytes).map_err(|e| utf8_error(bytes, e, path))?;
    let all: Vec<&RawValue> = serde_json::from_str(text).map_err(|source| {
        let line = u64::try_from(source.line()).unwrap_or(u64::MAX).max(1);
        DatasetError::record(path, line, None, json_error(source))
    })?;
    let mut records = Vec::with_capacity(all.len());
    let (mut line, mut counted) = (1u64, 0usize);
    for (record, raw) in (1u64..).zip(all) {
        // Every element is a slice of `text`: its address tells where it starts.
        let start = raw
            .get()
            .as_ptr()
            .addr()
            .saturating_sub(text.as_ptr().addr());
        let before = text.as_bytes().get(counted..start).unwrap_or_default();
        line += before.iter().filter(|b| **b == b'\n').count() as u64;
        counted = counted.max(start);
        match serde_json::from_str::<Value>(raw.get()) {
            Ok(Value::Object(fields)) => records.push(Located {
                line,
                record,
                fields,
            }),
            Ok(_) => {
                return Err(DatasetError::record(
                    path,
                    line,
                    Some(record),
                    RecordError::NotAnObject,
                ));
            }
            Err(source) => {
                return Err(DatasetError::record(
                    path,
                    line,
                    Some(record),
                    json_error(source),
                ));
            }
        }
    }
    Ok(records)
}

fn json_error(source: serde_json::Error) -> RecordError {
    RecordError::Json {
        column: u64::try_from(source.column()).unwrap_or(u64::MAX),
        source: JsonSyntaxError::new(source),
    }
}

/// Invalid UTF-8 in a whole file: the error names its line, and the error's index is within
/// that line.
fn utf8_error(bytes: &[u8], e: std::str::Utf8Error, path: &Path) -> DatasetError {
    let bad = e.valid_up_to();
    let start = bytes[..bad]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let end = bytes[bad..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |i| bad + i);
    let line = bytes[..start].iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let within = std::str::from_utf8(&bytes[start..end]).err().unwrap_or(e);
    DatasetError::record(path, line, None, RecordError::Utf8(within))
}

/// A CSV error: an I/O error as [`DatasetError::Io`], anything else at the line the csv
/// reader reports (the record's first line).
fn csv_error(path: &Path, e: csv::Error, record: Option<u64>) -> DatasetError {
    let line = e.position().map_or(1, csv::Position::line);
    if e.is_io_error() {
        let io = match e.into_kind() {
            csv::ErrorKind::Io(io) => io,
            other => std::io::Error::other(format!("{other:?}")),
        };
        return DatasetError::io(path, io);
    }
    DatasetError::record(path, line, record, RecordError::Csv(e))
}
