//! `execute_tools`: stage the last assistant message's calls, run each through the per-call
//! pipeline, and return the tool messages in declared order.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use actuator_model::{ChatMessage, ModelOutput, ToolCall};
use actuator_tool_core::{ToolDef, check_tool_names};
use futures_util::FutureExt;
use futures_util::future::try_join_all;
use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::call::{Runner, Stop, ToolNames};
use crate::error::ExecError;
use crate::options::ExecuteOptions;
use crate::runner::CallDone;

/// What `execute_tools` returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecuteToolsResult {
    /// One tool message per call, in declared order, each followed by the extra messages its
    /// conversation-taking tool added.
    pub messages: Vec<ChatMessage>,
    /// The last output a conversation-taking tool returned, in declared order.
    pub output: Option<ModelOutput>,
    /// Time spent waiting for approvers, summed over calls (not working time).
    pub waiting: Duration,
}

/// Splits calls into stages (§6.2): consecutive calls to parallel tools form one stage; any
/// other call (serial or unknown) is a stage alone.
///
/// ```
/// use actuator_exec::plan_stages;
/// let stages = plan_stages(&[true, true, false, true, false, true]);
/// assert_eq!(stages, vec![0..2, 2..3, 3..4, 4..5, 5..6]);
/// ```
pub fn plan_stages(parallel: &[bool]) -> Vec<std::ops::Range<usize>> {
    let mut stages = Vec::new();
    let mut start = 0;
    while start < parallel.len() {
        let mut end = start + 1;
        if parallel[start] {
            while end < parallel.len() && parallel[end] {
                end += 1;
            }
        }
        stages.push(start..end);
        start = end;
    }
    stages
}

/// Runs the tool calls of the last message, if it is an assistant message with calls.
///
/// Per call, in order: parse error → nesting check → lookup (`Tool {name} not found`) →
/// schema validation → approval → deserialization → invocation (under the tool's timeout) →
/// result conversion → truncation. Recoverable errors become tool messages with `error` set;
/// a fatal error or a panic cancels the stage's other calls, skips later stages and returns
/// [`ExecError::Fatal`] with the messages produced so far.
///
/// Dropping the returned future cancels every call in flight (a plain `fn` tool already running
/// on the blocking pool finishes there, but its result is discarded).
///
/// The returned future is a box of the executor's state (about 700 bytes): awaiting it moves
/// one pointer, where the state itself would be copied at every move (by `block_on`, by a
/// caller's own future, by `spawn`).
pub fn execute_tools<'a>(
    messages: &'a [ChatMessage],
    tools: &'a [ToolDef],
    options: &'a ExecuteOptions,
) -> impl Future<Output = Result<ExecuteToolsResult, ExecError>> + Send + 'a {
    Box::pin(run_tools(messages, tools, options))
}

async fn run_tools(
    messages: &[ChatMessage],
    tools: &[ToolDef],
    options: &ExecuteOptions,
) -> Result<ExecuteToolsResult, ExecError> {
    let Some(ChatMessage::Assistant(assistant)) = messages.last() else {
        return Ok(ExecuteToolsResult::default());
    };
    let calls = assistant.calls();
    if calls.is_empty() {
        return Ok(ExecuteToolsResult::default());
    }
    check_tool_names(tools)?;

    let runner = Runner {
        messages,
        assistant,
        tools,
        options,
        names: None,
    };
    // One call (most turns) is one stage of one call: run it without the stage bookkeeping.
    if let [call] = calls {
        let d = match runner.run_call(call).await {
            Ok(d) => d,
            Err(stop) => return Err(runner.stopped(stop, call, Vec::new())),
        };
        let mut messages = Vec::with_capacity(1 + d.extra.len());
        messages.push(d.message);
        messages.extend(d.extra);
        return Ok(ExecuteToolsResult {
            messages,
            output: d.output.map(|o| *o),
            waiting: d.waiting,
        });
    }
    // The stage's calls share one copy of each tool's name (see `ToolNames`).
    let names = ToolNames::new(tools.len());
    let runner = Runner {
        names: Some(&names),
        ..runner
    };
    // Boxed: the stage machinery's state would otherwise be part of every execute_tools
    // future, one-call turns included, and several calls already cost an allocation each.
    Box::pin(run_stages(&runner, calls)).await
}

/// Runs the calls of `stage` all at once, putting each result in `done` as it finishes; ends
/// at the first call that stops the run (its index and why), dropping the others.
async fn run_joined(
    runner: &Runner<'_>,
    calls: &[ToolCall],
    stage: Range<usize>,
    done: &mut [Option<CallDone>],
) -> Result<(), (usize, Stop)> {
    let start = stage.start;
    let slots = Mutex::new(&mut done[stage.clone()]);
    let slots = &slots;
    try_join_all(stage.map(|i| async move {
        let d = runner.run_call(&calls[i]).await.map_err(|stop| (i, stop))?;
        // Never poisoned: nothing panics while it is held.
        slots.lock().unwrap_or_else(PoisonError::into_inner)[i - start] = Some(d);
        Ok(())
    }))
    .await
    .map(drop)
}

/// Runs the calls of `stage`, at most `cap` at once, putting each result in `done`; ends at
/// the first call that stops the run (its index and why), dropping the others.
async fn run_unordered(
    runner: &Runner<'_>,
    calls: &[ToolCall],
    stage: Range<usize>,
    cap: usize,
    done: &mut [Option<CallDone>],
) -> Result<(), (usize, Stop)> {
    let start = |i: usize| runner.run_call(&calls[i]).map(move |r| (i, r));
    let mut pending = FuturesUnordered::new();
    let mut next = stage.start;
    while next < stage.end && pending.len() < cap {
        pending.push(start(next));
        next += 1;
    }
    while let Some((i, outcome)) = pending.next().await {
        done[i] = Some(outcome.map_err(|stop| (i, stop))?);
        if next < stage.end {
            pending.push(start(next));
            next += 1;
        }
    }
    Ok(())
}

/// Runs several calls, stage by stage (§6.2), and assembles their messages in declared order.
async fn run_stages(
    runner: &Runner<'_>,
    calls: &[ToolCall],
) -> Result<ExecuteToolsResult, ExecError> {
    let options = runner.options;
    let parallel: Vec<bool> = calls
        .iter()
        .map(|c| runner.lookup(&c.function).is_some_and(ToolDef::parallel))
        .collect();

    let mut done: Vec<Option<CallDone>> = (0..calls.len()).map(|_| None).collect();
    for stage in plan_stages(&parallel) {
        if stage.len() == 1 {
            let i = stage.start;
            match runner.run_call(&calls[i]).await {
                Ok(d) => done[i] = Some(d),
                Err(stop) => return Err(runner.stopped(stop, &calls[i], done)),
            }
            continue;
        }
        let cap = options.max_concurrency.unwrap_or(usize::MAX).max(1);
        let ran = if let Some(workers) = crate::spread::spreads(stage.len()) {
            crate::spread::run_stage(runner, calls, stage.clone(), workers, cap, &mut done).await
        } else if stage.len() <= crate::spread::JOINED_CALLS.min(cap) {
            // A few calls, all at once: joined in one allocation (see `JOINED_CALLS`).
            run_joined(runner, calls, stage.clone(), &mut done).await
        } else {
            run_unordered(runner, calls, stage.clone(), cap, &mut done).await
        };
        if let Err((i, stop)) = ran {
            for j in stage.clone() {
                if j != i && done[j].is_none() {
                    done[j] = Some(runner.cancelled(&calls[j]));
                }
            }
            return Err(runner.stopped(stop, &calls[i], done));
        }
    }

    let mut result = ExecuteToolsResult::default();
    for d in done.into_iter().flatten() {
        result.messages.push(d.message);
        result.messages.extend(d.extra);
        result.waiting += d.waiting;
        if let Some(output) = d.output {
            result.output = Some(*output);
        }
    }
    Ok(result)
}
