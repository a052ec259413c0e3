//! `?` on any error in a `#[tool]` body: a body returning `Box<dyn Error + Send + Sync>`
//! propagates an I/O error, a user's `thiserror` type and a `serde_json::Error`, and the model
//! reads each as the reference words it.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::error::Error;

use actuator_tool_core::{ToolContext, ToolDef, ToolError, ToolErrorKind, ToolFailure, ToolOutput};
use actuator_tool_macros::tool;
use serde_json::{Value, json};

type BoxError = Box<dyn Error + Send + Sync>;

fn call(def: &ToolDef, args: Value) -> Result<ToolOutput, ToolFailure> {
    def.validate(&args)?;
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(def.call(args, ToolContext::new("c1", def.name())))
}

/// The recoverable error a call failed with.
fn recoverable(def: &ToolDef, args: Value) -> ToolError {
    match call(def, args) {
        Err(ToolFailure::Recoverable(e)) => e,
        other => panic!("expected a recoverable error, got {other:?}"),
    }
}

#[derive(Debug, thiserror::Error)]
enum LookupError {
    #[error("No user named '{0}'.")]
    NoSuchUser(String),
}

fn lookup(name: &str) -> Result<u32, LookupError> {
    Err(LookupError::NoSuchUser(name.to_owned()))
}

/// Fails the way its argument says.
///
/// # Arguments
/// * `how` - Which error to propagate.
#[tool]
async fn failing(how: String) -> Result<String, BoxError> {
    match how.as_str() {
        "io" => Ok(std::fs::read_to_string("/definitely/not/here")?),
        "user" => Ok(lookup("ada")?.to_string()),
        "json" => Ok(serde_json::from_str::<Value>("{oops")?.to_string()),
        "utf8" => Ok(String::from_utf8(vec![b'a', 0xff])?),
        "tool" => Err(ToolError::new("Try again later."))?,
        _ => Ok("fine".into()),
    }
}

/// A synchronous body (run on the blocking pool) with the same error type.
///
/// # Arguments
/// * `path` - The file.
#[tool]
fn read_sync(path: String) -> Result<String, BoxError> {
    Ok(std::fs::read_to_string(path)?)
}

/// A body whose box is not `Send`.
#[tool]
async fn local_box() -> Result<String, Box<dyn Error>> {
    Ok(lookup("bob")?.to_string())
}

/// `?` on errors inside a body that returns `ToolFailure`.
///
/// # Arguments
/// * `text` - JSON text.
#[tool]
async fn parse_json(text: String) -> Result<String, ToolFailure> {
    let value: Value = serde_json::from_str(&text)?;
    let boxed: BoxError = "not an object".into();
    if !value.is_object() {
        Err(boxed)?;
    }
    Ok(value.to_string())
}

#[test]
fn an_io_error_reads_as_the_io_mapping() {
    let direct = ToolError::from(std::fs::read_to_string("/definitely/not/here").unwrap_err());
    assert_eq!(direct.kind(), ToolErrorKind::FileNotFound);
    assert_eq!(direct.message(), "No such file or directory");
    let e = recoverable(&failing_tool(), json!({"how": "io"}));
    assert_eq!(e, direct);
    let e = recoverable(&read_sync_tool(), json!({"path": "/definitely/not/here"}));
    assert_eq!(e, direct);
}

#[test]
fn a_users_error_is_unknown_with_its_text() {
    let e = recoverable(&failing_tool(), json!({"how": "user"}));
    assert_eq!(e.kind(), ToolErrorKind::Unknown);
    assert_eq!(e.message(), "No user named 'ada'.");
    let e = recoverable(&local_box_tool(), json!({}));
    assert_eq!(
        (e.kind(), e.message()),
        (ToolErrorKind::Unknown, "No user named 'bob'.")
    );
}

#[test]
fn a_json_error_is_unknown_with_serde_jsons_text() {
    let e = recoverable(&failing_tool(), json!({"how": "json"}));
    assert_eq!(e.kind(), ToolErrorKind::Unknown);
    assert_eq!(e.message(), "key must be a string at line 1 column 2");
    let e = recoverable(&parse_json_tool(), json!({"text": "[1,"}));
    assert_eq!(
        (e.kind(), e.message()),
        (
            ToolErrorKind::Unknown,
            "EOF while parsing a value at line 1 column 3"
        )
    );
    let e = recoverable(&parse_json_tool(), json!({"text": "[1]"}));
    assert_eq!(e.message(), "not an object");
}

#[test]
fn a_utf8_error_is_unicode_decode_and_our_own_error_keeps_its_kind() {
    let e = recoverable(&failing_tool(), json!({"how": "utf8"}));
    assert_eq!(e.kind(), ToolErrorKind::UnicodeDecode);
    assert_eq!(
        e.message(),
        "Error decoding bytes to utf-8: invalid start byte"
    );
    let e = recoverable(&failing_tool(), json!({"how": "tool"}));
    assert_eq!(e, ToolError::new("Try again later."));
}
