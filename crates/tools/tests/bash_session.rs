//! bash_session in a confined sandbox: a persistent shell per instance, the actions, their
//! argument errors, interrupt and restart.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use actuator_tool_core::ToolErrorKind;
use actuator_tools::{BashSessionOptions, bash_session};
use common::{err, handle, ok};
use serde_json::json;

fn tool(instance: Option<&str>) -> actuator_tool_core::ToolDef {
    let mut options = BashSessionOptions::new().wait_for_output(Duration::from_secs(5));
    if let Some(i) = instance {
        options = options.instance(i);
    }
    bash_session(options).unwrap()
}

/// Sends `input` and reads until the output contains `marker` (at most 10 calls).
async fn until(
    h: &actuator_sandbox::SandboxHandle,
    t: &actuator_tool_core::ToolDef,
    input: &str,
    marker: &str,
) -> String {
    let mut out = ok(h, t, json!({"action": "type_submit", "input": input})).await;
    for _ in 0..10 {
        if out.contains(marker) {
            return out;
        }
        out.push_str(&ok(h, t, json!({"action": "read"})).await);
    }
    panic!("never saw {marker:?} in {out:?}");
}

#[tokio::test]
async fn state_persists_between_calls() {
    let Some((h, _)) = handle() else { return };
    let t = tool(None);
    until(&h, &t, "export GREETING=persisted; cd /tmp", "$ ").await;
    let out = until(&h, &t, "echo \"$GREETING in $(pwd)\"", "persisted in /tmp").await;
    assert!(out.contains("persisted in /tmp"), "{out}");
}

#[tokio::test]
async fn type_without_return_then_submit_the_rest() {
    let Some((h, _)) = handle() else { return };
    let t = tool(None);
    ok(&h, &t, json!({"action": "type", "input": "echo hel"})).await;
    let out = until(&h, &t, "lo-world", "hello-world").await;
    assert!(out.contains("hello-world"), "{out}");
}

#[tokio::test]
async fn interrupt_stops_the_running_command() {
    let Some((h, _)) = handle() else { return };
    let t = tool(None);
    ok(
        &h,
        &t,
        json!({"action": "type_submit", "input": "sleep 60; echo not-interrupted"}),
    )
    .await;
    let out = ok(&h, &t, json!({"action": "interrupt"})).await;
    let out = out + &until(&h, &t, "echo after-interrupt", "after-interrupt").await;
    assert!(out.contains("^C"), "{out:?}");
    assert!(!out.contains("not-interrupted\r\n"), "{out:?}");
}

#[tokio::test]
async fn restart_gives_a_fresh_shell() {
    let Some((h, _)) = handle() else { return };
    let t = tool(None);
    until(&h, &t, "export KEPT=yes", "$ ").await;
    let out = ok(&h, &t, json!({"action": "restart"})).await;
    assert_eq!(out, "shell restarted successfully");
    let out = until(&h, &t, "echo \"kept=${KEPT:-no}\"", "kept=").await;
    assert!(out.contains("kept=no"), "{out}");
}

#[tokio::test]
async fn instances_have_their_own_shells() {
    let Some((h, _)) = handle() else { return };
    let a = tool(Some("a"));
    let b = tool(Some("b"));
    until(&h, &a, "export WHO=a", "$ ").await;
    let out = until(&h, &b, "echo \"who=${WHO:-none}\"", "who=").await;
    assert!(out.contains("who=none"), "{out}");
}

#[tokio::test]
async fn argument_errors_are_the_references() {
    let Some((h, _)) = handle() else { return };
    let t = tool(None);
    let e = err(&h, &t, json!({"action": "type"})).await;
    assert_eq!(
        (e.kind(), e.message()),
        (
            ToolErrorKind::Parsing,
            "'input' is required for 'type' action."
        )
    );
    for action in ["restart", "read", "interrupt"] {
        let e = err(&h, &t, json!({"action": action, "input": "x"})).await;
        assert_eq!(
            e.message(),
            format!("Do not provide 'input' with '{action}' action.")
        );
    }
    let e = err(&h, &t, json!({"action": "jump"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Parsing);
}

#[tokio::test]
async fn a_read_with_nothing_new_waits_then_returns_empty() {
    let Some((h, _)) = handle() else { return };
    let t =
        bash_session(BashSessionOptions::new().wait_for_output(Duration::from_secs(1))).unwrap();
    until(&h, &t, "true", "$ ").await;
    let start = std::time::Instant::now();
    let out = ok(&h, &t, json!({"action": "read"})).await;
    assert_eq!(out, "");
    assert!(start.elapsed() >= Duration::from_millis(900));
}
