//! Large parallel stages on a multi-thread runtime are spread over its workers, with the
//! guarantees of small stages: declared order, a fatal failure cancelling the siblings, and
//! every call aborted when `execute_tools` is dropped.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actuator_events::{Event, EventLog};
use actuator_exec::{CANCELLED_BY_SIBLING, ExecError, ExecuteOptions, execute_tools};
use actuator_tool_core::{FatalToolError, ToolOutput};
use common::{conversation, result, tool};
use serde_json::json;

/// Comfortably above the size from which a stage is spread.
const LARGE: usize = 100;

fn calls(name: &str, n: usize) -> Vec<(&str, serde_json::Value)> {
    (0..n).map(|i| (name, json!({"n": i}))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_stage_runs_on_more_than_one_worker() {
    // Each call busy-waits (without yielding) until another call is inside its busy section
    // at the same moment, which only a second worker can make happen. On the polled path no
    // two ever overlap: the first call waits its full 5 s, then everything gives up.
    let inside = Arc::new(AtomicUsize::new(0));
    let overlapped = Arc::new(AtomicBool::new(false));
    let gave_up = Arc::new(AtomicBool::new(false));
    let (i, o, g) = (inside.clone(), overlapped.clone(), gave_up.clone());
    let busy = tool("busy", true, move |_a, _c| {
        let (i, o, g) = (i.clone(), o.clone(), g.clone());
        async move {
            i.fetch_add(1, Ordering::SeqCst);
            let start = Instant::now();
            while !o.load(Ordering::SeqCst) && !g.load(Ordering::SeqCst) {
                if i.load(Ordering::SeqCst) > 1 {
                    o.store(true, Ordering::SeqCst);
                } else if start.elapsed() > Duration::from_secs(5) {
                    g.store(true, Ordering::SeqCst);
                }
                std::hint::spin_loop();
            }
            i.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::default())
        }
    });
    let msgs = conversation(&calls("busy", LARGE));
    let out = execute_tools(&msgs, &[busy], &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(out.messages.len(), LARGE);
    assert!(
        overlapped.load(Ordering::SeqCst),
        "no two calls of the stage ever ran at the same time on different workers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_stage_keeps_declared_order_and_its_events() {
    // Later calls finish first.
    let t = tool("t", true, |mut a, _c| async move {
        let n: u64 = a.required("n")?;
        tokio::time::sleep(Duration::from_millis((LARGE as u64 - n) / 10)).await;
        Ok(ToolOutput::Text(n.to_string().into()))
    });
    let log = EventLog::new();
    let msgs = conversation(&calls("t", LARGE));
    let out = execute_tools(
        &msgs,
        &[t],
        &ExecuteOptions::default()
            .events(log.clone())
            .max_concurrency(30),
    )
    .await
    .unwrap();
    let texts: Vec<String> = out.messages.iter().map(|m| result(m).0).collect();
    assert_eq!(texts, (0..LARGE).map(|n| n.to_string()).collect::<Vec<_>>());
    assert_eq!(log.tool_events().len(), LARGE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_stage_names_each_call_its_own_tool_and_span() {
    // A spread stage's chunks run from the stage's copies of the tools and options: every
    // call's context, message and events must still name the tool it called (two tools,
    // interleaved across the chunks) and the run's span.
    let echo = |_a, c: actuator_tool_core::ToolContext| async move {
        Ok(ToolOutput::Text(c.function.to_string().into()))
    };
    let tools = [tool("first", true, echo), tool("second", true, echo)];
    let names: Vec<&str> = (0..LARGE)
        .map(|i| if i % 3 == 0 { "second" } else { "first" })
        .collect();
    let calls: Vec<_> = names.iter().map(|&n| (n, json!({}))).collect();
    let log = EventLog::new();
    let mut options = ExecuteOptions::default().events(log.clone());
    options.span_id = Some(Arc::from("span_outer"));
    let out = execute_tools(&conversation(&calls), &tools, &options)
        .await
        .unwrap();
    let texts: Vec<String> = out.messages.iter().map(|m| result(m).0).collect();
    assert_eq!(texts, names);
    let functions: Vec<Option<&str>> = out
        .messages
        .iter()
        .map(|m| m.as_tool().and_then(|t| t.function.as_deref()))
        .collect();
    assert_eq!(
        functions,
        names.iter().map(|&n| Some(n)).collect::<Vec<_>>()
    );
    let events = log.tool_events();
    assert_eq!(events.len(), LARGE);
    for e in &events {
        let called = names[e.id.trim_start_matches("call_").parse::<usize>().unwrap()];
        assert_eq!(&*e.function, called, "{e:?}");
        assert_eq!(e.span_id.as_deref(), Some("span_outer"), "{e:?}");
    }
}

#[tokio::test]
async fn a_small_stage_names_each_call_its_own_tool() {
    // The polled path shares one copy of each tool's name among the stage's calls: each
    // call's context, message and events still name the tool it called, whichever place
    // the tool has in the list, and a call of an unknown tool keeps the name it asked for.
    let echo = |_a, c: actuator_tool_core::ToolContext| async move {
        Ok(ToolOutput::Text(c.function.to_string().into()))
    };
    let tools = [
        tool("first", true, echo),
        tool("second", true, echo),
        tool("third", true, echo),
    ];
    let names = ["third", "first", "missing", "third", "second", "first"];
    let calls: Vec<_> = names.iter().map(|&n| (n, json!({}))).collect();
    let log = EventLog::new();
    let options = ExecuteOptions::default().events(log.clone());
    let out = execute_tools(&conversation(&calls), &tools, &options)
        .await
        .unwrap();
    let texts: Vec<String> = out.messages.iter().map(|m| result(m).0).collect();
    assert_eq!(
        texts,
        ["third", "first", "", "third", "second", "first"],
        "each tool sees its own name (the unknown one runs nothing)"
    );
    let functions: Vec<Option<&str>> = out
        .messages
        .iter()
        .map(|m| m.as_tool().and_then(|t| t.function.as_deref()))
        .collect();
    assert_eq!(functions, names.map(Some));
    let events = log.tool_events();
    assert_eq!(events.len(), names.len());
    for e in &events {
        let called = names[e.id.trim_start_matches("call_").parse::<usize>().unwrap()];
        assert_eq!(&*e.function, called, "{e:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_call_in_a_large_stage_cancels_its_siblings() {
    let t = tool("t", true, |mut a, _c| async move {
        let n: u64 = a.required("n")?;
        if n == 7 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            return Err(FatalToolError::msg("disk full").into());
        }
        if n.is_multiple_of(2) {
            return Ok(ToolOutput::Text(n.to_string().into()));
        }
        std::future::pending::<()>().await;
        Ok(ToolOutput::default())
    });
    let log = EventLog::new();
    let msgs = conversation(&calls("t", LARGE));
    let err = execute_tools(&msgs, &[t], &ExecuteOptions::default().events(log.clone()))
        .await
        .unwrap_err();
    let ExecError::Fatal {
        cause, messages, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(cause.to_string(), "disk full");
    // Every sibling has its result in declared order: the even ones finished (or were
    // cancelled before they ran), the odd ones (hanging) were cancelled.
    assert_eq!(messages.len(), LARGE - 1);
    for (k, m) in messages.iter().enumerate() {
        let n = if k < 7 { k } else { k + 1 };
        let (text, _, error) = result(m);
        if n.is_multiple_of(2) {
            // Finished at once, unless its chunk had not been polled yet when 7 failed.
            assert!(
                text == n.to_string() || error.as_deref() == Some(CANCELLED_BY_SIBLING),
                "call {n}"
            );
        } else {
            assert_eq!(error.as_deref(), Some(CANCELLED_BY_SIBLING), "call {n}");
        }
    }
    // One completed event per call, none after the stage ended, and a note per cancelled
    // sibling.
    assert_eq!(log.tool_events().len(), LARGE);
    let cancelled = messages
        .iter()
        .filter(|m| result(m).2.as_deref() == Some(CANCELLED_BY_SIBLING))
        .count();
    let notes = log
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Info(_)))
        .count();
    assert_eq!(notes, cancelled);
}

struct Guard(Arc<AtomicUsize>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_execute_tools_aborts_a_spawned_stage() {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let (s, d) = (started.clone(), dropped.clone());
    let hang = tool("hang", true, move |_a, _c| {
        let (s, d) = (s.clone(), d.clone());
        async move {
            let _guard = Guard(d);
            s.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
            Ok(ToolOutput::default())
        }
    });
    let msgs = conversation(&calls("hang", LARGE));
    let tools = [hang];
    let opts = ExecuteOptions::default();
    let run = execute_tools(&msgs, &tools, &opts);
    tokio::select! {
        _ = run => panic!("hanging calls finished"),
        () = async {
            while started.load(Ordering::SeqCst) < LARGE {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        } => {}
    }
    // `run` was dropped: its tasks are aborted, each call's future (and guard) dropped. The
    // abort reaches a task on another worker asynchronously, so give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while dropped.load(Ordering::SeqCst) < LARGE && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        LARGE,
        "calls kept running after execute_tools was dropped"
    );
}
