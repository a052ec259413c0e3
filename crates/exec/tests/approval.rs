//! Approval: each decision, pattern matching (exact, glob, argument), escalation, modify
//! re-validated, and the terminal approver.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_events::EventLog;
use actuator_exec::{
    Approval, ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, ExecError,
    ExecuteOptions, auto_approver, execute_tools,
};
use actuator_model::{BoxFuture, ToolCall};
use actuator_tool_core::{ToolCallView, ToolOutput};
use common::{conversation, result, tool};
use serde_json::{Value, json};

/// Echoes its arguments.
fn echo(name: &str) -> actuator_tool_core::ToolDef {
    tool(name, false, |a, _c| async move {
        Ok(ToolOutput::Text(
            Value::Object(a.into_map()).to_string().into(),
        ))
    })
}

/// An approver with a fixed answer that records what it was shown.
/// (assistant text, function, history length, rendered view) of one request.
type Seen = (String, String, usize, Option<String>);

struct Recorder {
    answer: Approval,
    seen: Mutex<Vec<Seen>>,
}

impl Recorder {
    fn new(answer: Approval) -> Arc<Self> {
        Arc::new(Recorder {
            answer,
            seen: Mutex::new(Vec::new()),
        })
    }
}

impl Approver for Recorder {
    fn approve<'a>(&'a self, r: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        self.seen.lock().unwrap().push((
            r.message.to_owned(),
            r.call.function.to_string(),
            r.history.len(),
            r.view.call.as_ref().map(|c| c.content.clone()),
        ));
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

async fn run(
    calls: &[(&str, Value)],
    tools: &[actuator_tool_core::ToolDef],
    policies: Vec<ApprovalPolicy>,
) -> Result<Vec<(String, Option<String>, Option<String>)>, ExecError> {
    let mut opts = ExecuteOptions::default();
    for p in policies {
        opts = opts.approval(p);
    }
    let out = execute_tools(&conversation(calls), tools, &opts).await?;
    Ok(out.messages.iter().map(result).collect())
}

fn policy(approver: Arc<dyn Approver>, tools: &[&str]) -> ApprovalPolicy {
    ApprovalPolicy::new(approver, tools.iter().copied()).unwrap()
}

#[tokio::test]
async fn approve_runs_and_shows_the_approver_the_call() {
    let rec = Recorder::new(Approval::approve());
    let out = run(
        &[("add", json!({"n": 1}))],
        &[echo("add")],
        vec![policy(rec.clone(), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0], (r#"{"n":1}"#.into(), None, None));
    let seen = rec.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![(
            "Let me use some tools.".into(),
            "add".into(),
            1,
            Some("```python\nadd(n=1)\n```\n".into())
        )]
    );
}

#[tokio::test]
async fn reject_terminate_and_auto_decisions() {
    let rejected = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(Arc::new(FixedReject), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(
        rejected[0],
        (
            String::new(),
            Some("approval".into()),
            Some("Too risky.".into())
        )
    );

    let auto = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(auto_approver(ApprovalDecision::Reject), &["*"])],
    )
    .await
    .unwrap();
    assert_eq!(auto[0].2.as_deref(), Some("Automatic decision."));

    let err = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(auto_approver(ApprovalDecision::Terminate), &["add"])],
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ExecError::Terminated { .. }));
    assert_eq!(err.to_string(), "Tool call approver requested termination.");

    let bare = Recorder::new(Approval::new(ApprovalDecision::Reject));
    let out = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(bare, &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].2.as_deref(), Some("Tool call not approved."));
}

struct FixedReject;
impl Approver for FixedReject {
    fn approve<'a>(&'a self, _r: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::reject("Too risky.") })
    }
}

#[tokio::test]
async fn patterns_exact_glob_argument_and_lists() {
    let tools = [
        echo("add"),
        echo("addition"),
        echo("bash"),
        echo("bash_session"),
    ];
    let approve = auto_approver(ApprovalDecision::Approve);
    // Exact: `add` does not match `addition` (D4).
    let out = run(
        &[("add", json!({})), ("addition", json!({}))],
        &tools,
        vec![policy(approve.clone(), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].1, None);
    assert_eq!(
        out[1].2.as_deref(),
        Some("No approvers registered for tool addition")
    );
    // Glob.
    let out = run(
        &[("bash", json!({})), ("bash_session", json!({}))],
        &tools,
        vec![policy(approve.clone(), &["bash*"])],
    )
    .await
    .unwrap();
    assert!(out.iter().all(|r| r.1.is_none()));
    // Comma list.
    let out = run(
        &[("bash", json!({})), ("add", json!({}))],
        &tools,
        vec![policy(approve.clone(), &["bash, add"])],
    )
    .await
    .unwrap();
    assert!(out.iter().all(|r| r.1.is_none()));
    // Argument pattern against the rendered call.
    let out = run(
        &[("addition", json!({"n": 1})), ("addition", json!({"n": 2}))],
        &tools,
        vec![policy(approve, &["addition(n=1*"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].1, None);
    assert_eq!(
        out[1].2.as_deref(),
        Some("No approvers registered for tool addition")
    );
    assert!(
        ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["bad[pattern"]).is_err()
    );
}

#[tokio::test]
async fn escalation_falls_through_in_order() {
    let first = Recorder::new(Approval::escalate());
    let second = Recorder::new(Approval::reject("second says no"));
    let out = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![
            policy(first.clone(), &["add"]),
            policy(second.clone(), &["*"]),
        ],
    )
    .await
    .unwrap();
    assert_eq!(out[0].2.as_deref(), Some("second says no"));
    assert_eq!(first.seen.lock().unwrap().len(), 1);
    assert_eq!(second.seen.lock().unwrap().len(), 1);
    // Everyone escalates: no approval granted.
    let out = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(Recorder::new(Approval::escalate()), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(
        out[0].2.as_deref(),
        Some("No approval granted for tool add")
    );
}

#[tokio::test]
async fn validation_happens_before_approval() {
    let rec = Recorder::new(Approval::approve());
    let out = run(
        &[("add", json!({"n": "x"}))],
        &[echo("add")],
        vec![policy(rec.clone(), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].1.as_deref(), Some("parsing"));
    assert!(
        rec.seen.lock().unwrap().is_empty(),
        "the approver saw an invalid call"
    );
}

#[tokio::test]
async fn modified_calls_run_and_are_validated_again() {
    let mut good = ToolCall::new("call_0", "add", json!({"n": 2}));
    good.id = "call_0".into();
    let out = run(
        &[("add", json!({"n": 1}))],
        &[echo("add")],
        vec![policy(Recorder::new(Approval::modify(good)), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].0, r#"{"n":2}"#);

    let bad = ToolCall::new("call_0", "add", json!({"n": "two"}));
    let out = run(
        &[("add", json!({"n": 1}))],
        &[echo("add")],
        vec![policy(Recorder::new(Approval::modify(bad)), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(out[0].1.as_deref(), Some("parsing"));
    assert!(
        out[0]
            .2
            .as_deref()
            .unwrap()
            .contains("- n: 'two' is not of type 'integer'")
    );

    let none = Approval::new(ApprovalDecision::Modify);
    let out = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(Recorder::new(none), &["add"])],
    )
    .await
    .unwrap();
    assert_eq!(
        out[0].2.as_deref(),
        Some(
            "The approver chose to modify this tool call but supplied no modified call, so the call was not run."
        )
    );

    let other = ToolCall::new("call_0", "rm", json!({}));
    let err = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(Recorder::new(Approval::modify(other)), &["add"])],
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "An approver returned a modified call to 'rm' for a call to 'add'. A 'modify' decision may change only the arguments of a tool call, not the function called."
    );
}

#[tokio::test]
async fn the_tools_viewer_is_used_and_a_failing_viewer_rejects() {
    let viewed =
        echo("v").with_viewer(
            |_f: &str, a: &serde_json::Map<String, Value>| ToolCallView {
                context: None,
                call: Some(actuator_tool_core::ToolCallContent {
                    title: Some("V".into()),
                    format: Default::default(),
                    content: format!("n is {}", a["n"]),
                }),
            },
        );
    let rec = Recorder::new(Approval::approve());
    run(
        &[("v", json!({"n": 3}))],
        &[viewed],
        vec![policy(rec.clone(), &["v"])],
    )
    .await
    .unwrap();
    assert_eq!(rec.seen.lock().unwrap()[0].3.as_deref(), Some("n is 3"));

    let broken = echo("b").with_viewer(
        |_f: &str, _a: &serde_json::Map<String, Value>| -> ToolCallView { panic!("no view") },
    );
    let out = run(
        &[("b", json!({}))],
        &[broken],
        vec![policy(auto_approver(ApprovalDecision::Approve), &["b"])],
    )
    .await
    .unwrap();
    assert_eq!(
        out[0].2.as_deref(),
        Some(
            "The tool call was rejected because the viewer for tool 'b' failed, so it could not be shown for approval: no view"
        )
    );
}

#[tokio::test]
async fn approval_is_recorded_on_the_event() {
    let log = EventLog::new();
    let opts = ExecuteOptions::default()
        .approval(policy(auto_approver(ApprovalDecision::Reject), &["add"]))
        .events(log.clone());
    execute_tools(&conversation(&[("add", json!({}))]), &[echo("add")], &opts)
        .await
        .unwrap();
    let event = &log.tool_events()[0];
    let approval = event.approval.as_ref().unwrap();
    assert_eq!(approval.decision, ApprovalDecision::Reject);
    assert_eq!(approval.explanation.as_deref(), Some("Automatic decision."));
}

#[cfg(feature = "terminal")]
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);
#[cfg(feature = "terminal")]
impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "terminal")]
#[tokio::test]
async fn terminal_approver_asks_and_obeys() {
    use actuator_exec::TerminalApprover;
    let cases: [(&str, Option<&str>, Option<&str>); 4] = [
        ("y\n", None, None),
        ("n\nnot today\n", Some("approval"), Some("not today")),
        ("maybe\ne\n{\"n\": 7}\n", None, None),
        (
            "",
            Some("approval"),
            Some("The approver's terminal closed."),
        ),
    ];
    for (input, kind, message) in cases {
        let screen = Shared::default();
        let approver = Arc::new(TerminalApprover::with_io(
            std::io::Cursor::new(input.as_bytes().to_vec()),
            screen.clone(),
        ));
        let out = run(
            &[("add", json!({"n": 1}))],
            &[echo("add")],
            vec![policy(approver, &["add"])],
        )
        .await
        .unwrap();
        assert_eq!(out[0].1.as_deref(), kind, "{input:?}");
        assert_eq!(out[0].2.as_deref(), message, "{input:?}");
        let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
        assert!(shown.contains("add(n=1)"), "{shown}");
        if input.starts_with("maybe") {
            assert_eq!(out[0].0, r#"{"n":7}"#);
            assert!(shown.contains("Please answer y, n, e or q."));
        }
    }
    let approver = Arc::new(TerminalApprover::with_io(
        std::io::Cursor::new(b"q\n".to_vec()),
        Shared::default(),
    ));
    let err = run(
        &[("add", json!({}))],
        &[echo("add")],
        vec![policy(approver, &["add"])],
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ExecError::Terminated { .. }));
}

/// The model writes the arguments the approver shows: escape sequences in them must not
/// reach the terminal (clearing it, moving the cursor, faking a prompt).
#[cfg(feature = "terminal")]
#[tokio::test]
async fn the_terminal_approver_shows_no_control_characters_from_the_model() {
    use actuator_exec::TerminalApprover;
    let screen = Shared::default();
    let approver = Arc::new(TerminalApprover::with_io(
        std::io::Cursor::new(b"n\n\n".to_vec()),
        screen.clone(),
    ));
    run(
        &[(
            "add",
            json!({"s": "\u{1b}[2J\u{1b}]0;owned\u{7}\rApproved."}),
        )],
        &[echo("add")],
        vec![policy(approver, &["add"])],
    )
    .await
    .unwrap();
    let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    assert!(shown.contains("add("), "{shown}");
    assert!(
        !shown.contains(['\u{1b}', '\u{7}', '\r']),
        "control characters reached the terminal: {shown:?}"
    );
}

#[tokio::test]
async fn a_viewer_template_gets_its_placeholders_filled_from_the_call() {
    // A static template: `{{n}}` and `{{flag}}` are the call's arguments, Python-written.
    let templated =
        echo("t").with_viewer(
            |_f: &str, _a: &serde_json::Map<String, Value>| ToolCallView {
                context: None,
                call: Some(actuator_tool_core::ToolCallContent {
                    title: Some("T {{n}}".into()),
                    format: Default::default(),
                    content: "n={{n}} s={{s}} {{unknown}}".into(),
                }),
            },
        );
    let rec = Recorder::new(Approval::approve());
    run(
        &[("t", json!({"n": 3, "s": "x"}))],
        &[templated],
        vec![policy(rec.clone(), &["t"])],
    )
    .await
    .unwrap();
    assert_eq!(
        rec.seen.lock().unwrap()[0].3.as_deref(),
        Some("n=3 s=x {{unknown}}")
    );
}

#[cfg(all(feature = "yaml", feature = "terminal"))]
#[tokio::test]
async fn policy_files_load_into_policies_with_named_approvers() {
    // The reference's YAML example, with a custom approver registered by name.
    let dir = std::env::temp_dir().join(format!("actuator-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("approval.yaml");
    std::fs::write(
        &path,
        "approvers:\n  - name: gatekeeper\n    tools: bash, python\n    reason: no shells today\n  - name: auto\n    tools: \"*\"\n    decision: approve\n",
    )
    .unwrap();
    let mut registry = actuator_exec::ApproverRegistry::new();
    registry.register("gatekeeper", |params| {
        let reason = params["reason"].as_str().unwrap_or("no").to_owned();
        Ok(Recorder::new(Approval::reject(reason)) as Arc<dyn Approver>)
    });
    let policies = registry.read_policies(&path).unwrap();
    let out = run(
        &[("bash", json!({"s": "ls"})), ("read", json!({}))],
        &[echo("bash"), echo("read")],
        policies,
    )
    .await
    .unwrap();
    assert_eq!(out[0].2.as_deref(), Some("no shells today"));
    assert_eq!(out[1].1, None, "read is approved by the auto entry");

    // Clear errors: an unknown approver, a bad parameter, a malformed file, a missing file.
    let unknown = registry
        .policies_from_json(r#"{"approvers": [{"name": "robot", "tools": "*"}]}"#)
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "Unknown approver 'robot' in the approval policy. Known approvers: auto, gatekeeper, human. Register others with ApproverRegistry::register."
    );
    let bad = registry
        .policies_from_json(
            r#"{"approvers": [{"name": "auto", "tools": "*", "decision": "maybe"}]}"#,
        )
        .unwrap_err();
    assert!(
        bad.to_string()
            .starts_with("Approver 'auto' in the approval policy: 'decision' must be one of"),
        "{bad}"
    );
    let malformed = registry
        .policies_from_json(r#"{"approvers": [{"tools": "*"}]}"#)
        .unwrap_err();
    assert!(
        malformed.to_string().contains("missing field `name`"),
        "{malformed}"
    );
    let missing = registry.read_policies(dir.join("nope.json")).unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("Approval policy file not found or unreadable"),
        "{missing}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(not(feature = "yaml"))]
#[test]
fn a_yaml_policy_without_the_yaml_feature_says_how_to_read_it() {
    let path = std::env::temp_dir().join(format!("actuator-policy-{}.yaml", std::process::id()));
    std::fs::write(&path, "approvers: []\n").unwrap();
    let err = actuator_exec::ApproverRegistry::new()
        .read_policies(&path)
        .unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        err.to_string().contains("without its `yaml` feature"),
        "{err}"
    );
}

#[test]
fn the_human_approver_comes_with_the_terminal_feature() {
    let registry = actuator_exec::ApproverRegistry::new();
    let human = registry.policies_from_json(r#"{"approvers": [{"name": "human", "tools": "*"}]}"#);
    if cfg!(feature = "terminal") {
        assert_eq!(human.unwrap()[0].approver_name(), "human");
    } else {
        assert_eq!(
            human.unwrap_err().to_string(),
            "Unknown approver 'human' in the approval policy. Known approvers: auto. Register others with ApproverRegistry::register."
        );
    }
}
