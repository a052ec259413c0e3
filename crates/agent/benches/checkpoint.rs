//! What checkpoints cost (issue: "checkpoint cost per turn for a 100-message conversation,
//! full and incremental, and resume time; a checkpoint every turn must not more than double
//! W5's time per turn at 100 messages").
//!
//! The conversation is W5's (`react.rs`): a react agent whose scripted model calls `add` once
//! per turn, its messages made by a real run (system prompt, task, then an assistant call and
//! its tool result per turn) and cut at 100 messages. Measured, each through the public API
//! (a `CheckpointBinding` from `Checkpoints::bind`, on a `RunContext`) and each into a
//! `FileCheckpoints` in a temporary directory (written to a temporary file, `fsync`ed,
//! renamed into place, the directory `fsync`ed) and, to tell the I/O from the rest, into a
//! store in memory (serialisation and copies only):
//!
//! - **save**: one full checkpoint of the 100 messages (`turn_started` when one is due);
//! - **journal**: one journal write after a checkpoint of the first 98 messages: the assistant
//!   message whose call is about to run (before the batch), then it and its result (after):
//!   both writes are timed, as a turn makes both;
//! - **resume**: a fresh binding's `resume` of that checkpoint and its journal (load both,
//!   parse, rebuild the 100 messages);
//! - **parts**: where a save and a resume spend their time without I/O: the 100 messages
//!   copied (the record holds its own copy), written as JSON, read back from JSON;
//! - **per turn**: W5's time per turn (the gap between two consecutive `add` calls) of a react
//!   run given the first 89 messages, so that its 11 tool turns run at 90–110 messages,
//!   without checkpoints and with a checkpoint every turn (`every_turns(1)`, the default:
//!   a checkpoint at the top of each turn and a journal write before and after each call),
//!   interleaved in one process as W5's events on ÷ off figure is: each run times the three
//!   variants in rotating order, and the ratio is the median over runs of each run's
//!   median turn with checkpoints ÷ without.
//!
//! Usage: `checkpoint [--quick] [--runs N]`: 500 samples of each single operation (50 with
//! `--quick`) and N interleaved runs of the per-turn figures (default 300, 30 with `--quick`);
//! a few seconds in all. The temporary directory is `TMPDIR`'s (`/tmp`).

mod w5;
use w5::Recorder;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actuator_agent::checkpoint::{
    CheckpointError, CheckpointStore, Checkpoints, FileCheckpoints, LoopCounters,
};
use actuator_agent::limits::turn_limit;
use actuator_agent::{RunContext, RunOptions, react};
use actuator_model::{BoxFuture, ChatMessage, FunctionModel, Model, ModelError, ModelOutput};
use actuator_tool_core::ToolInfo;
use serde_json::json;

/// The conversation the figures are taken at.
const MESSAGES: usize = 100;
/// The per-turn runs start with this many messages (the system prompt included): 89 given,
/// the prompt added by react.
const SEEDED: usize = 90;
/// Tool turns of a per-turn run: at 90, 92, … 110 messages (10 gaps between 11 calls).
const RUN_TOOL_TURNS: usize = 11;
/// The tool results after which the model submits: those of the seeded conversation (44)
/// and the run's own.
const SUBMIT_AFTER: usize = (SEEDED - 2) / 2 + RUN_TOOL_TURNS;

/// The mock model's policy: W5's, submitting after `SUBMIT_AFTER` tool results.
fn script(input: &[ChatMessage], tools: &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError> {
    w5::script(input, tools, SUBMIT_AFTER)
}

/// A store in memory: what a checkpoint costs without the I/O (serialisation, copies).
#[derive(Default)]
struct MemoryStore(Mutex<HashMap<String, Vec<u8>>>);

impl CheckpointStore for MemoryStore {
    fn save<'a>(
        &'a self,
        key: &'a str,
        record: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            if let Ok(mut map) = self.0.lock() {
                map.insert(key.to_owned(), record);
            }
            Ok(())
        })
    }

    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Vec<u8>>, CheckpointError>> {
        Box::pin(async move { Ok(self.0.lock().ok().and_then(|m| m.get(key).cloned())) })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            if let Ok(mut map) = self.0.lock() {
                map.remove(key);
            }
            Ok(())
        })
    }
}

/// Where checkpoints go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Store {
    None,
    File,
    FileUnsynced,
    Memory,
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Store::None => "no checkpoints",
            Store::File => "checkpoint every turn, file store",
            Store::FileUnsynced => "checkpoint every turn, file store unsynced",
            Store::Memory => "checkpoint every turn, memory store",
        }
    }
}

fn react_agent(
    model: &Arc<dyn Model>,
    recorder: &Arc<Recorder>,
) -> actuator_agent::react::ReactAgent {
    react()
        .model(Arc::clone(model))
        .tools([recorder.add_tool()])
        .build()
        .expect("the react agent")
}

/// W5's conversation cut at `MESSAGES` messages, made by a real run stopped by a turn limit.
async fn conversation(model: &Arc<dyn Model>) -> Vec<ChatMessage> {
    let recorder = Arc::new(Recorder {
        stamps: Mutex::new(Vec::new()),
    });
    let agent = react_agent(model, &recorder);
    let turns = (MESSAGES - 2) / 2;
    let run = actuator_agent::run(
        &agent,
        "Add numbers, then submit.",
        [turn_limit(turns as u64)],
    )
    .await
    .expect("the conversation's run");
    let messages = run.state.messages.to_vec();
    assert_eq!(messages.len(), MESSAGES, "the conversation's length");
    messages
}

/// One react run from the seeded conversation; the gaps between its `add` calls.
async fn one_run(
    model: &Arc<dyn Model>,
    seed: &[ChatMessage],
    checkpoints: Option<&Checkpoints>,
) -> Vec<f64> {
    let recorder = Arc::new(Recorder {
        stamps: Mutex::new(Vec::with_capacity(RUN_TOOL_TURNS)),
    });
    let agent = react_agent(model, &recorder);
    let options = match checkpoints {
        Some(c) => RunOptions::new().resource(c.clone()),
        None => RunOptions::new(),
    };
    let run = actuator_agent::run(&agent, seed.to_vec(), options)
        .await
        .expect("the agent run");
    let completion = run.state.output().completion();
    assert!(
        completion.ends_with(&SUBMIT_AFTER.to_string()),
        "unexpected answer {completion:?}"
    );
    drop(run);
    let stamps = recorder
        .stamps
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    assert_eq!(stamps.len(), RUN_TOOL_TURNS);
    stamps
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64())
        .collect()
}

/// Options from the command line.
struct Args {
    quick: bool,
    runs: Option<usize>,
}

fn parse_args() -> Args {
    let mut args = Args {
        quick: false,
        runs: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => args.quick = true,
            "--runs" => args.runs = it.next().and_then(|v| v.parse().ok()),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    args
}

fn main() {
    let args = parse_args();
    let samples = if args.quick { 50 } else { 500 };
    let runs = args.runs.unwrap_or(if args.quick { 30 } else { 300 });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let model: Arc<dyn Model> = Arc::new(FunctionModel::new("mockllm/model", script));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file: Arc<dyn CheckpointStore> = Arc::new(FileCheckpoints::new(dir.path()));
    let unsynced: Arc<dyn CheckpointStore> =
        Arc::new(FileCheckpoints::new(dir.path().join("unsynced")).sync(false));
    let memory: Arc<dyn CheckpointStore> = Arc::new(MemoryStore::default());

    rt.block_on(async {
        let messages = conversation(&model).await;
        for (store, name) in [
            (&file, "file store"),
            (&unsynced, "file store unsynced"),
            (&memory, "memory store"),
        ] {
            // Warm-up (first use of the directory, the allocator), not reported.
            save(store, &messages, samples / 10).await;
            journal(store, &messages, samples / 10).await;
            resume(store, &messages, samples / 10).await;
            let (times, bytes) = save(store, &messages, samples).await;
            emit(&format!("save, 100 messages, {name}"), &times, "us");
            if Arc::ptr_eq(store, &memory) {
                let kib = bytes as f64 / 1024.0;
                result("checkpoint size, 100 messages (the record)", kib, "KiB");
            }
            emit(
                &format!("journal write, 100 messages, {name}"),
                &journal(store, &messages, samples).await,
                "us",
            );
            emit(
                &format!("resume (load + rebuild), 100 messages, {name}"),
                &resume(store, &messages, samples).await,
                "us",
            );
        }
        parts(&messages, samples);
        per_turn(
            &model,
            &messages[1..SEEDED],
            [&file, &unsynced, &memory],
            runs,
        )
        .await;
    });
    drop(dir);
}

/// `n` full checkpoints of `messages`, each timed.
/// Returns the times and the record's size in bytes.
async fn save(
    store: &Arc<dyn CheckpointStore>,
    messages: &[ChatMessage],
    n: usize,
) -> (Vec<f64>, usize) {
    let cx = RunContext::new();
    let checkpoints = Checkpoints::new(Arc::clone(store), "bench/save");
    let mut times = Vec::with_capacity(n);
    for turn in 1..=n {
        let counters = LoopCounters {
            turn: turn as u32,
            ..LoopCounters::default()
        };
        // A binding's first checkpoint is a whole one (later ones, of a conversation that
        // only grew, are journal writes).
        let binding = checkpoints.bind().expect("unbound checkpoints");
        let t = Instant::now();
        binding.turn_started(&cx, messages, counters).await;
        times.push(t.elapsed().as_secs_f64());
    }
    let saved = store.load("bench/save").await.expect("the checkpoint");
    let bytes = saved.expect("no checkpoint was saved").len();
    checkpoints.clear().await.expect("cleared");
    (times, bytes)
}

/// `n` turns' journal writes after a checkpoint of the first 98 messages: the call (99),
/// then the call and its result (100); each write timed.
async fn journal(store: &Arc<dyn CheckpointStore>, messages: &[ChatMessage], n: usize) -> Vec<f64> {
    let cx = RunContext::new();
    let checkpoints = Checkpoints::new(Arc::clone(store), "bench/journal");
    let binding = checkpoints.bind().expect("unbound checkpoints");
    let mut times = Vec::with_capacity(2 * n);
    for turn in 1..=n {
        let counters = LoopCounters {
            turn: turn as u32,
            ..LoopCounters::default()
        };
        binding
            .turn_started(&cx, &messages[..MESSAGES - 2], counters)
            .await;
        for len in [MESSAGES - 1, MESSAGES] {
            let t = Instant::now();
            binding.journal(&cx, &messages[..len], counters).await;
            times.push(t.elapsed().as_secs_f64());
        }
    }
    drop(binding);
    let journal = store
        .entries("bench/journal#journal")
        .await
        .expect("the journal");
    let entry = journal.last().expect("no journal was saved");
    // A journal entry, not a checkpoint: much smaller than the conversation.
    assert!(entry.len() * 10 < serde_json::to_vec(messages).map_or(0, |v| v.len()));
    checkpoints.clear().await.expect("cleared");
    times
}

/// `n` resumes (a fresh binding each) of a checkpoint of 98 messages and its journal of 2.
async fn resume(store: &Arc<dyn CheckpointStore>, messages: &[ChatMessage], n: usize) -> Vec<f64> {
    const KEY: &str = "bench/resume";
    {
        let cx = RunContext::new();
        let checkpoints = Checkpoints::new(Arc::clone(store), KEY);
        let binding = checkpoints.bind().expect("unbound checkpoints");
        let counters = LoopCounters {
            turn: 49,
            ..LoopCounters::default()
        };
        binding
            .turn_started(&cx, &messages[..MESSAGES - 2], counters)
            .await;
        binding.journal(&cx, messages, counters).await;
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let cx = RunContext::new();
        let checkpoints = Checkpoints::new(Arc::clone(store), KEY);
        let binding = checkpoints.bind().expect("unbound checkpoints");
        let t = Instant::now();
        let resumed = binding.resume(&cx).await;
        times.push(t.elapsed().as_secs_f64());
        let resumed = resumed.expect("a checkpoint to resume");
        assert_eq!(resumed.messages.len(), MESSAGES);
        assert!(resumed.report.in_flight.is_empty());
    }
    Checkpoints::new(Arc::clone(store), KEY)
        .clear()
        .await
        .expect("cleared");
    times
}

/// Where a save's time goes without I/O: the conversation copied (as the record holds it),
/// written as JSON, and read back (a resume's parse).
fn parts(messages: &[ChatMessage], n: usize) {
    let (mut copy, mut write, mut read) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        let copied = std::hint::black_box(messages.to_vec());
        copy.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let bytes = serde_json::to_vec(&copied).expect("the messages as JSON");
        write.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let back: Vec<ChatMessage> = serde_json::from_slice(&bytes).expect("read back");
        read.push(t.elapsed().as_secs_f64());
        assert_eq!(back.len(), MESSAGES);
    }
    emit("part: the 100 messages copied (to_vec)", &copy, "us");
    emit("part: the 100 messages written as JSON", &write, "us");
    emit("part: the 100 messages read from JSON", &read, "us");
}

/// The median of `samples` (sorted in place).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Time per turn at 90–110 messages without checkpoints and with one every turn (file
/// store, memory store), interleaved; and each with ÷ without.
async fn per_turn(
    model: &Arc<dyn Model>,
    seed: &[ChatMessage],
    [file, unsynced, memory]: [&Arc<dyn CheckpointStore>; 3],
    runs: usize,
) {
    const VARIANTS: [Store; 4] = [Store::None, Store::File, Store::FileUnsynced, Store::Memory];
    let checkpoints = |store: Store| {
        let store = match store {
            Store::None => return None,
            Store::File => file,
            Store::FileUnsynced => unsynced,
            Store::Memory => memory,
        };
        Some(Checkpoints::new(Arc::clone(store), "bench/run").every_turns(1))
    };
    // Warm-up, not reported.
    for store in VARIANTS {
        one_run(model, seed, checkpoints(store).as_ref()).await;
    }
    let mut all: [Vec<f64>; 4] = Default::default();
    let mut ratios: [Vec<f64>; 3] = Default::default();
    for run in 0..runs.max(1) {
        let mut medians = [0.0; 4];
        // Rotate which goes first, so none always follows another.
        for i in 0..4 {
            let v = (run + i) % 4;
            let checkpoints = checkpoints(VARIANTS[v]);
            let mut gaps = one_run(model, seed, checkpoints.as_ref()).await;
            if let Some(c) = &checkpoints {
                assert!(c.resumed().is_none(), "a run resumed a stale checkpoint");
            }
            all[v].extend_from_slice(&gaps);
            medians[v] = median(&mut gaps);
        }
        for (r, m) in ratios.iter_mut().zip(&medians[1..]) {
            r.push(m / medians[0]);
        }
    }
    let label = "react K=1 at 90-110 messages, interleaved";
    for (v, store) in VARIANTS.iter().enumerate() {
        emit(
            &format!(
                "{label}, {}: time per turn (gap between tool calls)",
                store.name()
            ),
            &all[v],
            "us",
        );
    }
    for (ratios, store) in ratios.iter_mut().zip(&VARIANTS[1..]) {
        let m = median(ratios);
        let row = json!({
            "workload": "checkpoint",
            "case": format!("{label}: {} / no checkpoints, time per turn (median of per-run ratios)", store.name()),
            "median": m,
            "p90": ratios[ratios.len() * 9 / 10],
            "min": ratios[0],
            "runs": ratios.len(),
            "unit": "x",
        });
        println!("RESULT {row}");
    }
}

/// Prints one `RESULT` line of a figure measured once.
fn result(case: &str, value: f64, unit: &str) {
    let row = json!({
        "workload": "checkpoint",
        "case": case,
        "median": value,
        "p90": value,
        "runs": 1,
        "unit": unit,
    });
    println!("RESULT {row}");
}

/// Prints one `RESULT` line of `samples` seconds (see [`w5::emit`]).
fn emit(case: &str, samples: &[f64], unit: &str) {
    w5::emit("checkpoint", case, samples, unit);
}
