//! An operator's cancel of one running call (§5 of the fidelity issue): the call ends with the
//! reference's result (`timeout`, `Command timed out before completing.`, empty content), its
//! siblings and the later stages go on.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use actuator_events::{Event, EventLog};
use actuator_exec::{
    Approval, ApprovalPolicy, ApprovalRequest, Approver, CANCELLED_BY_OPERATOR, ExecuteOptions,
    ToolCallCanceller, execute_tools,
};
use actuator_model::BoxFuture;
use common::{conversation, result, sleeper};
use serde_json::json;

/// Cancels `id` as soon as it runs (polling, bounded).
fn cancel_when_running(
    canceller: &ToolCallCanceller,
    id: &'static str,
) -> tokio::task::JoinHandle<bool> {
    let canceller = canceller.clone();
    tokio::spawn(async move {
        for _ in 0..500 {
            if canceller.running().iter().any(|r| r == id) {
                return canceller.cancel(id);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        false
    })
}

#[tokio::test]
async fn a_cancelled_call_gets_the_reference_result_and_its_siblings_and_later_stages_run() {
    let tools = [sleeper("wait", true), sleeper("after", false)];
    let msgs = conversation(&[
        ("wait", json!({"n": 60_000, "s": "never"})),
        ("wait", json!({"n": 30, "s": "sibling"})),
        ("after", json!({"n": 1, "s": "later stage"})),
    ]);
    let canceller = ToolCallCanceller::new();
    let log = EventLog::new();
    let options = ExecuteOptions::default()
        .events(log.clone())
        .cancellation(canceller.clone());
    let cancel = cancel_when_running(&canceller, "call_0");
    let started = Instant::now();
    let out = execute_tools(&msgs, &tools, &options).await.unwrap();
    assert!(
        cancel.await.unwrap(),
        "the call was found running and cancelled"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the cancelled sleep did not run out"
    );

    assert_eq!(
        out.messages.iter().map(result).collect::<Vec<_>>(),
        vec![
            (
                String::new(),
                Some("timeout".into()),
                Some(CANCELLED_BY_OPERATOR.to_owned())
            ),
            ("sibling".into(), None, None),
            ("later stage".into(), None, None),
        ]
    );
    assert_eq!(
        CANCELLED_BY_OPERATOR,
        "Command timed out before completing."
    );
    assert!(canceller.running().is_empty(), "finished calls unregister");
    assert!(
        !canceller.cancel("call_0"),
        "a finished call is not running"
    );

    let event = log
        .tool_events()
        .into_iter()
        .find(|e| &*e.id == "call_0")
        .unwrap();
    assert_eq!(event.error.as_ref().unwrap().kind.to_string(), "timeout");
    assert_eq!(
        event.failed, None,
        "the reference leaves operator cancels unfailed"
    );
    assert_eq!(event.message_id.as_deref(), Some(out.messages[0].id()));
    let infos: Vec<String> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Info(i) => Some(i.message),
            _ => None,
        })
        .collect();
    assert_eq!(infos, vec!["Tool call 'wait' was cancelled by operator."]);
}

/// An approver that never answers.
struct Stuck;
impl Approver for Stuck {
    fn approve<'a>(&'a self, _request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_call_waiting_for_approval_can_be_cancelled_too() {
    let tools = [sleeper("wait", false)];
    let msgs = conversation(&[("wait", json!({"n": 1}))]);
    let canceller = ToolCallCanceller::new();
    let options = ExecuteOptions::default()
        .cancellation(canceller.clone())
        .approval(ApprovalPolicy::new(std::sync::Arc::new(Stuck), ["*"]).unwrap());
    let cancel = cancel_when_running(&canceller, "call_0");
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        execute_tools(&msgs, &tools, &options),
    )
    .await
    .expect("the stuck approval was cancelled")
    .unwrap();
    assert!(cancel.await.unwrap());
    assert_eq!(
        result(&out.messages[0]).2.as_deref(),
        Some(CANCELLED_BY_OPERATOR)
    );
}

#[tokio::test]
async fn cancelling_an_unknown_call_does_nothing() {
    let canceller = ToolCallCanceller::new();
    assert!(!canceller.cancel("call_9"));
    let tools = [sleeper("wait", false)];
    let msgs = conversation(&[("wait", json!({"n": 1, "s": "ran"}))]);
    let options = ExecuteOptions::default().cancellation(canceller.clone());
    let out = execute_tools(&msgs, &tools, &options).await.unwrap();
    assert!(!canceller.cancel("call_9"));
    assert_eq!(result(&out.messages[0]).0, "ran");
}
