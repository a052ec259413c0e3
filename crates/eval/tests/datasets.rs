//! Datasets from files, with the reference's field mapping (errors: `dataset_errors.rs`).

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_eval::{Dataset, FieldSpec, SampleId, SampleInput, Target};
use serde_json::json;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn json_lines_map_fields_and_keep_the_rest_as_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "qa.jsonl",
        r#"{"id": 7, "input": "What is 3 + 4?", "target": "7", "level": "easy"}

{"id": "b", "input": [{"role": "user", "content": "Hi"}], "target": ["hello", "hi"], "choices": ["a", "b"]}
{"input": 42}
"#,
    );
    let ds = Dataset::from_json(&path, &FieldSpec::default()).unwrap();
    assert_eq!(ds.name.as_deref(), Some("qa"));
    assert_eq!(ds.samples.len(), 3);
    let s = &ds.samples[0];
    assert_eq!(s.id, Some(SampleId::Int(7)));
    assert_eq!(s.input, SampleInput::Text("What is 3 + 4?".into()));
    assert_eq!(s.target, Target::One("7".into()));
    assert_eq!(
        s.metadata,
        json!({"level": "easy"}).as_object().unwrap().clone()
    );
    let s = &ds.samples[1];
    assert_eq!(s.id, Some(SampleId::Str("b".into())));
    let SampleInput::Messages(m) = &s.input else {
        panic!("{:?}", s.input)
    };
    assert_eq!(m[0].text(), "Hi");
    assert_eq!(s.target.texts(), vec!["hello", "hi"]);
    assert_eq!(
        s.choices.as_deref(),
        Some(&["a".to_owned(), "b".to_owned()][..])
    );
    // A number is read as its text; a missing target is empty.
    assert_eq!(ds.samples[2].input, SampleInput::Text("42".into()));
    assert_eq!(ds.samples[2].target, Target::default());
}

#[test]
fn a_json_array_and_csv_with_renamed_fields() {
    let dir = tempfile::tempdir().unwrap();
    let spec = FieldSpec::default()
        .input("question")
        .target("answer")
        .id("qid")
        .metadata(["source"]);
    let json_path = write(
        &dir,
        "qa.json",
        r#"[{"qid": "q1", "question": "Capital of France?", "answer": "Paris", "source": "atlas", "noise": 1}]"#,
    );
    let ds = Dataset::from_json(&json_path, &spec).unwrap();
    assert_eq!(ds.samples[0].id, Some(SampleId::Str("q1".into())));
    assert_eq!(
        ds.samples[0].metadata,
        json!({"source": "atlas"}).as_object().unwrap().clone()
    );
    let csv_path = write(
        &dir,
        "qa.csv",
        "qid,question,answer,source\nq1,\"Capital of France, please?\",Paris,atlas\nq2,2+2?,4,\n",
    );
    let ds = Dataset::from_csv(&csv_path, &spec).unwrap();
    assert_eq!(ds.samples.len(), 2);
    assert_eq!(
        ds.samples[0].input,
        SampleInput::Text("Capital of France, please?".into())
    );
    assert_eq!(ds.samples[1].target, Target::One("4".into()));
    assert_eq!(ds.samples[1].metadata["source"], "");
}
