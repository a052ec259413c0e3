//! An agent's hold on its run's checkpoints: a checkpoint at the top of a turn, the journal
//! around each batch of calls, the end.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use actuator_events::{Event, InfoEvent};
use actuator_model::ChatMessage;

use super::checkpoints::{Checkpoints, Inner};
use super::part::PartBlobs;
use super::record::{
    CarriedUsage, Finished, Journal, LoopCounters, Record, VERSION, ids, journal_key,
};
use super::store::CheckpointError;
use crate::context::RunContext;
use crate::state::AgentState;

impl Checkpoints {
    /// Takes the checkpoints up for the agent about to run: the first agent of a run gets
    /// them, agents it runs do not (their turns are inside the outer agent's). Released when
    /// the binding is dropped.
    ///
    /// A custom agent's loop:
    ///
    /// ```
    /// use actuator_agent::{AgentState, RunContext};
    /// use actuator_agent::checkpoint::{Checkpoints, LoopCounters};
    /// # async fn generate_and_call_tools(_s: &mut AgentState, _b: Option<&actuator_agent::checkpoint::CheckpointBinding>, _cx: &RunContext) {}
    /// async fn agent_loop(mut state: AgentState, cx: RunContext) -> AgentState {
    ///     let binding = cx.resource::<Checkpoints>().and_then(Checkpoints::bind);
    ///     let mut counters = LoopCounters::default();
    ///     if let Some(b) = &binding && let Some(resumed) = b.resume(&cx).await {
    ///         if let Some(finished) = resumed.finished {
    ///             return finished; // it had finished before the process died
    ///         }
    ///         state.messages.set(resumed.messages);
    ///         counters = resumed.counters;
    ///     }
    ///     while counters.turn < 10 {
    ///         counters.turn += 1;
    ///         if let Some(b) = &binding {
    ///             b.turn_started(&cx, &state.messages, counters).await;
    ///         }
    ///         // Before and after running tool calls: b.journal(&cx, &state.messages, counters).await
    ///         generate_and_call_tools(&mut state, binding.as_ref(), &cx).await;
    ///     }
    ///     if let Some(b) = &binding {
    ///         b.finished(&cx, &state, counters).await;
    ///     }
    ///     state
    /// }
    /// ```
    pub fn bind(&self) -> Option<CheckpointBinding> {
        self.inner
            .bound
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| CheckpointBinding {
                checkpoints: self.clone(),
                state: Mutex::new(BindingState::default()),
            })
    }
}

#[derive(Default)]
pub(super) struct BindingState {
    /// The last checkpoint: its id and the ids of the messages it held (a journal is what
    /// follows them; a history edited since is checkpointed whole).
    pub(super) base: Option<String>,
    /// How many messages the last checkpoint holds.
    pub(super) base_len: usize,
    /// The ids of the messages the checkpoint and its journal hold: an entry adds what
    /// follows them.
    pub(super) covered: Vec<String>,
    pub(super) last_turn: u32,
    pub(super) last_tokens: u64,
    pub(super) last_at: Option<Instant>,
}

/// What is durable, against which a journal entry is written.
struct Following {
    base: String,
    base_len: usize,
    covered: usize,
}

/// An agent's hold on its run's [`Checkpoints`] (see [`Checkpoints::bind`]).
pub struct CheckpointBinding {
    checkpoints: Checkpoints,
    state: Mutex<BindingState>,
}

impl std::fmt::Debug for CheckpointBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointBinding")
            .field("key", &self.checkpoints.inner.key)
            .finish_non_exhaustive()
    }
}

impl Drop for CheckpointBinding {
    fn drop(&mut self) {
        self.checkpoints.inner.bound.store(false, Ordering::Release);
    }
}

pub(super) fn note(cx: &RunContext, message: String) {
    tracing::info!("{message}");
    cx.emit(Event::Info(InfoEvent {
        source: Some("checkpoint".to_owned()),
        message,
    }));
}

impl CheckpointBinding {
    pub(super) fn inner(&self) -> &Inner {
        &self.checkpoints.inner
    }

    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, BindingState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// At the top of a turn: takes a checkpoint of `messages` when one is due (the first
    /// turn's always). A checkpoint that cannot be saved is reported and the run goes on.
    pub async fn turn_started(
        &self,
        cx: &RunContext,
        messages: &[ChatMessage],
        counters: LoopCounters,
    ) {
        let usage = cx.usage();
        let due = {
            let state = self.state();
            let policy = self.inner().policy;
            self.inner().requested.swap(false, Ordering::AcqRel)
                || state.base.is_none()
                || policy
                    .every_turns
                    .is_some_and(|n| counters.turn.saturating_sub(state.last_turn) >= n)
                || policy
                    .every_tokens
                    .is_some_and(|n| usage.tokens.saturating_sub(state.last_tokens) >= n)
                || policy
                    .every
                    .is_some_and(|d| state.last_at.is_none_or(|at| at.elapsed() >= d))
        };
        if !due {
            return;
        }
        // Incrementally where that is cheap: the conversation only grew since the last whole
        // checkpoint, by no more than it held then, and there are no parts to save, so the
        // journal of what it gained is this checkpoint (written only if it gained anything).
        if self.inner().parts.is_empty()
            && let Some(following) = self.following(messages)
            && messages.len() - following.base_len <= following.base_len.max(16)
        {
            if self.write_journal(cx, following, messages, counters).await {
                let mut state = self.state();
                state.last_turn = counters.turn;
                state.last_tokens = usage.tokens;
                state.last_at = Some(Instant::now());
            }
            return;
        }
        self.save_checkpoint(cx, messages, counters).await;
    }

    /// Where `messages` stand against what is durable, if they follow on from it (the
    /// checkpoint and its journal's messages, unedited, at their start).
    fn following(&self, messages: &[ChatMessage]) -> Option<Following> {
        let state = self.state();
        let base = state.base.as_ref()?;
        let covered = &state.covered;
        let follows = messages.len() >= covered.len()
            && messages.iter().zip(covered).all(|(m, id)| m.id() == id);
        follows.then(|| Following {
            base: base.clone(),
            base_len: state.base_len,
            covered: covered.len(),
        })
    }

    /// Appends to the journal what `messages` gained since what is durable, if anything.
    /// Whether it is durable now.
    async fn write_journal(
        &self,
        cx: &RunContext,
        following: Following,
        messages: &[ChatMessage],
        counters: LoopCounters,
    ) -> bool {
        let added = messages.get(following.covered..).unwrap_or_default();
        if added.is_empty() {
            return true;
        }
        let journal = Journal {
            version: VERSION,
            base: following.base,
            added: added.to_vec(),
            counters,
            usage: CarriedUsage::of(&cx.usage()),
        };
        let inner = self.inner();
        let saved = match serde_json::to_vec(&journal) {
            Ok(bytes) => inner.store.append(&journal_key(&inner.key), bytes).await,
            Err(e) => Err(CheckpointError::Format {
                key: inner.key.clone(),
                reason: e.to_string(),
            }),
        };
        match saved {
            Ok(()) => {
                self.state().covered.extend(ids(added));
                true
            }
            Err(e) => {
                note(
                    cx,
                    format!(
                        "The journal of '{}' could not be saved ({e}): if the run dies before its next checkpoint, these calls may run again.",
                        inner.key
                    ),
                );
                false
            }
        }
    }

    /// Takes a checkpoint of `messages` now (a failure is reported and the run goes on).
    async fn save_checkpoint(
        &self,
        cx: &RunContext,
        messages: &[ChatMessage],
        counters: LoopCounters,
    ) {
        let usage = cx.usage();
        let inner = self.inner();
        match self.write_record(cx, messages, counters, None).await {
            Ok(id) => {
                {
                    let mut state = self.state();
                    state.base = Some(id);
                    state.base_len = messages.len();
                    state.covered = ids(messages);
                    state.last_turn = counters.turn;
                    state.last_tokens = usage.tokens;
                    state.last_at = Some(Instant::now());
                }
                // The journal's entries follow the checkpoint before: they can go (one left
                // by a failed removal is of another checkpoint, and skipped on resume).
                if let Err(e) = inner.store.remove(&journal_key(&inner.key)).await {
                    tracing::debug!("the journal of a replaced checkpoint stays: {e}");
                }
            }
            Err(e) => note(
                cx,
                format!(
                    "A checkpoint of '{}' could not be saved ({e}); the run goes on from the one before.",
                    inner.key
                ),
            ),
        }
    }

    /// Writes a checkpoint record of `messages` (the parts' blobs first, then the record, then
    /// the parts told it is written); its id.
    async fn write_record(
        &self,
        cx: &RunContext,
        messages: &[ChatMessage],
        counters: LoopCounters,
        finished: Option<Finished>,
    ) -> Result<String, CheckpointError> {
        let inner = self.inner();
        let mut parts = BTreeMap::new();
        for part in &inner.parts {
            let blobs = PartBlobs::new(&*inner.store, &inner.key, part.name());
            parts.insert(part.name().to_owned(), part.save(blobs).await?);
        }
        let id = actuator_model::new_id().into_string();
        let record = Record {
            version: VERSION,
            id: id.clone(),
            messages: messages.to_vec(),
            counters,
            usage: CarriedUsage::of(&cx.usage()),
            finished,
            parts,
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| CheckpointError::Format {
            key: inner.key.clone(),
            reason: e.to_string(),
        })?;
        inner.store.save(&inner.key, bytes).await?;
        for part in &inner.parts {
            if let Some(saved) = record.parts.get(part.name()) {
                let blobs = PartBlobs::new(&*inner.store, &inner.key, part.name());
                part.committed(blobs, saved).await;
            }
        }
        Ok(id)
    }

    /// Journals what the conversation gained since the checkpoint: call it before a batch of
    /// tool calls runs (the last of `messages` is the assistant message that makes them), so
    /// that a call running when the process dies is known, and after (their results in
    /// `messages`), so that none is run again. A journal that cannot be saved is reported and
    /// the run goes on.
    pub async fn journal(&self, cx: &RunContext, messages: &[ChatMessage], counters: LoopCounters) {
        if self.state().base.is_none() {
            return;
        }
        // The history was edited since the checkpoint (compacted, filtered): a journal of
        // what follows it would not rebuild it, so the whole of it is checkpointed.
        // With parts, the end of a batch (its results in) is a whole checkpoint: the calls
        // may have changed what the parts hold.
        let batch_ended = !matches!(messages.last(), Some(ChatMessage::Assistant(_)));
        let following = self
            .following(messages)
            .filter(|_| self.inner().parts.is_empty() || !batch_ended);
        match following {
            Some(following) => {
                self.write_journal(cx, following, messages, counters).await;
            }
            None => self.save_checkpoint(cx, messages, counters).await,
        }
    }

    /// The run finished with `state`: its checkpoints are removed (run again, the key starts
    /// afresh), or with [`keep_finished`](Checkpoints::keep_finished), replaced by `state`.
    pub async fn finished(&self, cx: &RunContext, state: &AgentState, counters: LoopCounters) {
        let inner = self.inner();
        if inner.keep_finished {
            let finished = Finished {
                output: state.explicit_output().cloned(),
            };
            let saved = self
                .write_record(cx, &state.messages, counters, Some(finished))
                .await;
            // The journal is of the checkpoint the finished one replaced.
            let removed = match saved {
                Ok(_) => inner.store.remove(&journal_key(&inner.key)).await,
                Err(e) => Err(e),
            };
            if let Err(e) = removed {
                note(
                    cx,
                    format!(
                        "The final state of '{}' could not be kept ({e}): if the process dies before its owner has the result, the run goes on from its last checkpoint.",
                        inner.key
                    ),
                );
            }
            return;
        }
        if let Err(e) = self.checkpoints.clear().await {
            note(
                cx,
                format!(
                    "The checkpoints of '{}', a finished run, could not be removed ({e}).",
                    inner.key
                ),
            );
        }
    }
}
