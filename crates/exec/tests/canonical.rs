//! Canonical arguments: approval and review see the tool's canonical form of a call, the tool
//! runs with exactly what was approved, and a canonicaliser's failure is the model's error.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_events::{Event, EventLog};
use actuator_exec::{
    Approval, ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, ExecError,
    ExecuteOptions, Review, ReviewPolicy, ReviewRequest, Reviewer, auto_approver, execute_tools,
};
use actuator_model::{BoxFuture, ToolCall};
use actuator_tool_core::{ToolDef, ToolError, ToolOutput};
use common::{conversation, result, tool};
use serde_json::{Map, Value, json};

/// `path` resolved lexically against `/work` (`..` pops, `.` stays), as a file tool would
/// resolve it before opening it.
fn resolve(path: &str) -> Result<String, ToolError> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        vec!["work"]
    };
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(ToolError::new(format!("Invalid path: {path} escapes /")));
                }
            }
            p => parts.push(p),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

fn canonical_path(args: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    let mut out = args.clone();
    if let Some(Value::String(p)) = args.get("s") {
        out.insert("s".into(), Value::String(resolve(p)?));
    }
    Ok(out)
}

/// A file-reading tool that records the path it was given.
fn read_file(received: Arc<Mutex<Vec<String>>>) -> ToolDef {
    tool("read_file", false, move |mut a, _c| {
        let received = received.clone();
        async move {
            let path: String = a.required("s")?;
            received.lock().unwrap().push(path.clone());
            Ok(ToolOutput::Text(format!("contents of {path}").into()))
        }
    })
    .with_canonical_arguments(canonical_path)
}

/// An approver that records the arguments it was shown and answers `answer`.
struct Shown {
    answer: Approval,
    seen: Mutex<Vec<Value>>,
}

impl Approver for Shown {
    fn approve<'a>(&'a self, r: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let args = r.call.arguments.to_shared_value().unwrap().as_ref().clone();
        self.seen.lock().unwrap().push(args);
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

fn shown(answer: Approval) -> Arc<Shown> {
    Arc::new(Shown {
        answer,
        seen: Mutex::new(Vec::new()),
    })
}

#[tokio::test]
async fn the_approver_sees_the_canonical_path_and_the_tool_receives_exactly_it() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let approver = shown(Approval::approve());
    let log = EventLog::new();
    let opts = ExecuteOptions::default()
        .events(log.clone())
        .approval(ApprovalPolicy::new(approver.clone(), ["read_file"]).unwrap());
    let tools = [read_file(received.clone())];
    let out = execute_tools(
        &conversation(&[("read_file", json!({"s": "notes/../../work/./a.txt"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(
        *approver.seen.lock().unwrap(),
        vec![json!({"s": "/work/a.txt"})]
    );
    assert_eq!(*received.lock().unwrap(), vec!["/work/a.txt".to_owned()]);
    assert_eq!(result(&out.messages[0]).0, "contents of /work/a.txt");
    // The approval's record keeps what the approver was shown; the call's event keeps the
    // model's proposal, as the reference's tool event does.
    let event = log.tool_events().pop().unwrap();
    assert_eq!(
        event.approval.unwrap().arguments,
        json!({"s": "/work/a.txt"}).as_object().cloned()
    );
    assert_eq!(*event.arguments, json!({"s": "notes/../../work/./a.txt"}));
}

#[tokio::test]
async fn an_attackers_traversal_is_matched_by_policy_in_its_canonical_form() {
    let received = Arc::new(Mutex::new(Vec::new()));
    // Reading under /etc is refused; the rest of the tool is approved.
    let opts = ExecuteOptions::default()
        .approval(
            ApprovalPolicy::new(
                auto_approver(ApprovalDecision::Reject),
                ["read_file(s='/etc/*"],
            )
            .unwrap(),
        )
        .approval(
            ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["read_file"]).unwrap(),
        );
    let tools = [read_file(received.clone())];
    let out = execute_tools(
        &conversation(&[("read_file", json!({"s": "a/../../etc/passwd"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    let (_, kind, _) = result(&out.messages[0]);
    assert_eq!(kind.as_deref(), Some("approval"));
    assert!(received.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_modified_call_is_canonicalised_again_before_it_runs() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let modified = ToolCall::new("call_0", "read_file", json!({"s": "b/../c.txt"}));
    let opts = ExecuteOptions::default()
        .approval(ApprovalPolicy::new(shown(Approval::modify(modified)), ["*"]).unwrap());
    let tools = [read_file(received.clone())];
    execute_tools(
        &conversation(&[("read_file", json!({"s": "a.txt"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(*received.lock().unwrap(), vec!["/work/c.txt".to_owned()]);
}

struct SeesCall(Mutex<Vec<Value>>);

impl Reviewer for SeesCall {
    fn review<'a>(&'a self, r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        let args = r.call.arguments.to_shared_value().unwrap().as_ref().clone();
        self.0.lock().unwrap().push(args);
        Box::pin(std::future::ready(Review::proceed()))
    }
}

#[tokio::test]
async fn the_reviewer_sees_the_call_as_it_ran() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let reviewer = Arc::new(SeesCall(Mutex::new(Vec::new())));
    let log = EventLog::new();
    let opts = ExecuteOptions::default()
        .events(log.clone())
        .review(ReviewPolicy::new(reviewer.clone(), ["read_file(s='/etc/*"]).unwrap());
    let tools = [read_file(received)];
    execute_tools(
        &conversation(&[("read_file", json!({"s": "x/../../etc/hosts"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    assert_eq!(
        *reviewer.0.lock().unwrap(),
        vec![json!({"s": "/etc/hosts"})]
    );
    let recorded = log
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::Review(r) => Some(r.arguments.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(*recorded, json!({"s": "/etc/hosts"}));
}

#[tokio::test]
async fn a_canonicalisers_error_is_the_models_and_nothing_runs() {
    let received = Arc::new(Mutex::new(Vec::new()));
    let approver = shown(Approval::approve());
    let opts =
        ExecuteOptions::default().approval(ApprovalPolicy::new(approver.clone(), ["*"]).unwrap());
    let tools = [read_file(received.clone())];
    let out = execute_tools(
        &conversation(&[("read_file", json!({"s": "/../../x"}))]),
        &tools,
        &opts,
    )
    .await
    .unwrap();
    // The reference reports a canonicaliser's ToolError as an `unknown` tool error.
    assert_eq!(
        result(&out.messages[0]),
        (
            String::new(),
            Some("unknown".to_owned()),
            Some("Invalid path: /../../x escapes /".to_owned())
        )
    );
    assert!(received.lock().unwrap().is_empty());
    assert!(approver.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn canonical_arguments_the_schema_refuses_fail_validation() {
    let tools = [
        common::constant("t", false, "ran").with_canonical_arguments(|_a: &Map<String, Value>| {
            Ok(json!({"n": "not a number"}).as_object().cloned().unwrap())
        }),
    ];
    let out = execute_tools(
        &conversation(&[("t", json!({"n": 1}))]),
        &tools,
        &ExecuteOptions::default(),
    )
    .await
    .unwrap();
    let (content, kind, _) = result(&out.messages[0]);
    assert_eq!(kind.as_deref(), Some("parsing"));
    assert_ne!(content, "ran");
}

#[tokio::test]
async fn a_canonicalisers_panic_is_contained_and_stops_the_run() {
    let tools = [common::constant("t", false, "ran")
        .with_canonical_arguments(|_a: &Map<String, Value>| panic!("resolver broke"))];
    let err = execute_tools(
        &conversation(&[("t", json!({}))]),
        &tools,
        &ExecuteOptions::default(),
    )
    .await
    .unwrap_err();
    let ExecError::Fatal { cause, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(cause.to_string().contains("resolver broke"), "{cause}");
}
