//! Malformed dataset files, each written by the test: every error about the content is a
//! `DatasetError::Record` naming the file, the 1-based line and the record, with the cause
//! typed (`RecordError`) and chained as its source.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_tool_core::ErrorChain;
use std::error::Error as _;
use std::path::{Path, PathBuf};

use actuator_eval::{Dataset, DatasetError, FieldSpec, JsonSyntaxError, RecordError, SampleInput};

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The error's file, line, record and cause; its message names the file and the line, and its
/// chain (`ErrorChain`) says what is wrong there, once: the message does not repeat its source.
fn located(err: DatasetError, file: &Path) -> (u64, Option<u64>, RecordError) {
    let own = err.to_string();
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(!own.contains(&cause), "{own} repeats its source {cause}");
    let text = ErrorChain(&err).to_string();
    let DatasetError::Record {
        path,
        line,
        record,
        source,
    } = err
    else {
        panic!("not a record error: {text}");
    };
    assert_eq!(path, file);
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains(&format!(", line {line}")), "{text}");
    if let Some(n) = record {
        assert!(text.contains(&format!("(record {n})")), "{text}");
    }
    (line, record, source)
}

fn json(path: &Path) -> DatasetError {
    Dataset::from_json(path, &FieldSpec::default()).unwrap_err()
}

fn csv(path: &Path) -> DatasetError {
    Dataset::from_csv(path, &FieldSpec::default()).unwrap_err()
}

#[test]
fn a_json_lines_row_that_is_not_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "bad.jsonl",
        b"{\"input\": \"a\"}\n\n{\"input\": \"b\xff\"}\n",
    );
    let err = json(&path);
    assert_eq!(err.line(), Some(3));
    let (line, record, source) = located(err, &path);
    assert_eq!((line, record), (3, Some(2)));
    let RecordError::Utf8(e) = source else {
        panic!("{source:?}")
    };
    // The index is within the line.
    assert_eq!(e.valid_up_to(), 12);
}

#[test]
fn a_json_lines_row_that_is_not_json_names_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "bad.jsonl",
        b"{\"input\": \"ok\"}\r\n{\"input\": ok}\r\n",
    );
    let err = json(&path);
    let text = ErrorChain(&err).to_string();
    let (line, record, source) = located(err, &path);
    assert_eq!((line, record), (2, Some(2)));
    let RecordError::Json { column, .. } = &source else {
        panic!("{source:?}")
    };
    assert_eq!(*column, 11);
    // serde_json's own "at line 1" (the line within the row) is not shown.
    assert!(!text.contains("line 1"), "{text}");
    assert!(text.contains("not valid JSON at column 11"), "{text}");
    // The parser's error is the cause of the cause.
    let cause = source.source().unwrap();
    let syntax = cause.downcast_ref::<JsonSyntaxError>().unwrap();
    assert_eq!(syntax.get().column(), 11);
}

#[test]
fn a_json_lines_row_that_is_not_an_object_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "bad.jsonl", b"\n{\"input\": \"ok\"}\n[1, 2]\n");
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (3, Some(2)));
    assert!(matches!(source, RecordError::NotAnObject), "{source:?}");
}

#[test]
fn a_missing_input_field_names_the_line_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "q.jsonl",
        b"{\"input\": \"a\"}\n{\"question\": \"?\"}\n",
    );
    let err = json(&path);
    assert!(
        ErrorChain(&err)
            .to_string()
            .ends_with("line 2 (record 2): the record has no 'input' field"),
        "{err}"
    );
    let (line, record, source) = located(err, &path);
    assert_eq!((line, record), (2, Some(2)));
    assert!(matches!(source, RecordError::MissingField { field } if field == "input"));

    let path = write(
        &dir,
        "q.json",
        b"[\n  {\"input\": \"a\"},\n  {\n    \"question\": \"?\"\n  }\n]\n",
    );
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (3, Some(2)));
    assert!(matches!(source, RecordError::MissingField { .. }));

    let path = write(&dir, "q.csv", b"question,target\n\"2+2?\",4\n");
    let (line, record, source) = located(csv(&path), &path);
    assert_eq!((line, record), (2, Some(1)));
    assert!(matches!(source, RecordError::MissingField { .. }));
}

#[test]
fn an_input_list_that_is_not_messages_is_a_wrong_type_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "q.json",
        b"[{\"input\": \"a\"},\n\n{\"input\": [1, 2]}]",
    );
    let err = json(&path);
    assert!(
        ErrorChain(&err)
            .to_string()
            .contains("'input' is not a list of messages"),
        "{err}"
    );
    let (line, record, source) = located(err, &path);
    assert_eq!((line, record), (3, Some(2)));
    let RecordError::WrongType { field, source, .. } = source else {
        panic!("{source:?}")
    };
    assert_eq!(field, "input");
    assert!(!source.to_string().is_empty());
}

#[test]
fn a_json_array_names_the_line_of_bad_text_and_of_each_record() {
    let dir = tempfile::tempdir().unwrap();
    // Not JSON: the parser's line, no record.
    let path = write(&dir, "a.json", b"[\n{\"input\": \"a\"},\n{\"input\": }\n]");
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (3, None));
    assert!(
        matches!(source, RecordError::Json { column: 11, .. }),
        "{source:?}"
    );

    // Not UTF-8: the line of the bad byte, the index within that line.
    let path = write(
        &dir,
        "b.json",
        b"[\n{\"input\": \"a\"},\n{\"input\": \"\xc3\x28\"}\n]",
    );
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (3, None));
    let RecordError::Utf8(e) = source else {
        panic!("{source:?}")
    };
    assert_eq!(e.valid_up_to(), 11);

    // An element that is not an object: its own line, found among strings holding newlines
    // escaped and brackets.
    let path = write(
        &dir,
        "c.json",
        b"[{\"input\": \"[a]\\n{b}\"},\n {\"input\": \"x\"},\n\n 3]",
    );
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (4, Some(3)));
    assert!(matches!(source, RecordError::NotAnObject));
}

#[test]
fn a_csv_record_with_the_wrong_number_of_fields_names_its_line_and_record() {
    let dir = tempfile::tempdir().unwrap();
    // Record 2 spans lines 3-5; record 3, on line 6, has one field too many.
    let path = write(
        &dir,
        "q.csv",
        b"input,target\n\"one\",1\n\"two\nlines\n!\",2\n\"three\",3,extra\n",
    );
    let (line, record, source) = located(csv(&path), &path);
    assert_eq!((line, record), (6, Some(3)));
    let RecordError::Csv(e) = source else {
        panic!("{source:?}")
    };
    assert!(matches!(e.kind(), csv::ErrorKind::UnequalLengths { .. }));
}

#[test]
fn a_csv_record_that_is_not_utf8_names_its_line_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "q.csv", b"input,target\n\"one\",1\n\"tw\xffo\",2\n");
    let (line, record, source) = located(csv(&path), &path);
    assert_eq!((line, record), (3, Some(2)));
    let RecordError::Csv(e) = source else {
        panic!("{source:?}")
    };
    assert!(matches!(e.kind(), csv::ErrorKind::Utf8 { .. }));

    // In the header: line 1, no record.
    let path = write(&dir, "h.csv", b"inp\xffut,target\n\"one\",1\n");
    let (line, record, _) = located(csv(&path), &path);
    assert_eq!((line, record), (1, None));
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for err in [
        json(&dir.path().join("nope.jsonl")),
        csv(&dir.path().join("nope.csv")),
    ] {
        assert!(matches!(err, DatasetError::Io { .. }), "{err}");
        assert!(ErrorChain(&err).to_string().contains("nope."), "{err}");
        assert_eq!(err.line(), None);
        assert!(err.source().is_some());
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("a.jsonl", &b"\xEF\xBB\xBF{\"input\": \"q\"}\n"[..]),
        ("b.json", &b"\xEF\xBB\xBF [{\"input\": \"q\"}]"[..]),
    ] {
        let ds = Dataset::from_json(write(&dir, name, bytes), &FieldSpec::default()).unwrap();
        assert_eq!(ds.samples[0].input, SampleInput::Text("q".into()), "{name}");
    }
    let path = write(&dir, "c.csv", b"\xEF\xBB\xBFinput,target\nq,a\n");
    let ds = Dataset::from_csv(&path, &FieldSpec::default()).unwrap();
    assert_eq!(ds.samples[0].input, SampleInput::Text("q".into()));
}

#[test]
fn readers_take_any_reader_and_name_it_in_errors() {
    let spec = FieldSpec::default();
    let ds = Dataset::from_json_reader(&b"{\"input\": \"q\"}"[..], "mem/qa.jsonl", &spec).unwrap();
    assert_eq!(ds.name.as_deref(), Some("qa"));
    assert_eq!(ds.location.as_deref(), Some("mem/qa.jsonl"));
    let err = Dataset::from_csv_reader(&b"input\n\xff\n"[..], "mem/qa.csv", &spec).unwrap_err();
    assert!(
        ErrorChain(&err)
            .to_string()
            .starts_with("Invalid dataset mem/qa.csv, line 2 (record 1): "),
        "{err}"
    );
}

#[test]
fn deeply_nested_json_is_an_error_on_its_line_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let path = write(
        &dir,
        "deep.jsonl",
        format!("{{\"input\": \"a\"}}\n{{\"input\": {deep}}}\n").as_bytes(),
    );
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (2, Some(2)));
    assert!(matches!(source, RecordError::Json { .. }), "{source:?}");

    let path = write(
        &dir,
        "deep.json",
        format!("[{{\"input\": \"a\"}},\n{deep}]").as_bytes(),
    );
    // The element is found (serde_json skips a value without recursing), then reading it
    // stops at serde_json's recursion limit.
    let (line, record, source) = located(json(&path), &path);
    assert_eq!((line, record), (2, Some(2)));
    assert!(matches!(source, RecordError::Json { .. }), "{source:?}");
}
