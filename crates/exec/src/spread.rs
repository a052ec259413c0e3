//! Large parallel stages spread over the runtime's workers.
//!
//! A stage's calls are normally futures polled by `execute_tools`' own task: cheap, but all of
//! the calls' work (before and after their tools wait) then runs on one core. A large stage on
//! a multi-thread runtime is split into a few contiguous chunks, each a spawned task polling
//! its calls as the small path does, so that this work is shared by every worker while
//! spawning stays O(chunks), not O(calls). The guarantees stay those of the polled path:
//! results are slotted by index (declared order), a fatal failure aborts the siblings, and
//! dropping `execute_tools` drops the [`JoinSet`], which aborts every call in flight.

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::__private::panic_message;
use actuator_tool_core::{FatalToolError, ToolDef, ToolKind};
use futures_util::FutureExt;
use futures_util::future::try_join_all;
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::call::{Runner, Stop, ToolNames};
use crate::options::ExecuteOptions;
use crate::runner::CallDone;

/// The fewest calls of a parallel stage that are spread. Spreading costs a copy of the
/// stage's calls and a few spawns and cross-thread wake-ups, which only pays when there are
/// enough calls for the other workers' share to outweigh it; the stages models usually send
/// (a handful of calls) stay on the polled path.
pub(crate) const SPREAD_MIN_CALLS: usize = 64;

/// Chunks per worker: more than one, so that work stealing can even out chunks that finish
/// at different times.
const CHUNKS_PER_WORKER: usize = 4;

/// The fewest calls in a chunk, so that a chunk's spawn stays small against its calls.
const MIN_CHUNK: usize = 16;

/// The workers a parallel stage of `calls` calls is spread over, when it is: it is large,
/// and the current runtime has more than one worker.
pub(crate) fn spreads(calls: usize) -> Option<usize> {
    if calls < SPREAD_MIN_CALLS {
        return None;
    }
    let handle = Handle::try_current().ok()?;
    let workers = handle.metrics().num_workers();
    (handle.runtime_flavor() == RuntimeFlavor::MultiThread && workers > 1).then_some(workers)
}

/// What the chunks of one stage share: spawned tasks cannot borrow the caller's conversation,
/// tools and options, so they own copies, made once per stage: the stage's calls, the tools
/// and options (`Arc`s inside), the assistant message without its calls (its text is what
/// approvers and reviewers see), and the conversation only when an approver, a reviewer or a
/// conversation-taking tool will read it.
struct Shared {
    messages: Vec<ChatMessage>,
    assistant: ChatMessageAssistant,
    calls: Vec<ToolCall>,
    tools: Vec<ToolDef>,
    options: ExecuteOptions,
    /// Each call's result, by index in the stage, written as it finishes.
    slots: Mutex<Vec<Option<CallDone>>>,
}

impl Shared {
    /// A runner over the shared copies, naming its calls' tools from `names`.
    fn runner<'a>(&'a self, names: &'a ToolNames) -> Runner<'a> {
        Runner {
            messages: &self.messages,
            assistant: &self.assistant,
            tools: &self.tools,
            options: &self.options,
            names: Some(names),
        }
    }

    fn slots(&self) -> MutexGuard<'_, Vec<Option<CallDone>>> {
        // A panic never happens while the lock is held; take the data regardless.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a chunk stopped: the call's index in the stage, and the reason.
type Stopped = (usize, Stop);

/// The most calls a stage, or a chunk of a spread stage, runs joined when it runs them all at
/// once: their futures are kept in one allocation and each is polled whenever the task wakes
/// (the join of `futures_util`, up to its own small size). No allocation, copy and waker per
/// call as in a `FuturesUnordered`, and the calls a timer tick wakes together are polled in
/// one pass; past this size the polls of calls that were not woken would cost more.
pub(crate) const JOINED_CALLS: usize = 30;

/// Runs the calls of one chunk (`range`, indices in the stage), at most `cap` at once.
async fn run_chunk(shared: Arc<Shared>, range: Range<usize>, cap: usize) -> Result<(), Stopped> {
    // The chunk's own copies of the tools' names: chunks run on different workers.
    let names = ToolNames::new(shared.tools.len());
    let runner = shared.runner(&names);
    let calls = &shared.calls;
    let shared = &*shared;
    let start = |i: usize| async move {
        let outcome = AssertUnwindSafe(runner.run_call(&calls[i]))
            .catch_unwind()
            .await;
        land(shared, i, outcome)
    };
    if range.len() <= JOINED_CALLS.min(cap) {
        // Ends at the first call that stops the run, dropping (cancelling) the others.
        return try_join_all(range.map(start)).await.map(drop);
    }
    let mut pending = FuturesUnordered::new();
    let mut next = range.start;
    while next < range.end && pending.len() < cap {
        pending.push(start(next));
        next += 1;
    }
    while let Some(landed) = pending.next().await {
        landed?;
        if next < range.end {
            pending.push(start(next));
            next += 1;
        }
    }
    Ok(())
}

/// Puts a finished call's result in its slot (as it finishes, so that a sibling's stop loses
/// none), or returns why the call stopped the run.
fn land(
    shared: &Shared,
    i: usize,
    outcome: std::thread::Result<Result<CallDone, Stop>>,
) -> Result<(), Stopped> {
    match outcome {
        Ok(Ok(d)) => {
            shared.slots()[i] = Some(d);
            Ok(())
        }
        Ok(Err(stop)) => Err((i, stop)),
        Err(payload) => Err((i, panicked(&shared.calls[i], payload.as_ref()))),
    }
}

/// The stop of a call whose task panicked outside its tool.
fn panicked(call: &ToolCall, payload: &(dyn std::any::Any + Send)) -> Stop {
    Stop::Fatal(FatalToolError::panic(format!(
        "tool call '{}' panicked: {}",
        call.function,
        panic_message(payload)
    )))
}

/// Runs the calls of `stage` in chunks spread over `workers` workers, at most `cap` calls at
/// once in all, filling `done` by index. On a call that stops the run, the other chunks are
/// aborted and awaited (so that no call emits an event after the stage has ended; calls that
/// finished meanwhile keep their results), and the stopping call's index is returned with
/// why.
pub(crate) async fn run_stage(
    runner: &Runner<'_>,
    calls: &[ToolCall],
    stage: Range<usize>,
    workers: usize,
    cap: usize,
    done: &mut [Option<CallDone>],
) -> Result<(), Stopped> {
    let stage_calls = &calls[stage.clone()];
    let reads_conversation = !runner.options.approval.is_empty()
        || !runner.options.review.is_empty()
        || stage_calls.iter().any(|c| {
            runner
                .tools
                .iter()
                .any(|t| t.name() == c.function && matches!(t.kind(), ToolKind::ConversationTaking))
        });
    let n = stage.len();
    let shared = Arc::new(Shared {
        messages: if reads_conversation {
            runner.messages.to_vec()
        } else {
            Vec::new()
        },
        assistant: ChatMessageAssistant {
            id: runner.assistant.id.clone(),
            content: runner.assistant.content.clone(),
            source: runner.assistant.source,
            metadata: runner.assistant.metadata.clone(),
            tool_calls: None,
            model: runner.assistant.model.clone(),
        },
        calls: stage_calls.to_vec(),
        tools: runner.tools.to_vec(),
        options: runner.options.clone(),
        slots: Mutex::new((0..n).map(|_| None).collect()),
    });
    // At most `cap` calls in flight in all: each chunk runs at most cap / chunks at once.
    let chunks = if cap >= n {
        // Uncapped: chunks small enough to be joined, at least a few per worker.
        (workers * CHUNKS_PER_WORKER)
            .min(n / MIN_CHUNK)
            .max(n.div_ceil(JOINED_CALLS))
    } else {
        (workers * CHUNKS_PER_WORKER).min(n / MIN_CHUNK).min(cap)
    }
    .max(1);
    let per_chunk_cap = (cap / chunks).max(1);
    // Spawned tasks do not inherit the current span: each call's span keeps the caller's
    // span as its parent, as on the polled path.
    let parent = tracing::Span::current();
    let mut set = JoinSet::new();
    for k in 0..chunks {
        let range = (k * n / chunks)..((k + 1) * n / chunks);
        set.spawn(run_chunk(Arc::clone(&shared), range, per_chunk_cap).instrument(parent.clone()));
    }
    let mut stopped = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(s)) => {
                stopped = Some(Ok(s));
                break;
            }
            // Chunks end by finishing (panics are caught per call) or by an abort, which only
            // this function makes; a runtime shutting down is the remaining cause.
            Err(e) => {
                stopped = Some(Err(e));
                break;
            }
        }
    }
    if stopped.is_some() {
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
    for (k, d) in shared.slots().iter_mut().enumerate() {
        if d.is_some() {
            done[stage.start + k] = d.take();
        }
    }
    match stopped {
        None => Ok(()),
        Some(Ok((i, stop))) => Err((stage.start + i, stop)),
        Some(Err(e)) => {
            let i = stage
                .clone()
                .find(|&j| done[j].is_none())
                .unwrap_or(stage.start);
            Err((
                i,
                Stop::Fatal(FatalToolError::msg(format!(
                    "a task running tool calls ended abnormally: {e}"
                ))),
            ))
        }
    }
}
