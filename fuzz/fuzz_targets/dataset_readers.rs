//! Fuzzes the dataset readers: the input bytes are handed, as a file's contents, to
//! `Dataset::from_json_reader` (JSON Lines or a JSON array) and `Dataset::from_csv_reader`,
//! with the default field mapping and with one that maps other fields. Each read must give a
//! dataset or a typed error, never panic; the invariants are listed in docs/fuzzing.md.

#![no_main]

use std::error::Error as _;

use actuator_eval::{Dataset, DatasetError, FieldSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let specs = [
        FieldSpec::default(),
        FieldSpec::default()
            .input("question")
            .target("answer")
            .id("qid")
            .choices("options")
            .metadata(["source"]),
    ];
    let lines = data.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    for spec in &specs {
        check(
            Dataset::from_json_reader(data, "fuzz/data.jsonl", spec),
            lines,
        );
        check(Dataset::from_csv_reader(data, "fuzz/data.csv", spec), lines);
    }
});

/// A dataset named after the file, or an error about the content that names a line of the
/// input and whose message names the file and that line.
fn check(read: Result<Dataset, DatasetError>, lines: u64) {
    match read {
        Ok(ds) => {
            assert_eq!(ds.name.as_deref(), Some("data"));
            for sample in &ds.samples {
                let _ = sample.input.to_messages();
            }
        }
        Err(err) => {
            let text = err.to_string();
            assert!(text.contains("fuzz/data."), "{text}");
            match &err {
                DatasetError::Record { line, record, .. } => {
                    assert!((1..=lines).contains(line), "line {line} of {lines}: {text}");
                    assert!(text.contains(&format!(", line {line}")), "{text}");
                    assert!(record.is_none_or(|r| r >= 1), "{text}");
                    assert!(err.source().is_some(), "{text}");
                }
                other => panic!("only record errors can come from bytes: {other}"),
            }
        }
    }
}
