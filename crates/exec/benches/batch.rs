//! W3 of the Python reference (`w3_batch.py`): one assistant message with N tool calls.
//!
//! Cases, as in Python: `noop` (parallel, yields once) and `sleep10` (parallel, sleeps 10 ms)
//! with N = 10, 100, 1000, and `sleep10_serial` (not parallel, so one stage per call) with
//! N = 10, 100. Reported: the wall time of one `execute_tools` and the overhead per call,
//! (wall − ideal) / N, where the ideal is 0 for `noop`, 10 ms for `sleep10` and N × 10 ms
//! for `sleep10_serial`. A fresh recording [`EventLog`] is made before each run, outside the
//! timed region. For reference, the same sleeps without Actuator: joined (parallel) and one
//! after another (serial), and from the latter the serial overhead per call beyond the
//! timer's own (Tokio's timer has 1 ms ticks, so a 10 ms sleep takes about 11 ms).
//!
//! Issue 16's figure for 1000 parallel 10 ms calls is their wall less that of the bare
//! `join_all` of the same sleeps, the two run in turn (so both see the same load) and the
//! `join_all` run as `execute_tools` is, in a spawned task: on this runtime a `join_all` on
//! the `block_on` thread finishes about 0.4 ms sooner than the same one on a worker. Both
//! differences are printed.
//!
//! Plain timed loops (a run is milliseconds long, so divan's sampling adds nothing): each
//! `execute_tools` runs in a task spawned on Tokio's multi-thread runtime (one worker per
//! core), timed inside the task. Prints one `RESULT {json}` line per figure, the format of the
//! Python scripts; `--quick` runs a fifth of the samples.
//!
//! `batch --timeline` instead times where the wall time of 1000 parallel 10 ms sleeps goes,
//! with a `sleep10` that records when and on which thread each sleep starts and ends: how long
//! until the last call reaches its sleep (the calls' work before the tool runs), the sleeps
//! themselves, and the time from the last sleep's end to the result (the work after); and in
//! how many runs one worker started every sleep (the other never joined the stage), with the
//! last start of those runs and of the others. `--current-thread` runs it on a current-thread
//! runtime instead: the stage's polled path, on one thread.
//!
//! `sleep10` also times the work of 1000 parallel calls before their tools run, without the
//! timer's ticks or the runtime's scheduling in it: the first poll of a stage's future (every
//! call's checks, pending event and first poll of its tool), on a current-thread runtime,
//! per call; once on one thread, and once on each of two threads at the same time, each with
//! its own runtime and the same tool, as concurrent samples of an evaluation run.
//!
//! With the sleeps on Tokio's 1 ms timer ticks, a stage's wall less the bare `join_all`'s is
//! mostly how late into the stage its last sleep starts: the later sleeps land on the next
//! tick as soon as the calls' work before their tools spans a tick boundary.

#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use actuator_events::EventLog;
use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef};
use actuator_tool_macros::tool;
use fixture::{noop_tool, sleep10_serial_tool, sleep10_tool};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::json;
use tokio::runtime::Runtime;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only NAME`: only the cases of one tool (`noop`, `sleep10`, `sleep10_serial`), for
    // profiling.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let scale = if quick { 0.2 } else { 1.0 };
    let runs = |count: usize| ((count as f64 * scale) as usize).max(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");

    let tenms = Duration::from_millis(10);
    if args.iter().any(|a| a == "--timeline") {
        if args.iter().any(|a| a == "--current-thread") {
            let current_thread = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a current-thread runtime");
            timeline(&current_thread, runs(30));
        } else {
            timeline(&rt, runs(30));
        }
        return;
    }
    for (n, r) in [(10, 200), (100, 100), (1000, 30)] {
        if !wanted("noop") {
            break;
        }
        case(&rt, noop_tool(), n, runs(r), Duration::ZERO);
    }
    for (n, r) in [(10, 100), (100, 50), (1000, 30)] {
        if !wanted("sleep10") {
            break;
        }
        case(&rt, sleep10_tool(), n, runs(r), tenms);
    }
    if wanted("sleep10") {
        interleaved(&rt, runs(30));
        before_tools(runs(300));
    }
    for (n, r) in [(10, 20), (100, 3)] {
        if !wanted("sleep10_serial") {
            break;
        }
        let walls = case(&rt, sleep10_serial_tool(), n, runs(r), tenms * n as u32);
        // The same sleeps one after another without Actuator: what the timer alone costs.
        let bare: Vec<f64> = (0..runs(r))
            .map(|_| {
                rt.block_on(async {
                    let t0 = Instant::now();
                    for _ in 0..n {
                        tokio::time::sleep(tenms).await;
                    }
                    t0.elapsed().as_secs_f64()
                })
            })
            .collect();
        emit(
            &format!("reference: {n} x sleep(10ms) one after another, no Actuator"),
            &bare,
            "ms",
        );
        let beyond = (median(&walls) - median(&bare)) / n as f64;
        emit(
            &format!("sleep10_serial x{n}: overhead per call beyond a bare sleep"),
            &[beyond],
            "us",
        );
    }
    for n in [10, 100, 1000] {
        if only.is_some() {
            break;
        }
        let walls: Vec<f64> = (0..runs(30))
            .map(|_| bare_join_all(&rt, n, false))
            .collect();
        emit(
            &format!("reference: join_all {n} x sleep(10ms), no Actuator"),
            &walls,
            "ms",
        );
    }
}

/// `n` 10 ms sleeps joined without Actuator, in a task spawned on the runtime (as `run_once`
/// runs `execute_tools`) or on the thread that enters it with `block_on`; returns the wall
/// time.
fn bare_join_all(rt: &Runtime, n: usize, spawned: bool) -> f64 {
    let work = async move {
        let t0 = Instant::now();
        futures_util::future::join_all(
            (0..n).map(|_| tokio::time::sleep(Duration::from_millis(10))),
        )
        .await;
        t0.elapsed().as_secs_f64()
    };
    if spawned {
        rt.block_on(rt.spawn(work)).expect("the benchmark task")
    } else {
        rt.block_on(work)
    }
}

/// The 1000 calls' handlers called directly (`ToolDef::call_args`, no executor) in 8 spawned
/// chunks, each polling its futures through a `FuturesUnordered` as a spread stage does: the
/// floor of spreading itself; returns the wall time.
fn bare_handlers(rt: &Runtime, tools: &Arc<[ToolDef]>, n: usize) -> f64 {
    const CHUNKS: usize = 8;
    let tools = Arc::clone(tools);
    rt.block_on(rt.spawn(async move {
        let t0 = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for k in 0..CHUNKS {
            let tools = Arc::clone(&tools);
            set.spawn(async move {
                let mut pending: FuturesUnordered<_> = (k * n / CHUNKS..(k + 1) * n / CHUNKS)
                    .map(|i| {
                        let args = ToolArgs::shared(Arc::new(json!({})));
                        tools[0].call_args(args, ToolContext::new(format!("call_{i}"), "sleep10"))
                    })
                    .collect();
                while let Some(r) = pending.next().await {
                    assert!(r.is_ok());
                }
            });
        }
        while set.join_next().await.is_some() {}
        t0.elapsed().as_secs_f64()
    }))
    .expect("the benchmark task")
}

/// 1000 parallel 10 ms calls against the bare `join_all` of the same sleeps, the two run in
/// turn so that both see the same load: the median of the per-pair differences, against the
/// `join_all` run as `execute_tools` is (in a spawned task: on a worker, it takes 0.4 ms
/// longer than on the `block_on` thread here) and against the one on the `block_on` thread.
fn interleaved(rt: &Runtime, runs: usize) {
    let n = 1000;
    let messages = Arc::new(batch("sleep10", n));
    let tools: Arc<[ToolDef]> = Arc::from(vec![sleep10_tool()]);
    run_once(rt, &messages, &tools);
    let (mut spawned, mut over_spawned, mut over_entered) = (Vec::new(), Vec::new(), Vec::new());
    let mut handlers_over_spawned = Vec::new();
    for _ in 0..runs {
        let ours = run_once(rt, &messages, &tools).0.as_secs_f64();
        let s = bare_join_all(rt, n, true);
        let e = bare_join_all(rt, n, false);
        let h = bare_handlers(rt, &tools, n);
        spawned.push(s);
        over_spawned.push(ours - s);
        over_entered.push(ours - e);
        handlers_over_spawned.push(h - s);
    }
    emit(
        "reference: join_all 1000 x sleep(10ms) in a spawned task, no Actuator",
        &spawned,
        "ms",
    );
    emit(
        "sleep10 x1000, interleaved: execute_tools - join_all in a spawned task",
        &over_spawned,
        "ms",
    );
    emit(
        "sleep10 x1000, interleaved: execute_tools - join_all on the block_on thread",
        &over_entered,
        "ms",
    );
    emit(
        "sleep10 x1000, interleaved: handlers in 8 spawned chunks, no executor - join_all in a spawned task",
        &handlers_over_spawned,
        "ms",
    );
}

/// The first poll of a 1000-call `sleep10` stage on a current-thread runtime (every call's
/// work up to its tool's sleep), per call, on one thread and then on two threads at once,
/// each with its own runtime; and the same for the bare `join_all` of the sleeps.
fn before_tools(runs: usize) {
    let n = 1000;
    for threads in [1, 2] {
        let per_thread: Vec<(Vec<f64>, Vec<f64>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| scope.spawn(move || first_polls(n, runs)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a first-poll thread"))
                .collect()
        });
        let ours: Vec<f64> = per_thread.iter().flat_map(|t| t.0.clone()).collect();
        let bare: Vec<f64> = per_thread.iter().flat_map(|t| t.1.clone()).collect();
        let on = if threads == 1 {
            "one thread".to_owned()
        } else {
            format!("each of {threads} threads at once")
        };
        emit(
            &format!("sleep10 x{n}, before the tools: first poll per call, {on}"),
            &ours,
            "us",
        );
        emit(
            &format!("reference: join_all {n} x sleep(10ms), first poll per sleep, {on}"),
            &bare,
            "us",
        );
    }
}

/// `runs` first polls of a fresh `execute_tools` of `n` parallel `sleep10` calls, and of a
/// bare `join_all` of `n` sleeps, on a current-thread runtime of this thread: seconds per
/// call. Each future is dropped after its first poll.
fn first_polls(n: usize, runs: usize) -> (Vec<f64>, Vec<f64>) {
    let messages = batch("sleep10", n);
    let tools = [sleep10_tool()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        let (mut ours, mut bare) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        for _ in 0..runs {
            let options = ExecuteOptions::default().events(EventLog::new());
            let stage = execute_tools(&messages, &tools, &options);
            ours.push(first_poll(stage).await / n as f64);
            let sleeps = futures_util::future::join_all(
                (0..n).map(|_| tokio::time::sleep(Duration::from_millis(10))),
            );
            bare.push(first_poll(sleeps).await / n as f64);
        }
        (ours, bare)
    })
}

/// How long the first poll of `future` takes (seconds); it must not finish there.
async fn first_poll<F: Future>(future: F) -> f64 {
    let mut future = std::pin::pin!(future);
    let t0 = Instant::now();
    let pending =
        std::future::poll_fn(|cx| std::task::Poll::Ready(future.as_mut().poll(cx).is_pending()))
            .await;
    let took = t0.elapsed().as_secs_f64();
    assert!(pending, "the stage finished at its first poll");
    took
}

/// `[user, assistant with N calls of `function`]`.
fn batch(function: &str, n: usize) -> Vec<ChatMessage> {
    let calls = (0..n)
        .map(|i| ToolCall::new(format!("call_{i}"), function, json!({})))
        .collect();
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(calls);
    vec![
        ChatMessage::user("go"),
        ChatMessage::Assistant(Box::new(assistant)),
    ]
}

/// Runs one case: a checked warm-up, then `runs` timed runs; returns the wall times.
fn case(rt: &Runtime, tool: ToolDef, n: usize, runs: usize, ideal: Duration) -> Vec<f64> {
    let function = tool.name().to_owned();
    let messages = Arc::new(batch(&function, n));
    let tools: Arc<[ToolDef]> = Arc::from(vec![tool]);

    let (_, result) = run_once(rt, &messages, &tools);
    assert_eq!(result.len(), n);
    for (i, m) in result.iter().enumerate() {
        assert_eq!(m.text(), "ok");
        let id = m.as_tool().and_then(|t| t.tool_call_id.as_deref());
        assert_eq!(
            id,
            Some(format!("call_{i}").as_str()),
            "results come in declared order"
        );
    }

    let walls: Vec<f64> = (0..runs)
        .map(|_| run_once(rt, &messages, &tools).0.as_secs_f64())
        .collect();
    emit(
        &format!("{function} x{n}: wall per execute_tools"),
        &walls,
        "ms",
    );
    let ideal = ideal.as_secs_f64();
    let overhead: Vec<f64> = walls.iter().map(|w| (w - ideal) / n as f64).collect();
    emit(
        &format!("{function} x{n}: overhead per call (wall-ideal)/N"),
        &overhead,
        "us",
    );
    walls
}

/// The median of some samples.
fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// One `execute_tools` in a spawned task, with a fresh event log; the wall time is taken
/// inside the task.
fn run_once(
    rt: &Runtime,
    messages: &Arc<Vec<ChatMessage>>,
    tools: &Arc<[ToolDef]>,
) -> (Duration, Vec<ChatMessage>) {
    let messages = Arc::clone(messages);
    let tools = Arc::clone(tools);
    let options = ExecuteOptions::default().events(EventLog::new());
    let task = rt.spawn(async move {
        let t0 = Instant::now();
        let result = execute_tools(&messages, &tools, &options).await;
        let wall = t0.elapsed();
        (wall, result.expect("execute_tools").messages)
    });
    rt.block_on(task).expect("the benchmark task")
}

/// Prints one `RESULT` line: median and 90th percentile (nearest rank) of `samples` seconds.
fn emit(case: &str, samples: &[f64], unit: &str) {
    let scale = match unit {
        "ms" => 1e3,
        "us" => 1e6,
        _ => 1.0,
    };
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let r = ((q / 100.0 * sorted.len() as f64) + 0.4999999).round() as usize;
        sorted[r.clamp(1, sorted.len()) - 1]
    };
    let row = json!({
        "workload": "W3",
        "case": case,
        "median": rank(50.0) * scale,
        "p90": rank(90.0) * scale,
        "min": sorted[0] * scale,
        "runs": sorted.len(),
        "unit": unit,
    });
    println!("RESULT {row}");
}

/// When each timed sleep started and ended, and on which thread it started.
static SLEEPS: Mutex<Vec<(Instant, Instant, ThreadId)>> = Mutex::new(Vec::new());

/// Sleep for 10 ms, recording when and where.
#[tool(name = "sleep10", parallel)]
async fn timed_sleep10() -> String {
    let start = Instant::now();
    let thread = std::thread::current().id();
    tokio::time::sleep(Duration::from_millis(10)).await;
    if let Ok(mut sleeps) = SLEEPS.lock() {
        sleeps.push((start, Instant::now(), thread));
    }
    "ok".to_owned()
}

/// The timeline of 1000 parallel sleeps: medians over `runs` of when, from the start of
/// `execute_tools`, the first and last sleeps started, the last one ended, and the result came.
fn timeline(rt: &Runtime, runs: usize) {
    let n = 1000;
    let messages = Arc::new(batch("sleep10", n));
    let tools: Arc<[ToolDef]> = Arc::from(vec![timed_sleep10_tool()]);
    let mut rows: [Vec<f64>; 5] = Default::default();
    // The last start of the runs in which one thread started every sleep, and of the others.
    let (mut alone, mut shared) = (Vec::new(), Vec::new());
    for i in 0..=runs {
        if let Ok(mut sleeps) = SLEEPS.lock() {
            sleeps.clear();
        }
        let m = Arc::clone(&messages);
        let t = Arc::clone(&tools);
        let options = ExecuteOptions::default().events(EventLog::new());
        let (t0, end) = rt
            .block_on(rt.spawn(async move {
                let t0 = Instant::now();
                let result = execute_tools(&m, &t, &options).await;
                assert_eq!(result.map(|r| r.messages.len()).ok(), Some(n));
                (t0, Instant::now())
            }))
            .expect("the benchmark task");
        let sleeps = SLEEPS.lock().map(|s| s.clone()).unwrap_or_default();
        if i == 0 {
            continue; // warm-up
        }
        let at = |x: Instant| x.duration_since(t0).as_secs_f64();
        let first_start = sleeps.iter().map(|s| s.0).min().map_or(f64::NAN, at);
        let last_start = sleeps.iter().map(|s| s.0).max().map_or(f64::NAN, at);
        let first_end = sleeps.iter().map(|s| s.1).min().map_or(f64::NAN, at);
        let last_end = sleeps.iter().map(|s| s.1).max().map_or(f64::NAN, at);
        for (row, v) in rows
            .iter_mut()
            .zip([first_start, last_start, first_end, last_end, at(end)])
        {
            row.push(v);
        }
        let one_thread = sleeps.windows(2).all(|w| w[0].2 == w[1].2);
        if one_thread { &mut alone } else { &mut shared }.push(last_start);
    }
    let names = [
        "first sleep starts",
        "last sleep starts",
        "first sleep ends",
        "last sleep ends",
        "execute_tools returns",
    ];
    for (name, row) in names.iter().zip(&rows) {
        emit(&format!("timeline sleep10 x{n}: {name}"), row, "ms");
    }
    println!(
        "timeline sleep10 x{n}: one thread started every sleep in {} runs of {}",
        alone.len(),
        runs
    );
    for (name, row) in [("one thread", &alone), ("several threads", &shared)] {
        if !row.is_empty() {
            emit(
                &format!("timeline sleep10 x{n}: last sleep starts, runs on {name}"),
                row,
                "ms",
            );
        }
    }
}
