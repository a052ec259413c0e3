//! Resuming: the checkpoint and its journal read back, the parts put back, the calls that
//! were running answered or run again, the limits' usage carried on.

use std::sync::PoisonError;
use std::time::Instant;

use actuator_model::{ChatMessage, ToolCall};

use super::binding::{CheckpointBinding, note};
use super::checkpoints::{INTERRUPTED_BY_CRASH, InFlightPolicy, ResumeReport};
use super::part::PartBlobs;
use super::record::{Journal, LoopCounters, Record, VERSION, ids, journal_key};
use super::store::CheckpointError;
use crate::context::RunContext;
use crate::state::AgentState;

/// A run resumed from its checkpoint: what the agent goes on with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Resumed {
    /// The conversation to go on with (in-flight calls answered or dropped, by the policy).
    pub messages: Vec<ChatMessage>,
    /// The loop's counters when it stopped.
    pub counters: LoopCounters,
    /// The report (also [`Checkpoints::resumed`](super::Checkpoints::resumed), and an info event).
    pub report: ResumeReport,
    /// The final state of a run that had finished (see [`Checkpoints::keep_finished`](super::Checkpoints::keep_finished)):
    /// the agent returns it rather than going on.
    pub finished: Option<AgentState>,
    /// Calls of the last assistant message left unanswered to be run again before the next
    /// turn ([`CheckpointBinding::resume_with`]).
    pub rerun: Vec<ToolCall>,
}

impl CheckpointBinding {
    /// The run's checkpoint, if it has one: the conversation and counters to go on with
    /// (the journal's calls answered as the [`InFlightPolicy`] says), the limits' usage
    /// carried into `cx`'s scopes, and the report recorded. A checkpoint that cannot be
    /// read is reported (a warning and an info event) and the run starts afresh.
    pub async fn resume(&self, cx: &RunContext) -> Option<Resumed> {
        self.resume_with(cx, &|_| false).await
    }

    /// [`resume`](Self::resume), with the calls that were running when the process died and
    /// for which `rerun` says yes (calls of tools declared idempotent:
    /// [`ToolDef::idempotent`](actuator_tool_core::ToolDef::idempotent)) left unanswered for
    /// the agent to run again, listed in [`Resumed::rerun`], rather than reported. With
    /// [`InFlightPolicy::Rerun`] the whole turn is generated anew anyway.
    pub async fn resume_with(
        &self,
        cx: &RunContext,
        rerun: &(dyn Fn(&ToolCall) -> bool + Send + Sync),
    ) -> Option<Resumed> {
        let inner = self.inner();
        let record = match inner.store.load(&inner.key).await {
            Ok(Some(bytes)) => match serde_json::from_slice::<Record>(&bytes) {
                Ok(r) if r.version == VERSION => r,
                Ok(r) => {
                    note(
                        cx,
                        format!(
                            "The checkpoint of '{}' is of version {}, which this version does not read: the run starts afresh.",
                            inner.key, r.version
                        ),
                    );
                    return None;
                }
                Err(e) => {
                    note(
                        cx,
                        format!(
                            "The checkpoint of '{}' cannot be read ({e}): the run starts afresh.",
                            inner.key
                        ),
                    );
                    return None;
                }
            },
            Ok(None) => return None,
            Err(e) => {
                note(
                    cx,
                    format!(
                        "The checkpoint of '{}' cannot be read ({e}): the run starts afresh.",
                        inner.key
                    ),
                );
                return None;
            }
        };
        // The journal's entries that follow this checkpoint, in order (a torn last one is
        // left out by the store).
        let journal: Vec<Journal> = match inner.store.entries(&journal_key(&inner.key)).await {
            Ok(entries) => entries
                .iter()
                .filter_map(|bytes| serde_json::from_slice::<Journal>(bytes).ok())
                .filter(|j| j.version == VERSION && j.base == record.id)
                .collect(),
            Err(e) => {
                note(
                    cx,
                    format!(
                        "The journal of '{}' cannot be read ({e}): the run goes on from its checkpoint.",
                        inner.key
                    ),
                );
                Vec::new()
            }
        };
        // The parts first: a run whose files cannot be put back does not go on with a
        // conversation that says otherwise.
        if let Err(e) = self.restore_parts(&record).await {
            note(
                cx,
                format!(
                    "The checkpoint of '{}' cannot be restored ({e}): the run starts afresh.",
                    inner.key
                ),
            );
            return None;
        }
        if record.finished.is_some() {
            return Some(self.resumed_finished(cx, record));
        }
        let base_len = record.messages.len();
        let mut messages = record.messages;
        let (mut counters, usage) = (record.counters, record.usage);
        let (counters_now, usage_now) = match journal.last() {
            Some(j) => (j.counters, j.usage),
            None => (counters, usage),
        };
        counters = counters_now;
        for j in journal {
            messages.extend(j.added);
        }
        let covered = ids(&messages);
        let in_flight: Vec<ToolCall> = {
            let unanswered = crate::channel::unanswered_calls(&messages);
            messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    ChatMessage::Assistant(a) => Some(a.calls().to_vec()),
                    _ => None,
                })
                .unwrap_or_default()
                .into_iter()
                .filter(|c| unanswered.iter().any(|id| id.as_str() == c.id.as_str()))
                .collect()
        };
        let mut to_rerun = Vec::new();
        if !in_flight.is_empty() {
            match inner.in_flight {
                InFlightPolicy::Report => {
                    for call in &in_flight {
                        if rerun(call) {
                            to_rerun.push(call.clone());
                            continue;
                        }
                        messages.push(ChatMessage::tool(
                            INTERRUPTED_BY_CRASH,
                            call.id.clone(),
                            call.function.clone(),
                            Some(actuator_model::ToolCallError {
                                kind: actuator_tool_core::ToolErrorKind::Cancelled,
                                message: INTERRUPTED_BY_CRASH.to_owned(),
                            }),
                        ));
                    }
                }
                InFlightPolicy::Rerun => {
                    // Generated anew: the assistant message and any answers after it go.
                    if let Some(at) = messages
                        .iter()
                        .rposition(|m| matches!(m, ChatMessage::Assistant(_)))
                    {
                        messages.truncate(at);
                    }
                }
            }
        }
        for scope in cx.budget().scopes() {
            scope.carry(&usage_now.usage());
        }
        let report = ResumeReport {
            turn: record.counters.turn,
            messages: messages.len(),
            in_flight,
            policy: inner.in_flight,
            rerun: to_rerun.clone(),
            finished: false,
        };
        let name = |c: &ToolCall| format!("{} ({})", c.function, c.id);
        let calls: Vec<String> = report
            .in_flight
            .iter()
            .filter(|c| !to_rerun.iter().any(|r| r.id == c.id))
            .map(name)
            .collect();
        let again: Vec<String> = to_rerun.iter().map(name).collect();
        note(
            cx,
            format!(
                "Resumed '{}' from its checkpoint at turn {} ({} messages){}{}.",
                inner.key,
                report.turn,
                report.messages,
                if calls.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; calls running when it stopped, {}: {}",
                        match inner.in_flight {
                            InFlightPolicy::Report => "not run again",
                            InFlightPolicy::Rerun => "to run again",
                        },
                        calls.join(", ")
                    )
                },
                if again.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; calls of idempotent tools running when it stopped, run again: {}",
                        again.join(", ")
                    )
                }
            ),
        );
        *inner.resumed.lock().unwrap_or_else(PoisonError::into_inner) = Some(report.clone());
        {
            let mut state = self.state();
            state.base = Some(record.id);
            state.base_len = base_len;
            state.covered = covered;
            state.last_turn = record.counters.turn;
            state.last_tokens = usage_now.tokens;
            state.last_at = Some(Instant::now());
        }
        Some(Resumed {
            messages,
            counters,
            rerun: to_rerun,
            report,
            finished: None,
        })
    }

    /// Puts each part back as `record` holds it.
    async fn restore_parts(&self, record: &Record) -> Result<(), CheckpointError> {
        let inner = self.inner();
        for part in &inner.parts {
            let Some(saved) = record.parts.get(part.name()) else {
                return Err(CheckpointError::Format {
                    key: inner.key.clone(),
                    reason: format!("it holds no '{}'", part.name()),
                });
            };
            let blobs = PartBlobs::new(&*inner.store, &inner.key, part.name());
            part.restore(blobs, saved.clone()).await?;
        }
        Ok(())
    }

    /// Resuming a run that had finished: its final state, returned as it was.
    fn resumed_finished(&self, cx: &RunContext, record: Record) -> Resumed {
        let inner = self.inner();
        let report = ResumeReport {
            turn: record.counters.turn,
            messages: record.messages.len(),
            in_flight: Vec::new(),
            policy: inner.in_flight,
            rerun: Vec::new(),
            finished: true,
        };
        note(
            cx,
            format!(
                "'{}' had finished (at turn {}): its final state is returned as it was.",
                inner.key, report.turn
            ),
        );
        *inner.resumed.lock().unwrap_or_else(PoisonError::into_inner) = Some(report.clone());
        let mut state = AgentState::new(record.messages.clone());
        if let Some(output) = record.finished.and_then(|f| f.output) {
            state.set_output(output);
        }
        Resumed {
            messages: record.messages,
            counters: record.counters,
            rerun: Vec::new(),
            report,
            finished: Some(state),
        }
    }
}
