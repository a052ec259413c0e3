//! Every catalogue tool called end to end: validate the model's arguments, deserialize them,
//! run the function, convert the result.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_tests::all_tools;
use actuator_tool_core::{Content, ToolContext, ToolDef, ToolErrorKind, ToolFailure, ToolOutput};
use serde_json::{Value, json};

fn tool(name: &str) -> ToolDef {
    all_tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

async fn run(name: &str, args: Value) -> Result<ToolOutput, ToolFailure> {
    let def = tool(name);
    def.validate(&args)?;
    def.call(args, ToolContext::new("call_1", name)).await
}

async fn text(name: &str, args: Value) -> String {
    match run(name, args.clone()).await {
        Ok(ToolOutput::Text(t)) => t.into(),
        other => panic!("{name}({args}): {other:?}"),
    }
}

async fn parsing_error(name: &str, args: Value) -> String {
    match run(name, args.clone()).await {
        Err(ToolFailure::Recoverable(e)) if e.kind() == ToolErrorKind::Parsing => {
            e.message().to_owned()
        }
        other => panic!("{name}({args}): expected a parsing error, got {other:?}"),
    }
}

#[tokio::test]
async fn scalar_tools() {
    assert_eq!(text("add", json!({"x": 2, "y": 3})).await, "5");
    assert_eq!(text("add", json!({"x": 2.0, "y": 3})).await, "5");
    assert_eq!(
        text("shift_byte", json!({"value": 250, "shift": 10})).await,
        "255"
    );
    assert_eq!(
        text(
            "integer_widths",
            json!({"times": 1, "total": 2, "offset": -3, "index": 4})
        )
        .await,
        "1:2:-3:4"
    );
    assert_eq!(text("scale", json!({"value": 2, "factor": 1.5})).await, "3");
    assert_eq!(text("toggle", json!({"flag": true})).await, "false");
    assert_eq!(text("echo", json!({"text": "héllo"})).await, "héllo");
    assert_eq!(text("classify_char", json!({"ch": "7"})).await, "digit");
    assert!(
        parsing_error("shift_byte", json!({"value": 256, "shift": 0}))
            .await
            .contains("- value: 256 is greater than the maximum of 255")
    );
}

#[tokio::test]
async fn optional_and_default_parameters() {
    assert_eq!(text("greet", json!({})).await, "Hello, world!");
    assert_eq!(
        text("greet", json!({"name": "Ann", "times": 2})).await,
        "Hello, Ann! Hello, Ann!"
    );
    assert_eq!(text("greet", json!({"name": null})).await, "Hello, world!");
    assert_eq!(
        text("search", json!({"query": "q", "limit": 3})).await,
        "q:3:None:0:Fast"
    );
    assert_eq!(
        text(
            "search",
            json!({"query": "q", "limit": 3, "threshold": 0.5, "tags": ["a"], "mode": "exact"})
        )
        .await,
        "q:3:Some(0.5):1:Exact"
    );
    assert_eq!(text("paginate", json!({})).await, "page 1, 20 per page");
    assert_eq!(
        text("paginate", json!({"per_page": 5})).await,
        "page 1, 5 per page"
    );
    assert_eq!(
        parsing_error("search", json!({"limit": 3})).await,
        "Found 1 validation error parsing tool input arguments:\n- query: 'query' is a required property"
    );
}

#[tokio::test]
async fn collections_and_structs() {
    assert_eq!(text("sum", json!({"values": [1, 2.5]})).await, "3.5");
    assert_eq!(
        text("total_counts", json!({"counts": {"a": 2, "b": 3}})).await,
        "5"
    );
    assert_eq!(
        text("render_env", json!({"vars": {"B": "2", "A": "1"}})).await,
        "A=1\nB=2"
    );
    assert_eq!(
        text("distance", json!({"from": [0, 0], "to": [3, 4]})).await,
        "5"
    );
    assert_eq!(
        text("set_mode", json!({"mode": "fuzzy"})).await,
        "mode set to Fuzzy"
    );
    assert_eq!(
        text("area", json!({"shape": {"square": {"side": 2}}})).await,
        "4"
    );
    assert_eq!(text("area", json!({"shape": "point"})).await, "0");
    assert_eq!(
        text(
            "send_event",
            json!({"event": {"type": "click", "x": 1, "y": 2}})
        )
        .await,
        "click at 1,2"
    );
    assert_eq!(text("lookup", json!({"key": 7})).await, "record #7");
    assert_eq!(text("lookup", json!({"key": "ann"})).await, "record ann");
    assert_eq!(
        text(
            "create_user",
            json!({"user": {"name": "Ann", "age": 30, "address": {"street": "s", "city": "Oslo"}}})
        )
        .await,
        "created Ann (30) in Oslo with 0 other addresses"
    );
    assert_eq!(
        text(
            "evaluate",
            json!({"expr": {"add": [{"num": 1}, {"neg": {"num": 3}}]}})
        )
        .await,
        "-2"
    );
    assert_eq!(
        text("list_items", json!({"options": {"pageSize": 10}})).await,
        "10 per page, archived: false, by name"
    );
    assert_eq!(
        text("store", json!({"key": "k", "value": {"a": [1]}})).await,
        r#"k = {"a":[1]}"#
    );
    assert_eq!(
        text("distinct", json!({"labels": ["a", "b", "a"]})).await,
        "2"
    );
    assert_eq!(
        text("average", json!({"readings": [1, null, 2]})).await,
        "1.5"
    );
    assert_eq!(
        text(
            "schedule",
            json!({"at": "2026-11-30T10:00:00Z", "until": "2026-12-31"})
        )
        .await,
        "2026-11-30T10:00:00+00:00 until 2026-12-31"
    );
    assert!(
        parsing_error("schedule", json!({"at": "tomorrow", "until": "2026-12-31"}))
            .await
            .contains("- at: 'tomorrow' is not a 'date-time'")
    );
}

#[tokio::test]
async fn struct_parameter_and_configured_tools() {
    assert_eq!(
        text("search_docs", json!({"query": "q", "limit": 5})).await,
        "q:5:Fast"
    );
    assert!(
        parsing_error("search_docs", json!({"query": "q", "limit": 0}))
            .await
            .contains("- limit: 0 is less than the minimum of 1")
    );
    assert_eq!(text("advance", json!({"step": 2})).await, "count=2");
    // State is kept per configured instance.
    let tools = all_tools();
    let advance = tools.iter().find(|t| t.name() == "advance").unwrap();
    for expected in ["count=1", "count=2"] {
        let out = advance
            .call(json!({"step": 1}), ToolContext::default())
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::Text(expected.into()));
    }
}

#[tokio::test]
async fn return_shapes() {
    assert_eq!(text("word_count", json!({"text": "a b  c"})).await, "3");
    assert_eq!(text("log_message", json!({"message": "m"})).await, "");
    assert_eq!(
        run("render_chart", json!({"title": "t"})).await.unwrap(),
        ToolOutput::Content(vec![Content::image_base64("iVBORw0KGgo=", "image/png")])
    );
    match run("describe_image", json!({"caption": "a cat"}))
        .await
        .unwrap()
    {
        ToolOutput::Content(items) => assert_eq!(items[0], Content::text("a cat")),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        text("stats", json!({"values": [3, 1, 2]})).await,
        r#"{"count":3,"sum":6,"min":1,"max":3}"#
    );
    assert!(!text("now", json!({})).await.is_empty());
    assert_eq!(
        text("divide", json!({"dividend": 6, "divisor": 3})).await,
        "2"
    );
    assert_eq!(text("nap", json!({"millis": 1})).await, "slept 1 ms");
}

#[tokio::test]
async fn tool_errors_reach_the_model() {
    match run("divide", json!({"dividend": 1, "divisor": 0})).await {
        Err(ToolFailure::Recoverable(e)) => {
            assert_eq!(e.kind(), ToolErrorKind::Unknown);
            assert_eq!(e.message(), "Cannot divide by zero.");
        }
        other => panic!("{other:?}"),
    }
    match run("average", json!({"readings": [null]})).await {
        Err(ToolFailure::Recoverable(e)) => assert_eq!(e.message(), "No readings to average."),
        other => panic!("{other:?}"),
    }
    match run("read_file", json!({"path": "/definitely/not/here.txt"})).await {
        Err(ToolFailure::Recoverable(e)) => {
            assert_eq!(e.kind(), ToolErrorKind::FileNotFound);
            assert_eq!(e.message(), "No such file or directory");
        }
        other => panic!("{other:?}"),
    }
}

/// serde also reads internally tagged enums and untagged struct variants from arrays (through
/// its private buffering, which no wrapper can reach), where the schema says object. Validation
/// runs before deserialization, so such arguments never reach serde.
#[tokio::test]
async fn validation_guards_serdes_lenient_forms() {
    for (tool, args) in [
        ("send_event", json!({"event": ["click", 1, 2]})),
        ("send_event", json!({"event": ["key", "a"]})),
        ("list_items", json!({"options": [10]})),
        (
            "create_user",
            json!({"user": ["Ann", 30, ["s", "c", null]]}),
        ),
    ] {
        let msg = parsing_error(tool, args.clone()).await;
        assert!(
            msg.starts_with("Found 1 validation error"),
            "{tool}({args}): {msg}"
        );
    }
}

#[test]
fn options_from_the_attribute() {
    let nap = tool("nap");
    assert!(nap.parallel());
    assert_eq!(nap.max_output(), Some(1024));
    assert_eq!(nap.timeout(), Some(std::time::Duration::from_secs(2)));
    assert!(!tool("add").parallel());
    assert_eq!(tool("add").max_output(), None);
}

#[test]
fn info_is_shared_not_rebuilt() {
    let a = tool("add");
    let b = tool("add");
    assert!(std::sync::Arc::ptr_eq(&a.info_arc(), &b.info_arc()));
}
