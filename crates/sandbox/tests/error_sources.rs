//! A sandbox error keeps the error behind it as `source()` and says it once; the tool error a
//! model reads still carries the whole chain.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::error::Error as _;

use actuator_sandbox::SandboxError;
use actuator_tool_core::ToolErrorKind;

#[test]
fn unavailable_keeps_its_cause_and_the_model_reads_both() {
    let io = std::io::Error::other("pipe closed");
    let err = SandboxError::unavailable_from("The sandbox could not start a process", io);
    assert_eq!(err.to_string(), "The sandbox could not start a process");
    let source = err.source().unwrap();
    assert_eq!(
        source.downcast_ref::<std::io::Error>().unwrap().to_string(),
        "pipe closed"
    );
    let tool = err.into_tool_error();
    assert_eq!(tool.kind(), ToolErrorKind::SandboxUnavailable);
    assert_eq!(
        tool.message(),
        "The sandbox could not start a process: pipe closed"
    );
    assert!(SandboxError::unavailable("gone").source().is_none());
}

#[test]
fn io_errors_are_said_once() {
    let err = SandboxError::from(std::io::Error::other("disk full"));
    assert_eq!(err.to_string(), "sandbox I/O error");
    assert!(
        err.source()
            .unwrap()
            .downcast_ref::<std::io::Error>()
            .is_some()
    );
    assert_eq!(
        err.into_tool_error().message(),
        "sandbox I/O error: disk full"
    );
}
