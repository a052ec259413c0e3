//! W5 of the Python reference (`w5_react.py`): K react agents at once over a scripted model.
//!
//! Each agent calls `add` 50 times and then submits: 51 model turns. The model is a
//! [`FunctionModel`] that decides from the conversation, as the Python `mockllm` callable does:
//! it counts the tool results so far, calls `add(x=done, y=1)` until there are 50, then calls
//! `submit`, and reports usage on every output. Each agent has its own `add` (a `#[tool]`
//! method on a per-agent recorder) that timestamps its calls: the gap between two consecutive
//! calls of one agent is one full turn (generate, execute the call, loop bookkeeping).
//!
//! The K agents are spawned as tasks on Tokio's multi-thread runtime (one worker per core) and
//! run with `actuator_agent::run(&agent, task, &[])`; each task builds its agent first, then
//! starts its clock. Reported: time per turn (all gaps, turns 2–11, turns 41–50), the run of one
//! agent, the wall time of the agent phase (first start to last end) and the throughput,
//! K × 51 turns / agent phase.
//!
//! `--model ready` (default) uses the `FunctionModel` as it is: its output is ready at once,
//! so nothing in a turn waits and each task runs its agent to the end in one poll; agents
//! spawned together then run one after another on each worker. `--model yield` wraps it in a
//! model that yields to the runtime once per generation, as a model behind a network would:
//! then all K agents are in flight at once, interleaved, and all K conversations are in
//! memory together, as in Python. `--events` sends every event to a sink that counts them
//! (by default `run` has no sink). `--hold` prints `HOLD` at the end and waits for a line on
//! stdin, so that the parent can read this process's peak RSS (`VmHWM` in
//! `/proc/<pid>/status`) from outside before it exits; `cargo xtask bench` runs each K in its
//! own process this way.
//!
//! `--sizes` prints the inline sizes of the conversation's types instead.
//!
//! `--interleave` measures the cost of events as a ratio that the machine's drifting speed
//! does not skew: each run times K agents without events and K with, in alternating order, in
//! the same process; reported are both sets of turn times and, per run, events-on ÷ events-off
//! of the median turn (median over runs). With `--subscriber`, the events go instead to a
//! live subscriber, as a terminal view would take them (issue 37): each run has its own
//! `EventStream`, read by a task of its own while the agent works, and the model streams
//! (the `FunctionModel` reports each output's tool call as a delta when a sink wants deltas).
//!
//! Usage: `react --k 100 --runs 3 [--model yield] [--events | --interleave [--subscriber]]
//! [--hold]`.

#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;

mod w5;
use w5::Recorder;

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_agent::{RunContext, react};
use actuator_events::{Event, EventSink, EventStream};
use actuator_model::{
    BoxFuture, ChatMessage, FunctionModel, GenerateRequest, Model, ModelError, ModelOutput,
    ToolCall,
};
use actuator_tool_core::ToolInfo;
use serde_json::{Map, json};

/// Tool turns per agent; the agent then submits, for 51 model turns.
const TOOL_TURNS: usize = 50;
/// Model turns per agent.
const MODEL_TURNS: usize = TOOL_TURNS + 1;

/// The mock model's policy: W5's, submitting after `TOOL_TURNS` tool results.
fn script(input: &[ChatMessage], tools: &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError> {
    w5::script(input, tools, TOOL_TURNS)
}

/// A model that yields to the runtime once before each generation, like a network round trip.
struct Yielding(FunctionModel);

impl Model for Yielding {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.0.generate(request).await
        })
    }
}

/// An event sink that counts events and keeps none.
#[derive(Default)]
struct Counter(AtomicU64);

impl EventSink for Counter {
    fn emit(&self, _event: Event) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Where a run's events go.
#[derive(Clone)]
enum Events {
    Off,
    /// To one counting sink shared by every run.
    Counted(Arc<Counter>),
    /// To each run's own subscriber, read while the run goes on.
    Subscribed,
}

/// What one agent's run measured.
struct AgentTiming {
    start: Instant,
    end: Instant,
    stamps: Vec<Instant>,
}

/// Builds one agent, runs it, checks its answer and returns its timing.
async fn one_agent(model: Arc<dyn Model>, events: Events) -> AgentTiming {
    let recorder = Arc::new(Recorder {
        stamps: Mutex::new(Vec::with_capacity(TOOL_TURNS)),
    });
    let agent = react()
        .model(model)
        .tools([recorder.add_tool()])
        .build()
        .expect("the react agent");
    let mut reader = None;
    let cx = match events {
        Events::Counted(sink) => RunContext::with_events(sink),
        Events::Off => RunContext::new(),
        Events::Subscribed => {
            let (sink, mut stream) = EventStream::new();
            reader = Some(tokio::spawn(async move {
                let mut n = 0u64;
                while stream.recv().await.is_some() {
                    n += 1;
                }
                (n, stream.lost())
            }));
            RunContext::with_events(sink)
        }
    };
    let start = Instant::now();
    let run = cx
        .run(&agent, "Add numbers, then submit.", ())
        .await
        .expect("the agent run");
    let end = Instant::now();
    drop(cx);
    if let Some(reader) = reader {
        let (n, lost) = reader.await.expect("the subscriber");
        // Every turn's events and its delta reached the subscriber.
        assert!(
            n >= 4 * MODEL_TURNS as u64,
            "the subscriber read {n} events"
        );
        assert_eq!(
            (lost.deltas, lost.events),
            (0, 0),
            "the subscriber lost events"
        );
    }
    let output = run.state.output();
    let completion = output.completion();
    assert!(
        completion.ends_with("50"),
        "unexpected answer {completion:?}"
    );
    drop(run);
    let stamps = recorder
        .stamps
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    assert_eq!(stamps.len(), TOOL_TURNS);
    AgentTiming { start, end, stamps }
}

/// Runs K agents at once; returns each agent's timing.
async fn run_k(k: usize, model: &Arc<dyn Model>, events: &Events) -> Vec<AgentTiming> {
    let handles: Vec<_> = (0..k)
        .map(|_| tokio::spawn(one_agent(Arc::clone(model), events.clone())))
        .collect();
    let mut out = Vec::with_capacity(k);
    for h in handles {
        out.push(h.await.expect("an agent task"));
    }
    out
}

/// Options from the command line.
struct Args {
    k: usize,
    runs: usize,
    yielding: bool,
    events: bool,
    interleave: bool,
    subscriber: bool,
    hold: bool,
    sizes: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        k: 1,
        runs: 3,
        yielding: false,
        events: false,
        interleave: false,
        subscriber: false,
        hold: false,
        sizes: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--k" => args.k = it.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            "--runs" => args.runs = it.next().and_then(|v| v.parse().ok()).unwrap_or(3),
            "--model" => args.yielding = it.next().as_deref() == Some("yield"),
            "--events" => args.events = true,
            "--interleave" => args.interleave = true,
            "--subscriber" => args.subscriber = true,
            "--hold" => args.hold = true,
            "--sizes" => args.sizes = true,
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    args
}

fn main() {
    let args = parse_args();
    if args.sizes {
        sizes();
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let base = FunctionModel::new("mockllm/model", script);
    let model: Arc<dyn Model> = if args.yielding {
        Arc::new(Yielding(base))
    } else {
        Arc::new(base)
    };
    let counter = args.events.then(|| Arc::new(Counter::default()));
    let events = counter.clone().map_or(Events::Off, Events::Counted);

    // Warm-up (first use of the tool specs, the validator, the allocator), not reported.
    rt.block_on(run_k(1, &model, &events));
    if args.interleave {
        interleaved(&rt, &args, &model);
        return;
    }

    let mut turns = Vec::new();
    let mut early = Vec::new();
    let mut late = Vec::new();
    let mut agent_runs = Vec::new();
    let mut phases = Vec::new();
    let mut throughputs = Vec::new();
    for _ in 0..args.runs.max(1) {
        let timings = rt.block_on(run_k(args.k, &model, &events));
        let first = timings.iter().map(|t| t.start).min().expect("an agent");
        let last = timings.iter().map(|t| t.end).max().expect("an agent");
        let phase = last.duration_since(first).as_secs_f64();
        phases.push(phase);
        throughputs.push((args.k * MODEL_TURNS) as f64 / phase);
        for t in &timings {
            agent_runs.push(t.end.duration_since(t.start).as_secs_f64());
            let gaps: Vec<f64> = t
                .stamps
                .windows(2)
                .map(|w| w[1].duration_since(w[0]).as_secs_f64())
                .collect();
            early.extend_from_slice(&gaps[..10]);
            late.extend_from_slice(&gaps[gaps.len() - 10..]);
            turns.extend(gaps);
        }
    }

    let label = format!(
        "react K={}{}{}",
        args.k,
        if args.yielding {
            ", yielding model"
        } else {
            ""
        },
        if args.events { ", events counted" } else { "" }
    );
    emit(
        &format!("{label}: time per turn (gap between tool calls)"),
        &turns,
        "us",
    );
    emit(&format!("{label}: time per turn, turns 2-11"), &early, "us");
    emit(&format!("{label}: time per turn, turns 41-50"), &late, "us");
    emit(
        &format!("{label}: agent run (51 model turns)"),
        &agent_runs,
        "ms",
    );
    emit(
        &format!("{label}: wall of agent phase (all K)"),
        &phases,
        "ms",
    );
    throughputs.sort_by(f64::total_cmp);
    let row = json!({
        "workload": "W5",
        "case": format!("{label}: throughput (turns/s, agent phase)"),
        "median": throughputs[throughputs.len() / 2],
        "p90": throughputs[throughputs.len() / 10],
        "runs": throughputs.len(),
        "unit": "turns/s",
        "k": args.k,
    });
    println!("RESULT {row}");
    if let Some(counter) = &counter {
        let per_agent =
            counter.0.load(Ordering::Relaxed) as f64 / ((args.runs + 1) * args.k) as f64;
        note(&format!("{per_agent:.0} events per agent"));
    }

    if args.hold {
        println!("HOLD");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
    }
    // Dropping a runtime with 10 000 finished tasks is quick, but give it a bound anyway.
    rt.shutdown_timeout(Duration::from_secs(5));
}

/// The gaps between one agent's consecutive tool calls: its turn times.
fn gaps(t: &AgentTiming) -> Vec<f64> {
    t.stamps
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64())
        .collect()
}

/// The median of `samples` (sorted in place).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// `--interleave`: runs without and with events alternately, and reports their ratio.
fn interleaved(rt: &tokio::runtime::Runtime, args: &Args, model: &Arc<dyn Model>) {
    let sink = if args.subscriber {
        // Its first use (the stream's buffer, the reader task) warmed up too.
        rt.block_on(run_k(1, model, &Events::Subscribed));
        Events::Subscribed
    } else {
        Events::Counted(Arc::new(Counter::default()))
    };
    let (mut off, mut on, mut early, mut late, mut ratios) = (
        Vec::new(),
        Vec::new(),
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
        Vec::new(),
    );
    for run in 0..args.runs.max(1) {
        let mut medians = [0.0; 2];
        // Alternate which goes first, so neither always follows the other.
        for i in 0..2 {
            let with_events = (run + i) % 2 == 1;
            let events = if with_events { &sink } else { &Events::Off };
            let mut turns = Vec::new();
            for t in rt.block_on(run_k(args.k, model, events)) {
                let g = gaps(&t);
                early[usize::from(with_events)].extend_from_slice(&g[..10]);
                late[usize::from(with_events)].extend_from_slice(&g[g.len() - 10..]);
                turns.extend(g);
            }
            let all = if with_events { &mut on } else { &mut off };
            all.extend_from_slice(&turns);
            medians[usize::from(with_events)] = median(&mut turns);
        }
        ratios.push(medians[1] / medians[0]);
    }
    let label = format!("react K={}, interleaved", args.k);
    let (on_name, ratio_name) = if args.subscriber {
        ("streaming subscriber", "streaming subscriber / events off")
    } else {
        ("events counted", "events on / off")
    };
    for (name, turns, early, late) in [
        ("events off", &off, &early[0], &late[0]),
        (on_name, &on, &early[1], &late[1]),
    ] {
        emit(
            &format!("{label}, {name}: time per turn (gap between tool calls)"),
            turns,
            "us",
        );
        emit(
            &format!("{label}, {name}: time per turn, turns 2-11"),
            early,
            "us",
        );
        emit(
            &format!("{label}, {name}: time per turn, turns 41-50"),
            late,
            "us",
        );
    }
    let [early_off, early_on] = early.each_mut().map(|v| median(v));
    let [late_off, late_on] = late.each_mut().map(|v| median(v));
    let row = json!({
        "workload": "W5",
        "case": format!("{label}: {ratio_name}, time per turn (median of per-run ratios)"),
        "median": median(&mut ratios),
        "p90": ratios[ratios.len() * 9 / 10],
        "min": ratios[0],
        "runs": ratios.len(),
        "unit": "x",
    });
    println!("RESULT {row}");
    note(&format!(
        "{ratio_name}, medians of all runs: turns 2-11 {:.3}x, turns 41-50 {:.3}x",
        early_on / early_off,
        late_on / late_off
    ));
}

/// Prints the inline sizes of the values a conversation is made of.
fn sizes() {
    use std::mem::size_of;
    let rows = [
        ("ChatMessage", size_of::<ChatMessage>()),
        (
            "ChatMessageAssistant",
            size_of::<actuator_model::ChatMessageAssistant>(),
        ),
        (
            "ChatMessageTool",
            size_of::<actuator_model::ChatMessageTool>(),
        ),
        ("ToolCall", size_of::<ToolCall>()),
        ("ModelOutput", size_of::<ModelOutput>()),
        (
            "serde_json::Map",
            size_of::<Map<String, serde_json::Value>>(),
        ),
        ("serde_json::Value", size_of::<serde_json::Value>()),
    ];
    for (name, size) in rows {
        note(&format!("size_of::<{name}>() = {size}"));
    }
}

/// A note for people, on stdout so the workspace lint against `eprintln!` is kept.
fn note(text: &str) {
    println!("# {text}");
}

/// Prints one `RESULT` line of `samples` seconds (see [`w5::emit`]).
fn emit(case: &str, samples: &[f64], unit: &str) {
    w5::emit("W5", case, samples, unit);
}
