//! Each tool's ToolInfo equals the reference's (dumped from inspect_ai 0.3.285 by
//! `fixtures/dump_reference_tools.py`), and is snapshotted with its dialect renderings.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use actuator_dialect::Dialect;
use actuator_tool_core::ToolDef;
use actuator_tools::{
    BashOptions, BashSessionOptions, ShellOptions, ThinkOptions, bash, bash_session, python,
    text_editor, think,
};
use serde_json::{Map, Value, json};

/// The fixture's key for each tool as built here.
fn tools() -> Vec<(&'static str, ToolDef)> {
    vec![
        ("bash", bash(BashOptions::new()).unwrap()),
        (
            "bash_bg",
            bash(BashOptions::new().background(true)).unwrap(),
        ),
        (
            "bash_bg_t",
            bash(
                BashOptions::new()
                    .background(true)
                    .timeout(Duration::from_secs(60)),
            )
            .unwrap(),
        ),
        ("python", python(ShellOptions::new()).unwrap()),
        ("text_editor", text_editor(ShellOptions::new()).unwrap()),
        (
            "bash_session",
            bash_session(BashSessionOptions::new()).unwrap(),
        ),
        ("think", think(ThinkOptions::new()).unwrap()),
    ]
}

#[test]
fn every_tool_matches_the_reference_exactly() {
    let reference: Value =
        serde_json::from_str(include_str!("fixtures/reference_tools.json")).unwrap();
    for (key, tool) in tools() {
        let want = &reference[key];
        assert_eq!(tool.name(), want["name"], "{key}: name");
        assert_eq!(
            tool.description(),
            want["description"],
            "{key}: description"
        );
        assert_eq!(
            tool.parameters().to_value(),
            want["parameters"],
            "{key}: parameters"
        );
        assert_eq!(tool.parallel(), want["parallel"], "{key}: parallel");
        tool.check().unwrap();
    }
}

#[test]
fn think_descriptions_can_be_replaced() {
    let t = think(
        ThinkOptions::new()
            .description("Ponder.")
            .thought_description("What."),
    )
    .unwrap();
    assert_eq!(t.description(), "Ponder.");
    assert_eq!(
        t.parameters().to_value()["properties"]["thought"]["description"],
        json!("What.")
    );
}

#[test]
fn tool_info_and_dialect_snapshots() {
    for (key, tool) in tools() {
        let mut snapshot = Map::new();
        snapshot.insert("info".into(), serde_json::to_value(tool.info()).unwrap());
        snapshot.insert("parallel".into(), json!(tool.parallel()));
        for dialect in Dialect::ALL {
            let rendered = dialect.render(tool.info());
            snapshot.insert(
                format!("{dialect:?}"),
                json!({ "tool": rendered.tool, "report": rendered.report }),
            );
        }
        insta::assert_json_snapshot!(key, Value::Object(snapshot));
    }
}
