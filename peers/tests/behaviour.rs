//! The behaviour the benchmark's table reports: every framework answers the valid call with
//! `3`; all three tell the model a wrongly typed argument failed; only Actuator rejects an
//! unknown key (rig and rmcp deserialize into a plain struct, which ignores it). If a peer
//! changes, this fails and docs/benchmarks.md needs its table updated.

use actuator_peers::behaviour::{self, Row};
use actuator_peers::{mcp, ours, rig, runtime};

fn rows() -> Vec<Row> {
    runtime()
        .expect("a current-thread runtime")
        .block_on(behaviour::all())
}

fn find<'a>(rows: &'a [Row], framework: &str, case: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.framework == framework && r.case == case)
        .unwrap_or_else(|| panic!("no row for {framework} / {case}"))
}

#[test]
fn every_framework_answers_the_valid_call_with_3() {
    let rows = rows();
    assert_eq!(rows.len(), 9);
    for framework in [ours::FRAMEWORK, rig::FRAMEWORK, mcp::FRAMEWORK] {
        let row = find(&rows, framework, "valid");
        assert!(!row.outcome.is_error, "{row:?}");
        assert_eq!(row.outcome.text, "3", "{row:?}");
    }
}

#[test]
fn a_wrongly_typed_argument_is_an_error_the_model_sees_everywhere() {
    let rows = rows();
    for framework in [ours::FRAMEWORK, rig::FRAMEWORK, mcp::FRAMEWORK] {
        let row = find(&rows, framework, "invalid argument");
        assert!(row.outcome.is_error, "{row:?}");
        assert!(row.outcome.text.contains("three"), "{row:?}");
    }
    let ours = find(&rows, ours::FRAMEWORK, "invalid argument");
    assert!(ours.outcome.text.starts_with("parsing: "), "{ours:?}");
}

#[test]
fn only_actuator_rejects_an_unknown_key() {
    let rows = rows();
    let ours = find(&rows, ours::FRAMEWORK, "unknown key");
    assert!(ours.outcome.is_error, "{ours:?}");
    assert!(ours.outcome.text.contains("'z' was unexpected"), "{ours:?}");
    for framework in [rig::FRAMEWORK, mcp::FRAMEWORK] {
        let row = find(&rows, framework, "unknown key");
        assert!(!row.outcome.is_error, "{row:?}");
        assert_eq!(row.outcome.text, "3", "{row:?}");
    }
}

#[test]
fn the_rmcp_default_handler_answers_as_the_kept_router() {
    let rt = runtime().expect("a current-thread runtime");
    let harness = rt.block_on(async { mcp::Harness::start() });
    for (_, arguments) in behaviour::CASES {
        let params = || mcp::params(arguments).expect("a JSON object");
        let kept = rt.block_on(harness.call(params())).expect("router");
        let default = rt.block_on(harness.call_tool(params())).expect("call_tool");
        assert_eq!(format!("{kept:?}"), format!("{default:?}"), "{arguments}");
    }
}

/// Why rmcp accepts `z`: the schema it advertises for `add`, derived by schemars from a plain
/// struct, does not close the object, so dropping the key agrees with it.
#[test]
fn rmcp_advertises_an_open_object_for_add() {
    let rt = runtime().expect("a current-thread runtime");
    let harness = rt.block_on(async { mcp::Harness::start() });
    let tool = harness.router.get("add").expect("add is routed");
    assert!(
        tool.input_schema.contains_key("properties"),
        "{:?}",
        tool.input_schema
    );
    assert_eq!(
        tool.input_schema.get("additionalProperties"),
        None,
        "{:?}",
        tool.input_schema
    );
}
