//! Staging, declared order, cancellation, and a proptest over random batches.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actuator_exec::{CANCELLED_BY_SIBLING, ExecError, ExecuteOptions, execute_tools, plan_stages};
use actuator_tool_core::{FatalToolError, ToolDef, ToolError, ToolOutput};
use common::{conversation, result, tool};
use proptest::prelude::*;
use serde_json::json;
use tokio::time::Instant;

/// A tool that records (call index `n`, start, end) in virtual time and sleeps 10 ms.
fn timed(
    name: &str,
    parallel: bool,
    log: Arc<Mutex<Vec<(u64, u128, u128)>>>,
    origin: Instant,
) -> ToolDef {
    tool(name, parallel, move |mut a, _c| {
        let log = log.clone();
        async move {
            let n: u64 = a.required("n")?;
            let start = origin.elapsed().as_millis();
            tokio::time::sleep(Duration::from_millis(10)).await;
            log.lock()
                .unwrap()
                .push((n, start, origin.elapsed().as_millis()));
            Ok(ToolOutput::Text(n.to_string().into()))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn the_reference_staging_example() {
    // [P, P, S, P, unknown, P] → {0,1} → {2} → {3} → {4} → {5}
    assert_eq!(
        plan_stages(&[true, true, false, true, false, true]),
        vec![0..2, 2..3, 3..4, 4..5, 5..6]
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let origin = Instant::now();
    let tools = [
        timed("p", true, log.clone(), origin),
        timed("s", false, log.clone(), origin),
    ];
    let msgs = conversation(&[
        ("p", json!({"n": 0})),
        ("p", json!({"n": 1})),
        ("s", json!({"n": 2})),
        ("p", json!({"n": 3})),
        ("unknown", json!({"n": 4})),
        ("p", json!({"n": 5})),
    ]);
    let out = execute_tools(&msgs, &tools, &ExecuteOptions::default())
        .await
        .unwrap();
    let mut starts: Vec<(u64, u128, u128)> = log.lock().unwrap().clone();
    starts.sort();
    // Virtual time: 0 and 1 run together; every later stage starts when the previous ended.
    assert_eq!(
        starts,
        vec![
            (0, 0, 10),
            (1, 0, 10),
            (2, 10, 20),
            (3, 20, 30),
            (5, 30, 40)
        ]
    );
    assert_eq!(out.messages.len(), 6);
    assert_eq!(
        result(&out.messages[4]).2.as_deref(),
        Some("Tool unknown not found")
    );
    let ids: Vec<String> = out
        .messages
        .iter()
        .map(|m| {
            m.as_tool()
                .unwrap()
                .tool_call_id
                .as_deref()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, (0..6).map(|i| format!("call_{i}")).collect::<Vec<_>>());
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_declared_order_whatever_finishes_first() {
    let finished = Arc::new(Mutex::new(Vec::new()));
    let f = finished.clone();
    let slow_first = tool("sleep", true, move |mut a, _c| {
        let f = f.clone();
        async move {
            let n: u64 = a.required("n")?;
            tokio::time::sleep(Duration::from_millis(n)).await;
            f.lock().unwrap().push(n);
            Ok(ToolOutput::Text(n.to_string().into()))
        }
    });
    let msgs = conversation(&[
        ("sleep", json!({"n": 30})),
        ("sleep", json!({"n": 20})),
        ("sleep", json!({"n": 10})),
    ]);
    let out = execute_tools(&msgs, &[slow_first], &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(*finished.lock().unwrap(), vec![10, 20, 30]);
    let texts: Vec<String> = out.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, vec!["30", "20", "10"]);
}

#[tokio::test(start_paused = true)]
async fn a_fatal_error_cancels_siblings_and_skips_later_stages() {
    let later_ran = Arc::new(AtomicBool::new(false));
    let lr = later_ran.clone();
    let tools = [
        common::sleeper("slow", true),
        tool("quick", true, |_a, _c| async {
            Ok(ToolOutput::Text("quick".into()))
        }),
        tool("fatal", true, |_a, _c| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Err::<ToolOutput, _>(FatalToolError::msg("disk full").into())
        }),
        tool("later", false, move |_a, _c| {
            lr.store(true, Ordering::SeqCst);
            async { Ok(ToolOutput::Text("later".into())) }
        }),
    ];
    let msgs = conversation(&[
        ("quick", json!({})),
        ("slow", json!({"n": 1000})),
        ("fatal", json!({})),
        ("later", json!({})),
    ]);
    let err = execute_tools(&msgs, &tools, &ExecuteOptions::default())
        .await
        .unwrap_err();
    let ExecError::Fatal {
        function,
        cause,
        messages,
        ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(function, "fatal");
    assert_eq!(cause.to_string(), "disk full");
    assert!(!later_ran.load(Ordering::SeqCst), "a later stage ran");
    // Partial results in declared order: the finished sibling, the cancelled one.
    assert_eq!(messages.len(), 2);
    assert_eq!(result(&messages[0]), ("quick".into(), None, None));
    assert_eq!(
        result(&messages[1]),
        (
            String::new(),
            Some("cancelled".into()),
            Some(CANCELLED_BY_SIBLING.into())
        )
    );
    assert_eq!(
        CANCELLED_BY_SIBLING,
        "Tool call cancelled because a parallel sibling tool call raised an exception."
    );
}

/// The stages that do not run all their calls joined (capped by `max_concurrency`, or over the
/// joined size) stop the same way: finished siblings keep their results, the others are
/// cancelled.
#[tokio::test(start_paused = true)]
async fn a_fatal_error_cancels_siblings_of_capped_and_large_stages() {
    let tools = [
        common::sleeper("slow", true),
        tool("quick", true, |_a, _c| async {
            Ok(ToolOutput::Text("quick".into()))
        }),
        tool("fatal", true, |_a, _c| async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            Err::<ToolOutput, _>(FatalToolError::msg("disk full").into())
        }),
    ];
    let capped: Vec<(&str, serde_json::Value)> = vec![
        ("quick", json!({})),
        ("fatal", json!({})),
        ("slow", json!({"n": 1000})),
    ];
    let mut large: Vec<(&str, serde_json::Value)> = (0..40).map(|_| ("quick", json!({}))).collect();
    large.push(("slow", json!({"n": 1000})));
    large.push(("fatal", json!({})));
    for (calls, options) in [
        (capped, ExecuteOptions::default().max_concurrency(2)),
        (large, ExecuteOptions::default()),
    ] {
        let msgs = conversation(&calls);
        let err = execute_tools(&msgs, &tools, &options).await.unwrap_err();
        let ExecError::Fatal {
            function, messages, ..
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!(function, "fatal");
        let siblings: Vec<&str> = calls
            .iter()
            .map(|(f, _)| *f)
            .filter(|f| *f != "fatal")
            .collect();
        assert_eq!(messages.len(), siblings.len());
        for (m, f) in messages.iter().zip(siblings) {
            let (text, _, error) = result(m);
            if f == "quick" {
                assert_eq!((text.as_str(), error), ("quick", None));
            } else {
                assert_eq!(error.as_deref(), Some(CANCELLED_BY_SIBLING));
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_panic_cancels_siblings_too() {
    let tools = [
        common::sleeper("slow", true),
        tool("boom", true, |_a, _c| async {
            if true {
                panic!("boom");
            }
            Ok(ToolOutput::default())
        }),
    ];
    let msgs = conversation(&[("slow", json!({"n": 50})), ("boom", json!({}))]);
    let err = execute_tools(&msgs, &tools, &ExecuteOptions::default())
        .await
        .unwrap_err();
    let ExecError::Fatal {
        cause, messages, ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert!(cause.is_panic());
    assert_eq!(
        result(&messages[0]).2.as_deref(),
        Some(CANCELLED_BY_SIBLING)
    );
}

#[tokio::test(start_paused = true)]
async fn recoverable_errors_do_not_stop_siblings() {
    let tools = [
        common::sleeper("slow", true),
        tool("bad", true, |_a, _c| async {
            Err::<ToolOutput, _>(ToolError::new("nope").into())
        }),
    ];
    let msgs = conversation(&[
        ("slow", json!({"s": "done"})),
        ("bad", json!({})),
        ("slow", json!({"s": "also"})),
    ]);
    let out = execute_tools(&msgs, &tools, &ExecuteOptions::default())
        .await
        .unwrap();
    let texts: Vec<_> = out.messages.iter().map(result).collect();
    assert_eq!(texts[0].0, "done");
    assert_eq!(texts[1].2.as_deref(), Some("nope"));
    assert_eq!(texts[2].0, "also");
}

struct Guard(Arc<AtomicBool>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn dropping_the_future_cancels_calls_in_flight() {
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    let (d, s) = (dropped.clone(), started.clone());
    let hang = tool("hang", true, move |_a, _c| {
        let (d, s) = (d.clone(), s.clone());
        async move {
            let _guard = Guard(d);
            s.notify_one();
            std::future::pending::<()>().await;
            Ok(ToolOutput::default())
        }
    });
    let msgs = conversation(&[("hang", json!({})), ("hang", json!({}))]);
    let tools = [hang];
    let opts = ExecuteOptions::default();
    let run = execute_tools(&msgs, &tools, &opts);
    tokio::select! {
        _ = run => panic!("a hanging call finished"),
        () = started.notified() => {}
    }
    // `run` was dropped by select!: the call's future, and its guard, are gone.
    assert!(
        dropped.load(Ordering::SeqCst),
        "the call kept running after its future was dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_cap_bounds_a_stage() {
    let now = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (n, p) = (now.clone(), peak.clone());
    let t = tool("t", true, move |_a, _c| {
        let (n, p) = (n.clone(), p.clone());
        async move {
            let c = n.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(c, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(10)).await;
            n.fetch_sub(1, Ordering::SeqCst);
            Ok(ToolOutput::default())
        }
    });
    let calls: Vec<(&str, serde_json::Value)> = (0..10).map(|_| ("t", json!({}))).collect();
    let msgs = conversation(&calls);
    let started = Instant::now();
    let out = execute_tools(
        &msgs,
        std::slice::from_ref(&t),
        &ExecuteOptions::default().max_concurrency(3),
    )
    .await
    .unwrap();
    assert_eq!(out.messages.len(), 10);
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert_eq!(started.elapsed().as_millis(), 40);
    peak.store(0, Ordering::SeqCst);
    execute_tools(&msgs, &[t], &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 10);
}

#[derive(Debug, Clone)]
struct Spec {
    parallel: bool,
    outcome: u8, // 0 ok, 1 tool error, 2 unknown tool
    delay: u64,
}

fn arb_spec() -> impl Strategy<Value = Spec> {
    (any::<bool>(), 0u8..3, 0u64..30).prop_map(|(parallel, outcome, delay)| Spec {
        parallel,
        outcome,
        delay,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_batches_keep_order_staging_and_one_result_per_call(specs in prop::collection::vec(arb_spec(), 1..12)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        rt.block_on(async move {
            let log = Arc::new(Mutex::new(Vec::<(usize, u128, u128)>::new()));
            let origin = Instant::now();
            let make = |name: &str, parallel: bool| {
                let log = log.clone();
                tool(name, parallel, move |mut a, _c| {
                    let log = log.clone();
                    async move {
                        let n: u64 = a.required("n")?;
                        let s: String = a.required("s")?;
                        let start = origin.elapsed().as_millis();
                        let (index, delay) = (n / 1000, n % 1000);
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        log.lock().unwrap().push((index as usize, start, origin.elapsed().as_millis()));
                        if s == "fail" {
                            return Err(ToolError::new(format!("fail {index}")).into());
                        }
                        Ok(ToolOutput::Text(format!("ok {index}").into()))
                    }
                })
            };
            let tools = [make("par", true), make("ser", false)];
            let calls: Vec<(&str, serde_json::Value)> = specs.iter().enumerate().map(|(i, s)| {
                let name = match (s.outcome, s.parallel) { (2, _) => "missing", (_, true) => "par", (_, false) => "ser" };
                let kind = if s.outcome == 1 { "fail" } else { "ok" };
                (name, json!({"n": i as u64 * 1000 + s.delay, "s": kind}))
            }).collect();
            let out = execute_tools(&conversation(&calls), &tools, &ExecuteOptions::default()).await.unwrap();
            // One result per call, in declared order, with the right outcome.
            assert_eq!(out.messages.len(), specs.len());
            for (i, (m, s)) in out.messages.iter().zip(&specs).enumerate() {
                let t = m.as_tool().unwrap();
                assert_eq!(t.tool_call_id.as_deref(), Some(format!("call_{i}").as_str()));
                match s.outcome {
                    0 => assert_eq!(m.text(), format!("ok {i}")),
                    1 => assert_eq!(t.error.as_ref().unwrap().message, format!("fail {i}")),
                    _ => assert_eq!(t.error.as_ref().unwrap().message, "Tool missing not found"),
                }
            }
            // Staging: each stage starts when the previous stage's last call ended.
            let parallel: Vec<bool> = specs.iter().map(|s| s.parallel && s.outcome != 2).collect();
            let times = log.lock().unwrap().clone();
            let mut stage_end = 0u128;
            for stage in plan_stages(&parallel) {
                let members: Vec<_> = times.iter().filter(|(i, _, _)| stage.contains(i)).collect();
                for (_, start, _) in &members {
                    assert_eq!(*start, stage_end, "stage {stage:?} started early or late");
                }
                if let Some(end) = members.iter().map(|(_, _, e)| *e).max() {
                    stage_end = end;
                }
            }
        });
    }
}
