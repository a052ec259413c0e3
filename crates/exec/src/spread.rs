//! Large parallel stages spread over the runtime's workers.
//!
//! A stage's calls are normally futures polled by `execute_tools`' own task: cheap, but all of
//! the calls' work (before and after their tools wait) then runs on one core. A large stage on
//! a multi-thread runtime is spawned instead, one task per call in a [`JoinSet`], so that this
//! work is shared by every worker. The guarantees stay those of the polled path: results are
//! slotted by index (declared order), a fatal failure aborts the siblings, and dropping
//! `execute_tools` drops the set, which aborts every call in flight.

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::__private::panic_message;
use actuator_tool_core::{FatalToolError, ToolDef};
use futures_util::FutureExt;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::execute::{CallDone, ExecuteOptions, Runner, Stop};

/// The fewest calls of a parallel stage that are spawned. A spawn costs more than pushing a
/// future (an allocation, a copy of the conversation per stage, cross-thread wake-ups), which
/// only pays when there are enough calls for the second core's share to outweigh it; the
/// stages models usually send (a handful of calls) stay on the polled path.
pub(crate) const SPREAD_MIN_CALLS: usize = 64;

/// Whether a parallel stage of `calls` calls is spread over the workers: it is large, and the
/// current runtime has more than one worker to spread it over.
pub(crate) fn spreads(calls: usize) -> bool {
    calls >= SPREAD_MIN_CALLS
        && Handle::try_current().is_ok_and(|h| {
            h.runtime_flavor() == RuntimeFlavor::MultiThread && h.metrics().num_workers() > 1
        })
}

/// What the spawned calls of one stage share: spawned tasks cannot borrow the caller's
/// conversation, tools and options, so they are copied once per stage (the tools and options
/// are `Arc`s inside; the conversation is the one real copy, small against 64+ calls).
struct Shared {
    messages: Vec<ChatMessage>,
    assistant: ChatMessageAssistant,
    tools: Vec<ToolDef>,
    options: ExecuteOptions,
}

impl Shared {
    fn runner(&self) -> Runner<'_> {
        Runner {
            messages: &self.messages,
            assistant: &self.assistant,
            tools: &self.tools,
            options: &self.options,
        }
    }
}

type Outcome = Result<Result<CallDone, Stop>, Box<dyn std::any::Any + Send>>;

/// Runs the calls of `stage` as tasks, at most `cap` at once, filling `done` by index. On a
/// call that stops the run, the siblings are aborted and awaited (so that none emits an event
/// after the stage has ended; those that finished meanwhile keep their results) and the
/// stopping call's index is returned with why.
pub(crate) async fn run_stage(
    runner: &Runner<'_>,
    calls: &[ToolCall],
    stage: Range<usize>,
    cap: usize,
    done: &mut [Option<CallDone>],
) -> Result<(), (usize, Stop)> {
    let shared = Arc::new(Shared {
        messages: runner.messages.to_vec(),
        assistant: runner.assistant.clone(),
        tools: runner.tools.to_vec(),
        options: runner.options.clone(),
    });
    // Spawned tasks do not inherit the current span: each call's span keeps the caller's
    // span as its parent, as on the polled path.
    let parent = tracing::Span::current();
    let mut set: JoinSet<(usize, Outcome)> = JoinSet::new();
    let spawn = |set: &mut JoinSet<(usize, Outcome)>, i: usize| {
        let shared = Arc::clone(&shared);
        let call = calls[i].clone();
        set.spawn(
            async move {
                let runner = shared.runner();
                let outcome = AssertUnwindSafe(runner.run_call(&call))
                    .catch_unwind()
                    .await;
                (i, outcome)
            }
            .instrument(parent.clone()),
        );
    };
    let mut next = stage.start;
    while next < stage.end && set.len() < cap {
        spawn(&mut set, next);
        next += 1;
    }
    while let Some(joined) = set.join_next().await {
        let stopped = match joined {
            Ok((i, Ok(Ok(d)))) => {
                done[i] = Some(d);
                None
            }
            Ok((i, Ok(Err(stop)))) => Some((i, stop)),
            Ok((i, Err(payload))) => Some((
                i,
                Stop::Fatal(FatalToolError::panic(format!(
                    "tool call '{}' panicked: {}",
                    calls[i].function,
                    panic_message(payload.as_ref())
                ))),
            )),
            // Tasks end by finishing (panics are caught above) or by an abort, which only
            // this function makes; a runtime shutting down is the remaining cause.
            Err(e) => {
                let i = stage
                    .clone()
                    .find(|&j| done[j].is_none())
                    .unwrap_or(stage.start);
                Some((
                    i,
                    Stop::Fatal(FatalToolError::msg(format!(
                        "a tool call's task ended abnormally: {e}"
                    ))),
                ))
            }
        };
        if let Some(stopped) = stopped {
            set.abort_all();
            while let Some(joined) = set.join_next().await {
                if let Ok((j, Ok(Ok(d)))) = joined {
                    done[j] = Some(d);
                }
            }
            return Err(stopped);
        }
        if next < stage.end {
            spawn(&mut set, next);
            next += 1;
        }
    }
    Ok(())
}
