//! A react run that dies part way goes on from its checkpoint when run again with the same
//! key: no finished call runs twice, a call running when it died is reported (or run again,
//! by policy), and the limits go on from where they were.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actuator_agent::checkpoint::{
    CheckpointStore, Checkpoints, FileCheckpoints, INTERRUPTED_BY_CRASH, InFlightPolicy,
};
use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, react, run};
use actuator_events::{Event, EventLog};
use actuator_model::{ChatMessage, FunctionModel, ModelOutput, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use common::submit;
use serde_json::json;

/// A tool that counts its calls; the first call of `slow` (when `slow_once`) takes a minute.
fn counting(
    name: &str,
    calls: Arc<AtomicUsize>,
    slow_first: bool,
    started: Arc<tokio::sync::Notify>,
) -> ToolDef {
    ToolDef::builder(name)
        .description("Does a step.")
        .parameters(ToolParams::from_value(&json!({"properties": {}})).unwrap())
        .handler(move |_a: ToolArgs, _c: ToolContext| {
            let (calls, started) = (calls.clone(), started.clone());
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                started.notify_one();
                if slow_first && n == 1 {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                Ok::<_, ToolFailure>(format!("step {n}"))
            }
        })
        .build()
        .unwrap()
}

/// Calls `fast`, then `slow`, then submits what `slow` said: decided from the conversation
/// alone, as a real model would, so that a new process's model goes on where it was.
fn model() -> FunctionModel {
    FunctionModel::new("mockllm/model", |messages: &[ChatMessage], _tools| {
        let results: Vec<(String, String)> = messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool(t) => Some((
                    t.function.as_deref().unwrap_or("").to_owned(),
                    t.content.text(),
                )),
                _ => None,
            })
            .collect();
        let call = |name: &str| {
            ModelOutput::for_tool_calls(
                "mockllm/model",
                "",
                vec![ToolCall::new(
                    format!("{name}_{}", messages.len()),
                    name,
                    json!({}),
                )],
            )
        };
        Ok(match results.as_slice() {
            [] => call("fast"),
            [_] => call("slow"),
            [.., (_, last)] => submit(&format!("slow said: {last}")),
        })
    })
}

struct Counts {
    fast: Arc<AtomicUsize>,
    slow: Arc<AtomicUsize>,
    slow_started: Arc<tokio::sync::Notify>,
}

fn agent(counts: &Counts) -> actuator_agent::react::ReactAgent {
    agent_with(counts, false)
}

/// The agent, its `slow` tool declared idempotent or not.
fn agent_with(counts: &Counts, idempotent_slow: bool) -> actuator_agent::react::ReactAgent {
    let slow = counting(
        "slow",
        counts.slow.clone(),
        true,
        counts.slow_started.clone(),
    );
    react()
        .no_prompt()
        .tools([
            counting("fast", counts.fast.clone(), false, Arc::default()),
            if idempotent_slow {
                slow.as_idempotent()
            } else {
                slow
            },
        ])
        .model(model())
        .build()
        .unwrap()
}

/// Runs until `slow` has started, then drops the run (as a killed process stops).
async fn run_until_slow_starts(counts: &Counts, checkpoints: &Checkpoints) {
    run_until_slow_starts_with(&agent(counts), counts, checkpoints).await;
}

async fn run_until_slow_starts_with(
    agent: &actuator_agent::react::ReactAgent,
    counts: &Counts,
    checkpoints: &Checkpoints,
) {
    let options = RunOptions::new()
        .resource(checkpoints.clone())
        .limits([turn_limit(10)]);
    tokio::select! {
        _ = run(agent, "Go.", options) => panic!("the run finished before it was stopped"),
        () = counts.slow_started.notified() => {}
    }
}

fn counts() -> Counts {
    Counts {
        fast: Arc::default(),
        slow: Arc::default(),
        slow_started: Arc::default(),
    }
}

#[tokio::test]
async fn a_resumed_run_runs_no_finished_call_again_and_reports_the_one_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let counts = counts();
    let checkpoints = Checkpoints::new(store.clone(), "task/sample-1");
    run_until_slow_starts(&counts, &checkpoints).await;
    assert_eq!(
        (
            counts.fast.load(Ordering::SeqCst),
            counts.slow.load(Ordering::SeqCst)
        ),
        (1, 1)
    );

    // "A new process": new agent, new model, the same store and key.
    let checkpoints = Checkpoints::new(store.clone(), "task/sample-1");
    let log = EventLog::new();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent(&counts),
            "Go.",
            RunOptions::new()
                .resource(checkpoints.clone())
                .events(log.clone())
                .limits([turn_limit(10)]),
        ),
    )
    .await
    .expect("the resumed run waited on the call that was in flight")
    .unwrap();
    assert_eq!(
        (
            counts.fast.load(Ordering::SeqCst),
            counts.slow.load(Ordering::SeqCst)
        ),
        (1, 1),
        "no call ran twice"
    );
    assert_eq!(
        out.state.output().completion(),
        format!("slow said: {INTERRUPTED_BY_CRASH}")
    );
    let report = checkpoints.resumed().unwrap();
    assert_eq!(report.policy, InFlightPolicy::Report);
    let in_flight: Vec<&str> = report
        .in_flight
        .iter()
        .map(|c| c.function.as_str())
        .collect();
    assert_eq!(in_flight, ["slow"]);
    // The first run's two generations count toward the resumed run's limits.
    assert_eq!(out.usage.turns, 3);
    assert!(log.events().iter().any(|e| matches!(
        e,
        Event::Info(i) if i.source.as_deref() == Some("checkpoint") && i.message.contains("not run again: slow")
    )));
    // Finished: nothing is left to resume.
    assert!(store.load("task/sample-1").await.unwrap().is_none());
    assert!(store.load("task/sample-1#journal").await.unwrap().is_none());
}

#[tokio::test]
async fn with_the_rerun_policy_the_call_in_flight_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let counts = counts();
    let checkpoints = Checkpoints::new(store.clone(), "k").in_flight(InFlightPolicy::Rerun);
    run_until_slow_starts(&counts, &checkpoints).await;

    let checkpoints = Checkpoints::new(store, "k").in_flight(InFlightPolicy::Rerun);
    let out = run(
        &agent(&counts),
        "Go.",
        RunOptions::new().resource(checkpoints.clone()),
    )
    .await
    .unwrap();
    assert_eq!(
        counts.fast.load(Ordering::SeqCst),
        1,
        "the finished call did not run again"
    );
    assert_eq!(
        counts.slow.load(Ordering::SeqCst),
        2,
        "the call in flight ran again"
    );
    assert_eq!(out.state.output().completion(), "slow said: step 2");
    assert_eq!(checkpoints.resumed().unwrap().policy, InFlightPolicy::Rerun);
}

#[tokio::test]
async fn limits_go_on_from_where_the_run_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let counts = counts();
    let checkpoints = Checkpoints::new(store.clone(), "limited");
    run_until_slow_starts(&counts, &checkpoints).await;
    // Two generations were used; a limit of two ends the resumed run at its first turn.
    let out = run(
        &agent(&counts),
        "Go.",
        RunOptions::new()
            .resource(Checkpoints::new(store, "limited"))
            .limits([turn_limit(2)]),
    )
    .await
    .unwrap();
    let limit = out.limit.expect("the carried turns reached the limit");
    assert!(
        limit.to_string().contains("Turn limit exceeded. value: 3"),
        "{limit}"
    );
}

#[tokio::test]
async fn a_run_without_a_checkpoint_starts_afresh_and_leaves_none_when_done() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let checkpoints = Checkpoints::new(store.clone(), "fresh");
    let counts = Counts {
        fast: Arc::default(),
        slow: Arc::new(AtomicUsize::new(1)), // not slow
        slow_started: Arc::default(),
    };
    let out = run(
        &agent(&counts),
        "Go.",
        RunOptions::new().resource(checkpoints.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.state.output().completion(), "slow said: step 2");
    assert!(checkpoints.resumed().is_none());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing left behind"
    );
}

#[tokio::test]
async fn a_finished_run_kept_for_its_owner_is_returned_as_it_was_without_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let checkpoints = Checkpoints::new(store.clone(), "kept").keep_finished();
    let counts = Counts {
        fast: Arc::default(),
        slow: Arc::new(AtomicUsize::new(1)), // not slow
        slow_started: Arc::default(),
    };
    let first = run(
        &agent(&counts),
        "Go.",
        RunOptions::new().resource(checkpoints.clone()),
    )
    .await
    .unwrap();
    assert_eq!(first.state.output().completion(), "slow said: step 2");
    assert!(
        store.load("kept").await.unwrap().is_some(),
        "the final state is kept"
    );

    // The process died before its owner had the result: run again, it is returned as it
    // was, no tool called and no model turn taken.
    let again = Checkpoints::new(store.clone(), "kept").keep_finished();
    let events = EventLog::new();
    let second = run(
        &agent(&counts),
        "Go.",
        RunOptions::new()
            .resource(again.clone())
            .events(events.clone()),
    )
    .await
    .unwrap();
    assert_eq!(second.state.output().completion(), "slow said: step 2");
    assert_eq!(
        second.state.messages.len(),
        first.state.messages.len(),
        "the same conversation"
    );
    assert_eq!(counts.fast.load(Ordering::SeqCst), 1);
    assert_eq!(counts.slow.load(Ordering::SeqCst), 2);
    let report = again.resumed().unwrap();
    assert!(report.finished);
    assert!(
        !events.events().iter().any(|e| matches!(e, Event::Model(_))),
        "no model turn"
    );
    // The owner has it now: cleared, nothing is left.
    again.clear().await.unwrap();
    assert!(store.load("kept").await.unwrap().is_none());
}

#[tokio::test]
async fn a_call_of_an_idempotent_tool_cut_off_by_the_crash_runs_again_and_the_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let counts = counts();
    // `slow` is declared idempotent: reading it again does no harm.
    let checkpoints = Checkpoints::new(store.clone(), "idempotent");
    run_until_slow_starts_with(&agent_with(&counts, true), &counts, &checkpoints).await;

    let again = Checkpoints::new(store.clone(), "idempotent");
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent_with(&counts, true),
            "Go.",
            RunOptions::new()
                .resource(again.clone())
                .limits([turn_limit(10)]),
        ),
    )
    .await
    .expect("the rerun call hung")
    .unwrap();
    assert_eq!(
        counts.fast.load(Ordering::SeqCst),
        1,
        "fast finished: not again"
    );
    assert_eq!(
        counts.slow.load(Ordering::SeqCst),
        2,
        "slow was cut off: again"
    );
    assert_eq!(out.state.output().completion(), "slow said: step 2");
    let report = again.resumed().unwrap();
    let rerun: Vec<&str> = report.rerun.iter().map(|c| c.function.as_str()).collect();
    assert_eq!(rerun, ["slow"]);
    // Each call has exactly one answer.
    let answers = out
        .state
        .messages
        .iter()
        .filter(|m| matches!(m, ChatMessage::Tool(t) if t.function.as_deref() == Some("slow")))
        .count();
    assert_eq!(answers, 1);
}
