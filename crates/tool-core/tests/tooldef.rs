//! ToolDef: building by hand, D6 checks, D7 names, D12 overrides, calls, ToolChoice, outputs.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use actuator_tool_core::{
    Content, IntoToolOutput, Json, ToolArgs, ToolCallView, ToolChoice, ToolContext, ToolDef,
    ToolDefError, ToolErrorKind, ToolFailure, ToolOutput, ToolParams, validate_tool_name,
};
use serde_json::{Map, Value, json};

fn params(schema: Value) -> ToolParams {
    ToolParams::from_value(&schema).unwrap()
}

fn xy_params() -> ToolParams {
    params(json!({
        "type": "object",
        "properties": {
            "x": {"type": "integer", "description": "First addend."},
            "y": {"type": "integer", "description": "Second addend."}
        },
        "required": ["x", "y"]
    }))
}

fn add_tool() -> ToolDef {
    ToolDef::builder("add")
        .description("Add two integers.")
        .parameters(xy_params())
        .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
            let x: i64 = args.required("x")?;
            let y: i64 = args.required("y")?;
            Ok::<_, ToolFailure>(x + y)
        })
        .build()
        .unwrap()
}

#[test]
fn tool_params_serialize_in_reference_order() {
    let p = xy_params();
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"type":"object","properties":{"x":{"type":"integer","description":"First addend."},"y":{"type":"integer","description":"Second addend."}},"required":["x","y"],"additionalProperties":false}"#
    );
    let empty = ToolParams::default();
    assert_eq!(
        serde_json::to_string(&empty).unwrap(),
        r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#
    );
    let back: ToolParams = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
}

#[test]
fn tool_params_reject_malformed_schemas() {
    assert!(ToolParams::from_value(&json!({"type": "string"})).is_err());
    assert!(ToolParams::from_value(&json!({"properties": [1]})).is_err());
    let err = ToolParams::from_value(&json!({"properties": {}, "required": ["nope"]})).unwrap_err();
    assert!(err.to_string().contains("'nope'"), "{err}");
}

#[test]
fn names_are_checked() {
    for good in ["a", "read_file", "A-1", &"x".repeat(64)] {
        assert!(validate_tool_name(good).is_ok(), "{good}");
    }
    for bad in ["", "read file", "ünï", "a.b", &"x".repeat(65)] {
        let err = validate_tool_name(bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Invalid tool name '{bad}': a tool name must be 1 to 64 characters from [a-zA-Z0-9_-]."
            )
        );
    }
    let err = ToolDef::builder("bad name")
        .description("d")
        .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
        .build()
        .unwrap_err();
    assert!(matches!(err, ToolDefError::InvalidName { .. }));
    assert!(add_tool().with_name("no spaces").is_err());
}

#[test]
fn hand_built_tools_need_descriptions() {
    let handler = |_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") };
    let err = ToolDef::builder("p").handler(handler).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Description not provided for tool function 'p'"
    );

    let undocumented = params(json!({
        "properties": {"x": {"type": "integer", "description": "x"}, "y": {"type": "integer"}},
        "required": ["x", "y"]
    }));
    let err = ToolDef::builder("p")
        .description("Adds.")
        .parameters(undocumented.clone())
        .handler(handler)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Description not provided for parameter 'y' of function 'p'."
    );

    // Supplying the missing description fixes it.
    assert!(
        ToolDef::builder("p")
            .description("Adds.")
            .parameters(undocumented)
            .param_description("y", "Second.")
            .handler(handler)
            .build()
            .is_ok()
    );

    let err = ToolDef::builder("p")
        .description("Adds.")
        .parameters(xy_params())
        .param_description("z", "nope")
        .handler(handler)
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "'z' is not a valid parameter for the target function."
    );

    let err = ToolDef::builder("p").description("d").build().unwrap_err();
    assert!(matches!(err, ToolDefError::MissingHandler { .. }));
}

#[test]
fn overrides_return_new_defs_and_leave_the_original() {
    let original = add_tool();
    let renamed = original.with_name("plus").unwrap();
    let redescribed = original.with_description("Sum.").unwrap();
    let param = original.with_param_description("x", "Left.").unwrap();
    let parallel = original.with_parallel(true);
    let limited = original.with_max_output(Some(0));
    let timed = original.with_timeout(Some(Duration::from_secs(3)));
    let viewed = original.with_viewer(|_f: &str, _a: &Map<String, Value>| ToolCallView::default());
    let opts = original.with_options(Some(Map::from_iter([("k".into(), json!(1))])));

    assert_eq!(original.name(), "add");
    assert_eq!(original.description(), "Add two integers.");
    assert_eq!(
        original.parameters().properties["x"]["description"],
        "First addend."
    );
    assert!(!original.parallel());
    assert_eq!(original.max_output(), None);
    assert_eq!(original.timeout(), None);
    assert!(original.viewer().is_none());
    assert!(original.options().is_none());

    assert_eq!(renamed.name(), "plus");
    assert_eq!(redescribed.description(), "Sum.");
    assert_eq!(param.parameters().properties["x"]["description"], "Left.");
    assert!(parallel.parallel());
    assert_eq!(limited.max_output(), Some(0));
    assert_eq!(timed.timeout(), Some(Duration::from_secs(3)));
    assert!(viewed.viewer().is_some());
    assert_eq!(opts.options().unwrap()["k"], 1);
    // Independent overrides: setting parallel keeps the viewer (D12).
    let both = viewed.with_parallel(true);
    assert!(both.viewer().is_some() && both.parallel());

    let err = original.with_param_description("z", "nope").unwrap_err();
    assert_eq!(
        err.to_string(),
        "'z' is not a valid parameter for the target function."
    );
    assert!(original.with_description("  ").is_err());
}

#[tokio::test]
async fn a_call_validates_deserializes_and_converts() {
    let add = add_tool();
    let args = json!({"x": 2, "y": 3});
    add.validate(&args).unwrap();
    let out = add.call(args, ToolContext::new("c1", "add")).await.unwrap();
    assert_eq!(out, ToolOutput::Text("5".into()));

    // Integral floats land on integer parameters (D14).
    let out = add
        .call(json!({"x": 2.0, "y": 3}), ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out, ToolOutput::Text("5".into()));

    // Missing required parameter (validation bypassed): the reference's message.
    let err = add
        .call(json!({"x": 2}), ToolContext::default())
        .await
        .unwrap_err();
    match err {
        ToolFailure::Recoverable(e) => {
            assert_eq!(e.kind(), ToolErrorKind::Parsing);
            assert_eq!(
                e.message(),
                "Required parameter y not provided to tool call."
            );
        }
        other => panic!("{other:?}"),
    }

    // Any other serde failure is a parsing error naming the parameter (D8).
    let err = add
        .call(json!({"x": 2, "y": "three"}), ToolContext::default())
        .await
        .unwrap_err();
    match err {
        ToolFailure::Recoverable(e) => {
            assert_eq!(e.kind(), ToolErrorKind::Parsing);
            assert!(
                e.message()
                    .starts_with("Unable to convert argument 'y' to i64: "),
                "{}",
                e.message()
            );
        }
        other => panic!("{other:?}"),
    }

    // Arguments that are not an object.
    let err = add
        .call(json!([1, 2]), ToolContext::default())
        .await
        .unwrap_err();
    assert!(err.is_recoverable());
}

#[test]
fn deserialization_handles_nested_paths_and_defaults() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Filter {
        tags: Vec<String>,
    }
    let mut args = ToolArgs::from_value(json!({"f": {"tags": ["a", 1]}})).unwrap();
    let err = args.required::<Filter>("f").unwrap_err();
    assert!(
        err.message()
            .starts_with("Unable to convert argument 'f.tags[1]' to Filter: "),
        "{}",
        err.message()
    );

    let mut args = ToolArgs::from_value(json!({"n": null})).unwrap();
    assert_eq!(args.optional::<i32>("n").unwrap(), None);
    assert_eq!(
        args.or_default::<Vec<u8>>("missing").unwrap(),
        Vec::<u8>::new()
    );

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Search {
        query: String,
        limit: u32,
    }
    let s: Search = ToolArgs::from_value(json!({"query": "q", "limit": 5.0}))
        .unwrap()
        .into_struct()
        .unwrap();
    assert_eq!(
        s,
        Search {
            query: "q".into(),
            limit: 5
        }
    );
    let err = ToolArgs::from_value(json!({"limit": 5}))
        .unwrap()
        .into_struct::<Search>()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Required parameter query not provided to tool call."
    );
    let err = ToolArgs::from_value(json!({"query": 1, "limit": 5}))
        .unwrap()
        .into_struct::<Search>()
        .unwrap_err();
    assert!(
        err.message()
            .starts_with("Unable to convert argument 'query': "),
        "{}",
        err.message()
    );
}

#[test]
fn tool_choice_serializes() {
    for (choice, text) in [
        (ToolChoice::Auto, r#""auto""#),
        (ToolChoice::Any, r#""any""#),
        (ToolChoice::None, r#""none""#),
        (ToolChoice::function("add"), r#"{"name":"add"}"#),
    ] {
        assert_eq!(serde_json::to_string(&choice).unwrap(), text);
        let back: ToolChoice = serde_json::from_str(text).unwrap();
        assert_eq!(back, choice);
    }
    assert!(serde_json::from_str::<ToolChoice>(r#""sometimes""#).is_err());
}

#[test]
fn a_short_text_result_is_kept_inline() {
    // A number, a word, a short line: no allocation on the call's way to its message.
    for output in [
        3_i64.into_tool_output().unwrap(),
        (-12.5_f64).into_tool_output().unwrap(),
        "done".into_tool_output().unwrap(),
        String::from("a short line of text")
            .into_tool_output()
            .unwrap(),
    ] {
        let ToolOutput::Text(t) = output else {
            panic!("{output:?}")
        };
        assert!(!t.is_heap_allocated(), "{t:?} is on the heap");
    }
    let long = "x".repeat(100).into_tool_output().unwrap();
    assert_eq!(long, ToolOutput::Text("x".repeat(100).into()));
}

#[test]
fn outputs_convert_per_d1() {
    let text = |v: ToolOutput| match v {
        ToolOutput::Text(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(text("s".into_tool_output().unwrap()), "s");
    assert_eq!(text(String::from("s").into_tool_output().unwrap()), "s");
    assert_eq!(text(3_i64.into_tool_output().unwrap()), "3");
    assert_eq!(text(2.5_f64.into_tool_output().unwrap()), "2.5");
    // Floats are written as `Display` writes them (not as `ryu` would: "3.0").
    assert_eq!(text(3.0_f64.into_tool_output().unwrap()), "3");
    assert_eq!(text(true.into_tool_output().unwrap()), "true");
    assert_eq!(text(().into_tool_output().unwrap()), "");
    assert_eq!(
        text(json!({"a": 1, "b": [1, "x"]}).into_tool_output().unwrap()),
        r#"{"a":1,"b":[1,"x"]}"#
    );
    assert_eq!(
        text(Json(("a", 1)).into_tool_output().unwrap()),
        r#"["a",1]"#
    );
    assert_eq!(
        Content::text("t").into_tool_output().unwrap(),
        ToolOutput::Content(vec![Content::text("t")])
    );
    let items = vec![
        Content::text("a"),
        Content::image_url("https://x/y.png", "image/png"),
    ];
    assert_eq!(
        items.clone().into_tool_output().unwrap(),
        ToolOutput::Content(items)
    );

    // A map with non-string keys cannot be JSON: a fatal error, not a panic.
    let bad = std::collections::HashMap::from([((1, 2), 3)]);
    assert!(!Json(bad).into_tool_output().unwrap_err().is_recoverable());
}

#[test]
fn content_round_trips() {
    let items = vec![
        Content::text("hello"),
        Content::image_base64("aGk=", "image/png"),
        Content::image_url("https://x/y.png", "image/png"),
    ];
    let json = serde_json::to_value(&items).unwrap();
    assert_eq!(json[0], json!({"type": "text", "text": "hello"}));
    assert_eq!(json[1]["type"], "image");
    let back: Vec<Content> = serde_json::from_value(json).unwrap();
    assert_eq!(back, items);
}

#[test]
fn check_reports_bad_definitions() {
    assert!(add_tool().check().is_ok());
}

#[test]
fn with_parameters_replaces_the_schema_within_the_functions_parameters() {
    let add = add_tool();
    let narrowed = add
        .with_parameters(params(json!({
            "properties": {
                "x": {"type": "integer", "minimum": 0, "description": "First addend, at least 0."},
                "y": {"type": "integer", "description": "Second addend."}
            },
            "required": ["x", "y"]
        })))
        .unwrap();
    assert_eq!(
        narrowed.parameters().properties["x"]["description"],
        "First addend, at least 0."
    );
    assert!(narrowed.validate(&json!({"x": -1, "y": 2})).is_err());
    assert!(
        add.validate(&json!({"x": -1, "y": 2})).is_ok(),
        "the original is unchanged"
    );

    let unknown = add
        .with_parameters(params(json!({
            "properties": {"z": {"type": "integer", "description": "Z."}},
            "required": []
        })))
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "'z' is not a valid parameter for the target function."
    );
    let dropped = add
        .with_parameters(params(json!({
            "properties": {"x": {"type": "integer", "description": "X."}},
            "required": ["x"]
        })))
        .unwrap_err();
    assert_eq!(
        dropped.to_string(),
        "Parameter 'y' of tool 'add' is required by its function, so the new parameters must keep it, and keep it required."
    );
    let undescribed = add
        .with_parameters(params(json!({
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"]
        })))
        .unwrap_err();
    assert!(
        undescribed
            .to_string()
            .starts_with("Description not provided for parameter")
    );
}

#[test]
fn integer_results_read_as_display_writes_them() {
    fn text(output: impl IntoToolOutput) -> String {
        match output.into_tool_output() {
            Ok(ToolOutput::Text(t)) => t.into(),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(text(0i64), "0");
    assert_eq!(text(-1i32), "-1");
    assert_eq!(text(i8::MIN), i8::MIN.to_string());
    assert_eq!(text(i64::MIN), i64::MIN.to_string());
    assert_eq!(text(u64::MAX), u64::MAX.to_string());
    assert_eq!(text(i128::MIN), i128::MIN.to_string());
    assert_eq!(text(u128::MAX), u128::MAX.to_string());
    assert_eq!(text(usize::MAX), usize::MAX.to_string());
    assert_eq!(text(1.5f64), "1.5");
    assert_eq!(text(true), "true");
}
