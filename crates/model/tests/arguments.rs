//! A tool call's arguments are kept as JSON text: what goes in comes out, equality is that of
//! the objects, and anything that is not an object is refused with a clear error.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_model::{ToolArguments, ToolCall};
use serde_json::{Value, json};

fn map(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn text_from_a_map_is_compact_and_keeps_key_order() {
    let mut args = ToolArguments::from(map(json!({"b": 1, "a": [true, null], "c": {"d": "e"}})));
    assert!(args.keeps_parsed());
    args.release_parsed();
    assert_eq!(args.as_json(), r#"{"b":1,"a":[true,null],"c":{"d":"e"}}"#);
    assert_eq!(
        args.to_map().unwrap().keys().collect::<Vec<_>>(),
        ["b", "a", "c"]
    );
    assert_eq!(args.get("c"), Some(json!({"d": "e"})));
    assert_eq!(args.get("missing"), None);
}

#[test]
fn model_text_is_kept_as_given_once_it_is_an_object() {
    let text = r#"{ "x": 1,  "y": "two" }"#;
    let args = ToolArguments::from_json(text).unwrap();
    assert_eq!(args.as_json(), text);
    assert_eq!(args.to_string(), text);
    assert_eq!(args.to_value().unwrap(), json!({"x": 1, "y": "two"}));
}

#[test]
fn what_is_not_an_object_is_refused() {
    for bad in [
        "[1, 2]",
        "3",
        "\"s\"",
        "null",
        "{\"x\": ",
        "",
        "{\"x\": 1e400}",
    ] {
        let err = ToolArguments::from_json(bad).unwrap_err();
        assert!(
            actuator_tool_core::ErrorChain(&err)
                .to_string()
                .starts_with("tool call arguments must be a JSON object: "),
            "{bad}: {err}"
        );
        // The parser's error is the cause, not repeated in the message.
        assert!(
            std::error::Error::source(&err)
                .unwrap()
                .is::<serde_json::Error>()
        );
    }
    let mut deep = "1".to_owned();
    for _ in 0..200 {
        deep = format!("[{deep}]");
    }
    assert!(ToolArguments::from_json(&format!("{{\"x\": {deep}}}")).is_err());
}

#[test]
fn equality_is_of_the_objects() {
    let a = ToolArguments::from_json(r#"{"x": 1, "y": 2}"#).unwrap();
    let b = ToolArguments::from_json(r#"{"y":2,"x":1}"#).unwrap();
    let c = ToolArguments::from_json(r#"{"x": 1, "y": 3}"#).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(ToolArguments::new(), ToolArguments::default());
    assert_eq!(
        ToolArguments::new(),
        ToolArguments::from_json("{ }").unwrap()
    );
    assert!(ToolArguments::new().is_empty());
    assert!(!a.is_empty());
}

#[test]
fn serialized_as_the_object_and_read_back_from_one() {
    let call = ToolCall::new("c1", "add", json!({"x": 1, "y": 2}));
    let written = serde_json::to_value(&call).unwrap();
    assert_eq!(written["arguments"], json!({"x": 1, "y": 2}));
    let read: ToolCall = serde_json::from_value(written).unwrap();
    assert_eq!(read, call);
    assert_eq!(read.arguments.as_json(), r#"{"x":1,"y":2}"#);
    // What is read back keeps the text alone: a log of many calls is not parsed twice over.
    assert!(!read.arguments.keeps_parsed());
    assert!(!ToolArguments::from_map(&map(json!({"x": 1}))).keeps_parsed());
    // A missing `arguments` is no arguments; a non-object is an error naming the field type.
    let bare: ToolCall = serde_json::from_value(json!({"id": "c", "function": "f"})).unwrap();
    assert!(bare.arguments.is_empty());
    let err =
        serde_json::from_value::<ToolCall>(json!({"id": "c", "function": "f", "arguments": [1]}))
            .unwrap_err();
    assert!(err.to_string().contains("invalid type"), "{err}");
}

#[test]
fn deserialized_into_a_type_straight_from_the_text() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Add {
        x: i64,
        y: i64,
    }
    let args = ToolArguments::from_json(r#"{"x": 4, "y": 5}"#).unwrap();
    assert_eq!(args.deserialize::<Add>().unwrap(), Add { x: 4, y: 5 });
    assert!(ToolArguments::new().deserialize::<Add>().is_err());
}

#[test]
fn a_map_nested_past_the_parser_limit_is_kept_and_reported_when_read() {
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let mut call = ToolCall::new("c", "f", json!({"d": deep}));
    // Fresh, the call reads from the object it keeps.
    assert!(call.arguments.keeps_parsed());
    assert!(call.arguments.to_map().is_ok());
    // Released, the text is all there is, and it does not parse back.
    call.arguments.release_parsed();
    assert!(call.arguments.to_map().is_err());
    assert!(call.arguments.get("d").is_none());
    // Rendering shows the text rather than failing.
    assert!(
        call.render().starts_with("f({\"d\":[[[["),
        "{}",
        call.render()
    );
    assert!(serde_json::to_string(&call).is_err());
}

#[test]
fn calls_built_from_non_objects_have_no_arguments() {
    assert!(ToolCall::new("c", "f", json!([1])).arguments.is_empty());
    assert!(ToolCall::new("c", "f", Value::Null).arguments.is_empty());
}

#[test]
fn empty_arguments_read_as_an_empty_object_however_they_were_made() {
    let empty = Value::Object(serde_json::Map::new());
    for args in [
        ToolArguments::new(),
        ToolArguments::from_json("{}").unwrap(),
        ToolArguments::from(serde_json::Map::new()),
        ToolCall::new("c", "f", json!({})).arguments,
    ] {
        assert_eq!(*args.to_shared_value().unwrap(), empty);
        assert_eq!(args.to_value().unwrap(), empty);
    }
    // Text that is empty only once parsed still reads as such.
    let spaced = ToolArguments::from_json("{ }").unwrap();
    assert_eq!(*spaced.to_shared_value().unwrap(), empty);
}
