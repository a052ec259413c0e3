//! What a call's events carry (§4 of the fidelity issue): a pending event when it starts (small,
//! inline in its `Event`) and the completed one when it ends, the tool message's id, `failed` for hard failures and the
//! siblings they cancel, the span, the agent a call ran, and the approver's name.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_events::{Event, EventLog, PendingToolEvent, RunsAgent, ToolCallAgent, ToolEvent};
use actuator_exec::{
    Approval, ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, ApproverRegistry,
    CANCELLED_BY_SIBLING, ExecuteOptions, auto_approver, execute_tools,
};
use actuator_model::{BoxFuture, ToolCall};
use actuator_tool_core::{ToolError, ToolOutput};
use common::{conversation, sleeper, tool};
use serde_json::json;

/// The log's events: each call's pending event and completed one, in order.
fn call_events(log: &EventLog) -> (Vec<PendingToolEvent>, Vec<ToolEvent>) {
    let (mut pending, mut done) = (Vec::new(), Vec::new());
    for e in log.events() {
        match e {
            Event::ToolPending(p) => pending.push(p),
            Event::Tool(t) => done.push(*t),
            _ => {}
        }
    }
    (pending, done)
}

#[tokio::test]
async fn a_sink_that_declines_pending_events_gets_only_the_completed_one_in_full() {
    let sink = EventLog::results_only();
    let msgs = conversation(&[("echo", json!({"s": "x"}))]);
    let echo = tool("echo", false, |a, _ctx| async move {
        Ok(ToolOutput::Text(
            a.as_map()["s"].as_str().unwrap_or("").into(),
        ))
    });
    let options = ExecuteOptions::default()
        .span_id("span_9")
        .events(sink.clone());
    let out = execute_tools(&msgs, &[echo], &options).await.unwrap();

    let events = sink.events();
    let [Event::Tool(done)] = &events[..] else {
        panic!("only the completed event: {events:?}")
    };
    assert_eq!(done.pending, None);
    assert_eq!(done.arguments["s"], "x");
    assert_eq!(done.result.text(), "x");
    assert_eq!(done.span_id.as_deref(), Some("span_9"));
    assert!(done.completed_at.unwrap() >= done.started_at);
    assert_eq!(done.message_id.as_deref(), Some(out.messages[0].id()));
}

#[tokio::test]
async fn a_call_emits_a_pending_event_before_its_tool_runs_then_the_completed_one() {
    let log = EventLog::new();
    let seen = log.clone();
    let probe = tool("probe", false, move |_a, ctx| {
        let seen = seen.clone();
        async move {
            // The pending event is already out when the tool body runs, and is all there is.
            let events = seen.events();
            let [Event::ToolPending(pending)] = &events[..] else {
                panic!("{events:?}")
            };
            assert_eq!(
                &*pending.id, &*ctx.call_id,
                "the context has the event's id"
            );
            Ok(ToolOutput::Text("done".into()))
        }
    });
    let msgs = conversation(&[("probe", json!({"s": "x"}))]);
    let options = ExecuteOptions::default()
        .span_id("span_7")
        .events(log.clone());
    let out = execute_tools(&msgs, &[probe], &options).await.unwrap();

    let events = log.events();
    assert!(
        matches!(events[..], [Event::ToolPending(_), Event::Tool(_)]),
        "{events:?}"
    );
    let (pending, done) = call_events(&log);
    let (pending, done) = (&pending[0], &done[0]);
    assert_eq!(pending.arguments["s"], "x");
    assert_eq!(pending.span_id.as_deref(), Some("span_7"));

    assert_eq!(&*done.id, &*pending.id);
    assert_eq!(done.pending, None);
    assert_eq!(done.result.text(), "done");
    assert_eq!(done.started_at, pending.started_at);
    assert!(done.completed_at.unwrap() >= done.started_at);
    assert!(done.working_time.unwrap() >= 0.0);
    assert_eq!(done.failed, None);
    assert_eq!(done.span_id.as_deref(), Some("span_7"));
    assert_eq!(done.message_id.as_deref(), Some(out.messages[0].id()));
    // `tool_events` keeps the completed events only.
    assert_eq!(log.tool_events(), vec![done.clone()]);

    // The pending event in the reference's shape: a tool event still pending.
    let as_reference = pending.to_tool_event();
    assert_eq!(as_reference.pending, Some(true));
    assert_eq!(as_reference.completed_at, None);
    assert_eq!(as_reference.working_time, None);
    assert_eq!(as_reference.message_id, None);
    assert_eq!(as_reference.span_id.as_deref(), Some("span_7"));
    assert_eq!(as_reference.started_at, pending.started_at);

    // Serialized as the reference names the fields; both kinds round-trip.
    let json = serde_json::to_value(Event::ToolPending(pending.clone())).unwrap();
    assert_eq!(json["event"], "tool_pending");
    assert_eq!(json["id"], &*pending.id);
    assert!(json.get("completed_at").is_none());
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, Event::ToolPending(pending.clone()));
    let json = serde_json::to_value(Event::Tool(Box::new(as_reference))).unwrap();
    assert_eq!(json["pending"], true);
    let json = serde_json::to_value(Event::Tool(Box::new(done.clone()))).unwrap();
    assert_eq!(json["message_id"], out.messages[0].id());
    assert!(json.get("pending").is_none() && json.get("failed").is_none());
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, Event::Tool(Box::new(done.clone())));
}

#[tokio::test]
async fn a_hard_failure_and_the_siblings_it_cancels_are_marked_failed_and_errors_are_not() {
    let log = EventLog::new();
    let tools = [
        tool("boom", true, |_a, _c| async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            panic!("kaput")
        }),
        sleeper("slow", true),
        tool("bad", false, |_a, _c| async {
            Err::<ToolOutput, _>(ToolError::new("broken").into())
        }),
    ];
    // A recoverable error alone: not failed.
    let msgs = conversation(&[("bad", json!({}))]);
    execute_tools(
        &msgs,
        &tools,
        &ExecuteOptions::default().events(log.clone()),
    )
    .await
    .unwrap();
    let bad = log.tool_events().pop().unwrap();
    assert_eq!(bad.error.unwrap().message, "broken");
    assert_eq!(bad.failed, None);
    assert!(bad.message_id.is_some());

    let log = EventLog::new();
    let msgs = conversation(&[("boom", json!({})), ("slow", json!({"n": 5000}))]);
    let err = execute_tools(
        &msgs,
        &tools,
        &ExecuteOptions::default().events(log.clone()),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("kaput"), "{err}");
    let done = log.tool_events();
    let boom = done.iter().find(|e| &*e.function == "boom").unwrap();
    assert_eq!(boom.failed, Some(true));
    assert!(boom.fatal.as_deref().unwrap().contains("kaput"));
    assert_eq!(
        boom.message_id, None,
        "a call that stops the run produces no message"
    );
    let slow = done.iter().find(|e| &*e.function == "slow").unwrap();
    assert_eq!(slow.failed, Some(true));
    assert_eq!(slow.error.as_ref().unwrap().message, CANCELLED_BY_SIBLING);
    assert_eq!(slow.error.as_ref().unwrap().kind.to_string(), "cancelled");
    assert!(slow.message_id.is_some());
    let infos: Vec<String> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Info(i) => Some(i.message),
            _ => None,
        })
        .collect();
    assert_eq!(
        infos,
        vec![
            "Tool call 'slow' was cancelled because a parallel sibling tool call raised an exception."
        ]
    );
}

#[tokio::test]
async fn a_tool_that_runs_an_agent_names_it_on_its_event() {
    let probe = |name: &str| {
        tool(name, false, |_a, ctx| async move {
            let slot = ctx.extensions.get::<ToolCallAgent>();
            let recorded = slot.is_some();
            if let Some(slot) = slot {
                slot.set_agent("researcher");
                slot.set_agent_span_id("span_42");
            }
            Ok(ToolOutput::Text(format!("recorded: {recorded}").into()))
        })
    };
    let runs_agent = probe("delegate").with_extension(RunsAgent);
    let msgs = conversation(&[("delegate", json!({}))]);
    let log = EventLog::new();
    execute_tools(
        &msgs,
        std::slice::from_ref(&runs_agent),
        &ExecuteOptions::default().events(log.clone()),
    )
    .await
    .unwrap();
    let event = log.tool_events().pop().unwrap();
    assert_eq!(event.result.text(), "recorded: true");
    assert_eq!(event.agent.as_deref(), Some("researcher"));
    assert_eq!(event.agent_span_id.as_deref(), Some("span_42"));
    // Without a sink there is no event, and no slot to fill.
    let out = execute_tools(&msgs, &[runs_agent], &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(out.messages[0].text(), "recorded: false");
    // A tool not marked as running agents gets no slot either.
    let plain = probe("delegate");
    let out = execute_tools(
        &msgs,
        &[plain],
        &ExecuteOptions::default().events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.messages[0].text(), "recorded: false");
}

struct Robot;
impl Approver for Robot {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let mut call: ToolCall = request.call.clone();
        let mut arguments = call.arguments.to_map().unwrap();
        arguments.insert("s".into(), json!("modified"));
        call.arguments = arguments.into();
        Box::pin(std::future::ready(Approval::modify(call)))
    }
}

async fn approved_by(policies: Vec<ApprovalPolicy>) -> ToolEvent {
    let log = EventLog::new();
    let mut options = ExecuteOptions::default().events(log.clone());
    options.approval = policies;
    let echo = tool("echo", false, |mut a, _c| async move {
        let s: Option<String> = a.optional("s")?;
        Ok(ToolOutput::Text(s.unwrap_or_default().into()))
    });
    let msgs = conversation(&[("echo", json!({"s": "original"}))]);
    execute_tools(&msgs, &[echo], &options).await.unwrap();
    log.tool_events().pop().unwrap()
}

#[tokio::test]
async fn approval_events_name_the_approver_that_decided() {
    let auto = approved_by(vec![
        ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["*"]).unwrap(),
    ])
    .await;
    let approval = auto.approval.unwrap();
    assert_eq!(approval.approver.as_deref(), Some("auto"));
    assert_eq!(approval.decision, ApprovalDecision::Approve);

    // An escalation passes the decision on: the next approver is the one named.
    let renamed = approved_by(vec![
        ApprovalPolicy::new(auto_approver(ApprovalDecision::Escalate), ["*"]).unwrap(),
        ApprovalPolicy::new(Arc::new(Robot), ["echo"])
            .unwrap()
            .named("robot"),
    ])
    .await;
    assert_eq!(
        renamed.approval.as_ref().unwrap().approver.as_deref(),
        Some("robot")
    );
    // The event records the arguments the call ran with.
    assert_eq!(renamed.arguments["s"], "modified");
    assert_eq!(renamed.result.text(), "modified");

    // Unnamed approvers are recorded by their type's name.
    let typed = approved_by(vec![ApprovalPolicy::new(Arc::new(Robot), ["*"]).unwrap()]).await;
    let name = typed.approval.unwrap().approver.unwrap();
    assert!(name.ends_with("Robot"), "{name}");

    // Policy files name the approver of each entry.
    let from_file = ApproverRegistry::new()
        .policies_from_json(
            r#"{"approvers": [{"name": "auto", "tools": "*", "params": {"decision": "reject"}}]}"#,
        )
        .unwrap();
    let rejected = approved_by(from_file).await;
    let approval = rejected.approval.unwrap();
    assert_eq!(approval.approver.as_deref(), Some("auto"));
    assert_eq!(approval.decision, ApprovalDecision::Reject);

    // No approver decided: the rejection has none.
    let none = approved_by(vec![
        ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["other"]).unwrap(),
    ])
    .await;
    let approval = none.approval.unwrap();
    assert_eq!(approval.approver, None);
    assert_eq!(
        approval.explanation.as_deref(),
        Some("No approvers registered for tool echo")
    );
    assert_eq!(
        none.error.unwrap().message,
        "No approvers registered for tool echo"
    );
}
