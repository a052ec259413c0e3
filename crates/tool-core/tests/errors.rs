//! Error kinds, exact messages, and the io::Error mapping.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::io;

use actuator_tool_core::{
    FatalToolError, IoErrorExt, ToolError, ToolErrorKind, ToolFailure, format_limit,
};

#[test]
fn kinds_serialize_as_reference_names() {
    let kinds = [
        (ToolErrorKind::Parsing, "parsing"),
        (ToolErrorKind::Timeout, "timeout"),
        (ToolErrorKind::UnicodeDecode, "unicode_decode"),
        (ToolErrorKind::Permission, "permission"),
        (ToolErrorKind::FileNotFound, "file_not_found"),
        (ToolErrorKind::IsADirectory, "is_a_directory"),
        (ToolErrorKind::Limit, "limit"),
        (ToolErrorKind::Approval, "approval"),
        (ToolErrorKind::Cancelled, "cancelled"),
        (ToolErrorKind::SandboxUnavailable, "sandbox_unavailable"),
        (ToolErrorKind::Unknown, "unknown"),
    ];
    for (kind, name) in kinds {
        assert_eq!(kind.as_str(), name);
        assert_eq!(serde_json::to_value(kind).unwrap(), name);
        let back: ToolErrorKind = serde_json::from_value(name.into()).unwrap();
        assert_eq!(back, kind);
    }
}

#[test]
fn exact_messages() {
    let cases = [
        (
            ToolError::timeout(),
            ToolErrorKind::Timeout,
            "Command timed out before completing.",
        ),
        (
            ToolError::unicode_decode("utf-8", "invalid start byte"),
            ToolErrorKind::UnicodeDecode,
            "Error decoding bytes to utf-8: invalid start byte",
        ),
        (
            ToolError::embedded_null_byte("bash"),
            ToolErrorKind::Parsing,
            "An argument to tool 'bash' contained an embedded null byte.",
        ),
        (
            ToolError::sandbox_unavailable("No sandbox."),
            ToolErrorKind::SandboxUnavailable,
            "No sandbox.",
        ),
        (
            ToolError::permission("Permission denied", Some("/etc/x")),
            ToolErrorKind::Permission,
            "Permission denied. Filename '/etc/x'.",
        ),
        (
            ToolError::permission("denied", None),
            ToolErrorKind::Permission,
            "denied.",
        ),
        (
            ToolError::file_not_found("No such file or directory", Some("/x")),
            ToolErrorKind::FileNotFound,
            "File '/x' was not found.",
        ),
        (
            ToolError::file_not_found("No such file or directory", None),
            ToolErrorKind::FileNotFound,
            "No such file or directory",
        ),
        (
            ToolError::is_a_directory("Is a directory", Some("/tmp")),
            ToolErrorKind::IsADirectory,
            "Is a directory. Filename '/tmp'.",
        ),
        (
            ToolError::is_a_directory("dir!", None),
            ToolErrorKind::IsADirectory,
            "dir!.",
        ),
        (
            ToolError::output_limit(1024, None),
            ToolErrorKind::Limit,
            "The tool exceeded its output limit of 1,024.",
        ),
        (
            ToolError::limit("message", 10_u64),
            ToolErrorKind::Limit,
            "The tool exceeded its message limit of 10.",
        ),
        (
            ToolError::limit("time", 60.5),
            ToolErrorKind::Limit,
            "The tool exceeded its time limit of 60.50.",
        ),
        (
            // Time and cost keep two decimals even when whole; counts are integers.
            ToolError::limit("time", std::time::Duration::from_secs(60)),
            ToolErrorKind::Limit,
            "The tool exceeded its time limit of 60.00.",
        ),
        (
            ToolError::limit("token", 12_000_usize),
            ToolErrorKind::Limit,
            "The tool exceeded its token limit of 12,000.",
        ),
        (ToolError::parsing("bad"), ToolErrorKind::Parsing, "bad"),
        (
            ToolError::approval(None),
            ToolErrorKind::Approval,
            "Tool call not approved.",
        ),
        (
            ToolError::approval(Some("No.")),
            ToolErrorKind::Approval,
            "No.",
        ),
        (
            ToolError::cancelled("stop"),
            ToolErrorKind::Cancelled,
            "stop",
        ),
        (ToolError::new("oops"), ToolErrorKind::Unknown, "oops"),
    ];
    for (err, kind, message) in cases {
        assert_eq!(err.kind(), kind, "{message}");
        assert_eq!(err.message(), message);
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn limits_format_like_the_reference() {
    assert_eq!(format_limit(1_000_000.0), "1,000,000");
    assert_eq!(format_limit(5.0), "5");
    assert_eq!(format_limit(60.0 + 1.0 / 3.0), "60.33");
    assert_eq!(format_limit(1234.5), "1,234.50");
    assert_eq!(format_limit(-1234.0), "-1,234");
}

#[test]
fn timeout_keeps_partial_output() {
    let err = ToolError::timeout().with_output("partial");
    assert_eq!(err.output(), Some("partial"));
    assert_eq!(err.message(), "Command timed out before completing.");
}

#[test]
fn io_errors_map_to_kinds() {
    let e: ToolError = io::Error::from(io::ErrorKind::NotFound).into();
    assert_eq!(e.kind(), ToolErrorKind::FileNotFound);
    assert_eq!(e.message(), "entity not found");

    let e: ToolError = io::Error::from(io::ErrorKind::PermissionDenied).into();
    assert_eq!(e.kind(), ToolErrorKind::Permission);
    assert_eq!(e.message(), "permission denied.");

    let e: ToolError = io::Error::from(io::ErrorKind::IsADirectory).into();
    assert_eq!(e.kind(), ToolErrorKind::IsADirectory);

    let e: ToolError = io::Error::from(io::ErrorKind::TimedOut).into();
    assert_eq!(e.kind(), ToolErrorKind::Timeout);
    assert_eq!(e.message(), "Command timed out before completing.");

    let utf8 = String::from_utf8(vec![b'a', 0xff]).unwrap_err();
    let e: ToolError = io::Error::new(io::ErrorKind::InvalidData, utf8).into();
    assert_eq!(e.kind(), ToolErrorKind::UnicodeDecode);
    assert_eq!(
        e.message(),
        "Error decoding bytes to utf-8: invalid start byte"
    );

    let truncated = String::from_utf8(vec![b'a', 0xe2, 0x82]).unwrap_err();
    let e: ToolError = io::Error::new(io::ErrorKind::InvalidData, truncated).into();
    assert_eq!(
        e.message(),
        "Error decoding bytes to utf-8: unexpected end of data"
    );

    let e: ToolError = io::Error::other("disk on fire").into();
    assert_eq!(e.kind(), ToolErrorKind::Unknown);
    assert_eq!(e.message(), "disk on fire");
}

#[test]
fn real_filesystem_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("actuator-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.txt");
    let err = std::fs::read_to_string(&missing)
        .with_path(&missing)
        .unwrap_err();
    let e = ToolError::from(err);
    assert_eq!(e.kind(), ToolErrorKind::FileNotFound);
    assert_eq!(
        e.message(),
        format!("File '{}' was not found.", missing.display())
    );

    let err = std::fs::read_to_string(&dir).with_path(&dir).unwrap_err();
    let e = ToolError::from(err);
    assert_eq!(e.kind(), ToolErrorKind::IsADirectory);
    assert_eq!(
        e.message(),
        format!("Is a directory. Filename '{}'.", dir.display())
    );

    // read_to_string's own UTF-8 check reports InvalidData.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, [0xff, 0xfe]).unwrap();
    let e = ToolError::from(std::fs::read_to_string(&bad).unwrap_err());
    assert_eq!(e.kind(), ToolErrorKind::UnicodeDecode);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn body(fail: Option<bool>) -> Result<&'static str, ToolFailure> {
    match fail {
        Some(true) => Err(FatalToolError::msg("fatal"))?,
        Some(false) => Err(ToolError::new("recoverable"))?,
        None => {
            std::fs::read("/definitely/not/here")?;
            Ok("unreachable")
        }
    }
}

#[test]
fn question_mark_chooses_the_path() {
    assert!(!body(Some(true)).unwrap_err().is_recoverable());
    assert!(body(Some(false)).unwrap_err().is_recoverable());
    match body(None).unwrap_err() {
        ToolFailure::Recoverable(e) => assert_eq!(e.kind(), ToolErrorKind::FileNotFound),
        other => panic!("expected recoverable, got {other:?}"),
    }
    assert!(FatalToolError::panic("boom").is_panic());
}

#[test]
fn python_literals_match_the_reference_repr() {
    // Expected text printed by CPython 3.11's repr() for the same values.
    let value = serde_json::json!([
        1e-5,
        1e16,
        123456789.0,
        0.1,
        -0.0,
        1e-4,
        9999999999999998.0,
        "a\\b",
        "\u{1}",
        "é",
        "say \"hi\" it's",
        1.5e-7,
        2.5e20
    ]);
    assert_eq!(
        actuator_tool_core::python_literal(&value),
        r#"[1e-05, 1e+16, 123456789.0, 0.1, -0.0, 0.0001, 9999999999999998.0, 'a\\b', '\x01', 'é', 'say "hi" it\'s', 1.5e-07, 2.5e+20]"#
    );
}

/// A boxed error converts by what it holds; a fatal one stays fatal.
#[test]
fn boxed_errors_convert_by_what_they_hold() {
    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    let recoverable = |failure: ToolFailure| match failure {
        ToolFailure::Recoverable(e) => e,
        other => panic!("{other:?}"),
    };
    let io: BoxError = Box::new(io::Error::from(io::ErrorKind::PermissionDenied));
    let e = recoverable(io.into());
    assert_eq!(e.kind(), ToolErrorKind::Permission);
    assert_eq!(
        e,
        ToolError::from(io::Error::from(io::ErrorKind::PermissionDenied))
    );

    let fatal: BoxError = Box::new(FatalToolError::msg("database is down"));
    let failure = ToolFailure::from(fatal);
    assert!(!failure.is_recoverable());
    assert_eq!(failure.to_string(), "database is down");

    let text: BoxError = "just text".into();
    assert_eq!(recoverable(text.into()), ToolError::new("just text"));

    let cut = String::from_utf8(vec![b'a', 0xe2, 0x82]).unwrap_err();
    let utf8: BoxError = Box::new(cut);
    assert_eq!(
        recoverable(utf8.into()),
        ToolError::unicode_decode("utf-8", "unexpected end of data")
    );

    let local: Box<dyn std::error::Error> = Box::new(ToolError::timeout());
    assert_eq!(recoverable(local.into()), ToolError::timeout());
}

/// `?` on a `serde_json::Error` in a body returning `ToolFailure`: `unknown` with its text.
#[test]
fn a_json_error_converts_with_its_text() {
    fn body() -> Result<serde_json::Value, ToolFailure> {
        Ok(serde_json::from_str("nope")?)
    }
    match body().unwrap_err() {
        ToolFailure::Recoverable(e) => {
            assert_eq!(e.kind(), ToolErrorKind::Unknown);
            assert_eq!(e.message(), "expected ident at line 1 column 2");
        }
        other => panic!("{other:?}"),
    }
}
