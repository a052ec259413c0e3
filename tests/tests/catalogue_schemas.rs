//! Snapshots of every catalogue tool's `ToolInfo` and of its rendering in each provider
//! dialect, with the dialect's report of what it dropped or rewrote.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_dialect::Dialect;
use actuator_tests::all_tools;
use serde_json::{Map, Value, json};

#[test]
fn catalogue_has_at_least_thirty_tools_with_distinct_valid_names() {
    let tools = all_tools();
    assert!(tools.len() >= 30, "catalogue has {} tools", tools.len());
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), tools.len(), "duplicate tool names");
    for tool in &tools {
        tool.check()
            .unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
    }
}

#[test]
fn tool_info_and_dialect_snapshots() {
    for tool in all_tools() {
        let mut snapshot = Map::new();
        snapshot.insert("info".into(), serde_json::to_value(tool.info()).unwrap());
        for dialect in Dialect::ALL {
            let rendered = dialect.render(tool.info());
            snapshot.insert(
                format!("{dialect:?}"),
                json!({ "tool": rendered.tool, "report": rendered.report }),
            );
        }
        insta::assert_json_snapshot!(tool.name().to_owned(), Value::Object(snapshot));
    }
}
