//! Fuzzes `parse_tool_call` and the landing of its arguments on a typed tool.
//!
//! The input bytes (lossy UTF-8) are the raw argument text a provider sent. Each input is
//! parsed for three functions — `probe` (a typed tool whose first parameter is an `i64`),
//! `note` (whose first parameter is a `String`) and `missing` (not a known tool) — and, for
//! `probe`, padded with whitespace past the 16 KiB shown in a parse error. Then the arguments
//! are validated against the tool's schema and deserialized parameter by parameter, and the
//! call is rendered. The invariants checked are listed in docs/fuzzing.md.

#![no_main]

use std::fmt::Debug;
use std::future::Future;
use std::sync::LazyLock;
use std::task::{Context, Poll, Waker};

use actuator_dialect::{MAX_SHOWN_ARGUMENT_BYTES, parse_tool_call};
use actuator_model::{DEFAULT_CALL_WIDTH, ToolCall, ToolCallKind, format_function_call};
use actuator_tool_core::{
    MAX_ARGUMENT_DEPTH, ParamsBuilder, ToolArgs, ToolContext, ToolDef, ToolError, ToolErrorKind,
    ToolFailure, ToolInfo, ToolParam, check_nesting_depth,
};
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A struct parameter: integer fields with bounds (`i32`, `u8`), an optional field, and no
/// unknown fields.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Point {
    /// Horizontal.
    x: i32,
    /// Vertical.
    y: u8,
    /// A name for the point.
    name: Option<String>,
}

/// An enum parameter: unit variants (a string enum) and a struct variant (an object).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mode {
    /// Quickly.
    Fast,
    /// Carefully.
    Exact,
    /// Scaled.
    Scaled {
        /// The factor.
        factor: u16,
    },
}

/// The parameters of `probe`, in declaration order (the first receives non-object text).
const PROBE_PARAMS: [&str; 5] = ["count", "label", "weights", "origin", "mode"];

/// Takes every parameter of `probe` as its handler does.
#[allow(clippy::type_complexity)]
fn land_probe(
    args: &mut ToolArgs,
) -> Result<(i64, Option<String>, Vec<f64>, Point, Mode), ToolError> {
    Ok((
        args.required("count")?,
        args.required("label")?,
        args.required("weights")?,
        args.required("origin")?,
        args.required("mode")?,
    ))
}

fn probe_params() -> ParamsBuilder {
    ParamsBuilder::new()
        .param::<i64>("count", Some("How many."))
        .param::<Option<String>>("label", Some("An optional label."))
        .param::<Vec<f64>>("weights", Some("Some weights."))
        .param::<Point>("origin", Some("Where to start."))
        .param::<Mode>("mode", Some("How to run."))
}

/// The typed test tool.
static PROBE: LazyLock<ToolDef> = LazyLock::new(|| {
    ToolDef::builder("probe")
        .description("A tool with typed parameters, for fuzzing.")
        .parameters(probe_params().build())
        .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
            let landed = land_probe(&mut args)?;
            Ok::<_, ToolFailure>(format!("{landed:?}"))
        })
        .build()
        .expect("the probe tool is well defined")
});

/// A tool whose first parameter is a string.
static NOTE: LazyLock<ToolDef> = LazyLock::new(|| {
    ToolDef::builder("note")
        .description("Writes a note.")
        .parameters(
            ParamsBuilder::new()
                .param::<String>("text", Some("The note."))
                .param::<Option<Vec<String>>>("tags", Some("Tags."))
                .build(),
        )
        .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
            let text: String = args.required("text")?;
            let tags: Option<Vec<String>> = args.required("tags")?;
            Ok::<_, ToolFailure>(format!("{text} {tags:?}"))
        })
        .build()
        .expect("the note tool is well defined")
});

/// One single-parameter tool per parameter of `probe`, with that parameter's schema, so that
/// each parameter's validation can be compared with its deserialization on its own.
fn single<T: ToolParam>(name: &str) -> ToolDef {
    ToolDef::builder(format!("probe_{name}"))
        .description("One parameter of probe.")
        .parameters(
            ParamsBuilder::new()
                .param::<T>(name, Some("The parameter."))
                .build(),
        )
        .handler(|_args: ToolArgs, _ctx: ToolContext| async move { Ok::<_, ToolFailure>(()) })
        .build()
        .expect("a single-parameter tool is well defined")
}

static SINGLES: LazyLock<[ToolDef; 5]> = LazyLock::new(|| {
    [
        single::<i64>("count"),
        single::<Option<String>>("label"),
        single::<Vec<f64>>("weights"),
        single::<Point>("origin"),
        single::<Mode>("mode"),
    ]
});

static TOOLS: LazyLock<Vec<ToolInfo>> =
    LazyLock::new(|| vec![PROBE.info().clone(), NOTE.info().clone()]);

const ERROR_PREFIX: &str = "Error parsing the following tool call arguments:\n\n";
const DETAILS_SEPARATOR: &str = "\n\nError details: ";
const DEPTH_DETAILS: &str = "arguments exceed the maximum supported nesting depth of 100";
/// Whitespace that `str::trim` removes, of 1, 2 and 3 bytes in UTF-8.
const PADDING: [char; 4] = [' ', '\u{85}', '\u{2003}', '\u{3000}'];

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data);
    let probe_call = check_parse(&raw, "probe");
    if probe_call.parse_error.is_some() && data.len().is_multiple_of(4) {
        check_padded(&raw, data.len() / 4, &probe_call);
    }
    check_landing(&probe_call);
    check_render(&probe_call);

    let note_call = check_parse(&raw, "note");
    if note_call.parse_error.is_none() {
        let arguments = note_call
            .arguments
            .to_value()
            .expect("parsed arguments read back");
        if NOTE.validate(&arguments).is_ok() {
            let result = poll_ready(NOTE.call(arguments, ToolContext::new("c", "note")));
            assert!(
                result.is_ok(),
                "note: valid arguments fail to land: {result:?}"
            );
        }
    }
    check_render(&note_call);

    let missing = check_parse(&raw, "missing");
    check_render(&missing);

    // No arguments at all.
    let none = parse_tool_call("c", "probe", None, &TOOLS);
    assert!(none.arguments.is_empty() && none.parse_error.is_none());
});

/// Parses `raw` as the arguments of `function` and checks the parse invariants.
fn check_parse(raw: &str, function: &str) -> ToolCall {
    let call = parse_tool_call("call-1", function, Some(raw), &TOOLS);
    assert_eq!(call.id, "call-1");
    assert_eq!(call.function, function);
    assert_eq!(call.kind, ToolCallKind::Function);
    assert!(call.view.is_none());

    let text = raw.trim();
    let direct = serde_json::from_str::<Value>(text);
    match &call.parse_error {
        Some(message) => {
            assert!(
                text.starts_with('{'),
                "only text starting with `{{` can fail to parse: {raw:?}"
            );
            assert!(
                call.arguments.is_empty(),
                "a parse error leaves no arguments"
            );
            // An object the direct parse accepts, nested at most 100 deep, must not fail.
            if let Ok(v @ Value::Object(_)) = &direct {
                assert!(
                    check_nesting_depth(v).is_err(),
                    "a valid object within the depth limit gave a parse error: {message}"
                );
            }
            let mut expected_details = vec![DEPTH_DETAILS.to_owned()];
            if let Err(e) = &direct {
                expected_details.push(e.to_string());
            }
            check_error_message(raw, message, &expected_details);
        }
        None => {
            let arguments = call
                .arguments
                .to_value()
                .expect("parsed arguments read back");
            assert!(
                check_nesting_depth(&arguments).is_ok(),
                "parse_error is None but the arguments nest deeper than {MAX_ARGUMENT_DEPTH}: \
                 function {function}, raw {raw:?}"
            );
            if text.starts_with('{') {
                // The arguments are the first JSON value of the text (an object), followed by
                // nothing or only by stray quotes and whitespace.
                let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
                match stream.next() {
                    Some(Ok(Value::Object(map))) => {
                        assert_eq!(
                            map,
                            call.arguments.to_map().expect("parsed arguments read back"),
                            "arguments differ from the JSON text"
                        );
                        let rest = &text[stream.byte_offset()..];
                        assert!(
                            rest.chars().all(|c| c == '"' || c.is_whitespace()),
                            "accepted trailing text {rest:?}"
                        );
                    }
                    other => {
                        panic!("accepted {raw:?}, which does not start with an object: {other:?}")
                    }
                }
            } else if text.is_empty() {
                assert!(call.arguments.is_empty());
            } else {
                let first = TOOLS
                    .iter()
                    .find(|t| t.name == function)
                    .and_then(|t| t.parameters.properties.keys().next());
                match first {
                    None => assert!(
                        call.arguments.is_empty(),
                        "text landed on a tool without parameters or an unknown tool"
                    ),
                    Some(param) => {
                        let arguments =
                            call.arguments.to_map().expect("parsed arguments read back");
                        assert_eq!(arguments.len(), 1);
                        let expected = match direct {
                            Ok(v) if check_nesting_depth(&v).is_ok() => v,
                            _ => Value::String(text.to_owned()),
                        };
                        assert_eq!(arguments[param.as_str()], expected);
                    }
                }
            }
        }
    }
    call
}

/// Checks a parse error message: the prefix, the raw text (middle-truncated beyond 16 KiB) and
/// details that are one of `expected_details`.
fn check_error_message(raw: &str, message: &str, expected_details: &[String]) {
    let body = message
        .strip_prefix(ERROR_PREFIX)
        .unwrap_or_else(|| panic!("parse error without the prefix: {message:?}"));
    let (shown, details) = body
        .rsplit_once(DETAILS_SEPARATOR)
        .unwrap_or_else(|| panic!("parse error without details: {message:?}"));
    assert!(
        expected_details.iter().any(|d| d == details),
        "unexpected details {details:?}, expected one of {expected_details:?}"
    );
    if raw.len() <= MAX_SHOWN_ARGUMENT_BYTES {
        assert_eq!(shown, raw, "short arguments are shown whole");
        return;
    }
    let note = format!("\n\n(arguments middle-truncated from {} bytes)", raw.len());
    let kept = shown
        .strip_suffix(&note)
        .unwrap_or_else(|| panic!("long arguments without the truncation note"))
        .as_bytes();
    let half = MAX_SHOWN_ARGUMENT_BYTES / 2;
    // Cuts move to char boundaries: at most 3 bytes lost on each side.
    assert!(
        kept.len() <= MAX_SHOWN_ARGUMENT_BYTES && kept.len() >= MAX_SHOWN_ARGUMENT_BYTES - 6,
        "kept {} bytes",
        kept.len()
    );
    let raw = raw.as_bytes();
    assert_eq!(
        kept[..half - 3],
        raw[..half - 3],
        "the head is the start of the text"
    );
    assert_eq!(
        kept[kept.len() - (half - 3)..],
        raw[raw.len() - (half - 3)..],
        "the tail is the end of the text"
    );
    assert!(
        message.len() - details.len() <= 17 * 1024,
        "parse error of {} bytes",
        message.len()
    );
}

/// Whitespace around the text changes nothing but the shown text: padding `raw` past 16 KiB
/// (with 1-, 2- or 3-byte whitespace so the cuts fall inside characters) gives the same
/// arguments and the same error details, and a middle-truncated message. Run only for inputs
/// that give a parse error (the only ones whose text is shown) and only for one length in
/// four: each padded parse scans 16 KiB, the largest cost of an input. `selector` picks the
/// padding character and how many go in front, so the cuts fall at varying offsets.
fn check_padded(raw: &str, selector: usize, plain: &ToolCall) {
    let pad = PADDING[selector % PADDING.len()];
    let front = selector / PADDING.len() % 8;
    let mut padded = String::with_capacity(MAX_SHOWN_ARGUMENT_BYTES + raw.len() + 16);
    padded.extend(std::iter::repeat_n(pad, front));
    padded.push_str(raw);
    while padded.len() <= MAX_SHOWN_ARGUMENT_BYTES {
        padded.push(pad);
    }
    let call = check_parse(&padded, "probe");
    assert_eq!(
        call.arguments, plain.arguments,
        "padding changed the arguments"
    );
    let details = |c: &ToolCall| {
        c.parse_error
            .as_deref()
            .and_then(|m| m.rsplit_once(DETAILS_SEPARATOR))
            .map(|(_, d)| d.to_owned())
    };
    assert_eq!(
        details(&call),
        details(plain),
        "padding changed the parse outcome"
    );
}

/// Validation and deserialization of `probe`'s arguments agree.
fn check_landing(call: &ToolCall) {
    if call.parse_error.is_some() {
        return;
    }
    let arguments = call
        .arguments
        .to_value()
        .expect("parsed arguments read back");
    let validation = PROBE.validate(&arguments);
    if let Err(e) = &validation {
        assert_eq!(e.kind(), ToolErrorKind::Parsing, "{e:?}");
        let m = e.message();
        assert!(
            m.starts_with("Found ") && m.contains(" parsing tool input arguments:\n- ")
                || m.starts_with("Error parsing tool call arguments: "),
            "unexpected validation message {m:?}"
        );
    }

    // Parameter by parameter: what the parameter's schema accepts, its type deserializes; a
    // missing parameter is rejected by the schema exactly when its type rejects it.
    let singles = &*SINGLES;
    let map = arguments.as_object().expect("the arguments are an object");
    check_param::<i64>(&singles[0], map, "count");
    check_param::<Option<String>>(&singles[1], map, "label");
    check_param::<Vec<f64>>(&singles[2], map, "weights");
    check_param::<Point>(&singles[3], map, "origin");
    check_param::<Mode>(&singles[4], map, "mode");

    // The whole call: arguments the schema accepts all land, with nothing left over.
    let mut args = ToolArgs::from_value(arguments.clone()).expect("an object is arguments");
    let landed = land_probe(&mut args);
    if validation.is_ok() {
        assert!(
            landed.is_ok(),
            "valid arguments fail to land: {landed:?}\n{arguments}"
        );
        assert!(
            args.as_map().is_empty(),
            "valid arguments left {:?} over",
            args.as_map()
        );
        assert!(
            map.keys().all(|k| PROBE_PARAMS.contains(&k.as_str())),
            "the schema accepted unknown arguments"
        );
    }
    // The handler, run as an executor runs it.
    let result = poll_ready(PROBE.call(arguments, ToolContext::new("call-1", "probe")));
    if validation.is_ok() {
        assert!(
            result.is_ok(),
            "valid arguments fail in the handler: {result:?}"
        );
    } else if let Err(ToolFailure::Recoverable(e)) = &result {
        assert_eq!(e.kind(), ToolErrorKind::Parsing);
    }
}

/// Compares one parameter's validation (by a tool with only that parameter) with its
/// deserialization by `ToolArgs::required`.
fn check_param<T: DeserializeOwned + Debug>(
    single: &ToolDef,
    map: &Map<String, Value>,
    name: &str,
) {
    let mut args = ToolArgs::new(map.clone());
    let taken = args.required::<T>(name);
    match map.get(name) {
        Some(value) => {
            let alone = Value::Object(Map::from_iter([(name.to_owned(), value.clone())]));
            if let Err(e) = &taken {
                assert_eq!(e.kind(), ToolErrorKind::Parsing);
                assert!(
                    e.message()
                        .starts_with(&format!("Unable to convert argument '{name}")),
                    "{e:?}"
                );
            }
            if let Ok(()) = single.validate(&alone) {
                assert!(
                    taken.is_ok(),
                    "the schema accepts {name}={value} but deserializing it fails: {:?}",
                    taken.err()
                );
            }
        }
        None => {
            let validation = single.validate(&Value::Object(Map::new()));
            assert_eq!(
                validation.is_ok(),
                taken.is_ok(),
                "missing {name}: validation {validation:?}, deserialization {taken:?}"
            );
            if let Err(e) = &taken {
                assert_eq!(
                    e.message(),
                    format!("Required parameter {name} not provided to tool call.")
                );
            }
        }
    }
}

/// Rendering never panics and picks one of its two layouts.
fn check_render(call: &ToolCall) {
    let function = &call.function;
    let arguments = call.arguments.to_map().expect("parsed arguments read back");
    let rendered = call.render();
    assert_eq!(
        rendered,
        format_function_call(function, &arguments, DEFAULT_CALL_WIDTH)
    );
    let one_line = format_function_call(function, &arguments, usize::MAX);
    let stacked = format_function_call(function, &arguments, 0);
    if call.arguments.is_empty() {
        assert_eq!(one_line, format!("{function}()"));
        assert_eq!(stacked, one_line);
        assert_eq!(rendered, one_line);
        return;
    }
    let n = arguments.len();
    assert!(one_line.starts_with(&format!("{function}(")) && one_line.ends_with(')'));
    assert!(stacked.starts_with(&format!("{function}(\n    ")) && stacked.ends_with("\n)"));
    // Same parts, joined by ", " or ",\n    ", inside "(" ")" or "(\n    " "\n)".
    assert_eq!(stacked.len(), one_line.len() + 4 * n + 2);
    let fits = one_line.chars().count() < DEFAULT_CALL_WIDTH;
    assert_eq!(rendered, if fits { one_line } else { stacked });
}

/// Polls a future that must be ready at once (handlers here never wait).
fn poll_ready<T>(mut future: std::pin::Pin<Box<dyn Future<Output = T> + Send>>) -> T {
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a handler that never waits returned Pending"),
    }
}
