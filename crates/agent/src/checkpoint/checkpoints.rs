//! The run resource: where a run's checkpoints go, under which key, and when.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use actuator_model::ToolCall;

use super::part::{CheckpointPart, PartBlobs};
use super::record::{Record, journal_key};
use super::store::{CheckpointError, CheckpointStore};

/// What a tool call left running when the process died answers on resume (with
/// [`InFlightPolicy::Report`]).
pub const INTERRUPTED_BY_CRASH: &str = "This call was running when the run stopped (its process ended). It was not run again: \
     what it did, if anything, is unknown. Check before you repeat it.";

/// What resuming does with the tool calls that were running when the process died.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InFlightPolicy {
    /// Not run again: each is answered with [`INTERRUPTED_BY_CRASH`] (the default: a call
    /// may have done part of its work).
    #[default]
    Report,
    /// Run again: the turn is generated anew (for tools that are safe to repeat).
    Rerun,
}

/// What a run resumed from (see [`Checkpoints::resumed`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResumeReport {
    /// The turn the checkpoint was taken at.
    pub turn: u32,
    /// Messages restored (the checkpoint's and the journal's).
    pub messages: usize,
    /// The calls that were running when the process died.
    pub in_flight: Vec<ToolCall>,
    /// What was done with them.
    pub policy: InFlightPolicy,
    /// Those run again, their tools being idempotent ([`CheckpointBinding::resume_with`](super::CheckpointBinding::resume_with)).
    pub rerun: Vec<ToolCall>,
    /// Whether the run had finished (its checkpoints kept by
    /// [`keep_finished`](Checkpoints::keep_finished)): the agent returns its final state.
    pub finished: bool,
}

/// When checkpoints are taken (the reference's triggers), besides the first turn's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Policy {
    pub(super) every_turns: Option<u32>,
    pub(super) every_tokens: Option<u64>,
    pub(super) every: Option<Duration>,
}

pub(super) struct Inner {
    pub(super) store: Arc<dyn CheckpointStore>,
    pub(super) key: String,
    pub(super) policy: Policy,
    pub(super) in_flight: InFlightPolicy,
    pub(super) keep_finished: bool,
    pub(super) parts: Vec<Arc<dyn CheckpointPart>>,
    /// A checkpoint was asked for ([`Checkpoints::checkpoint_next_turn`]).
    pub(super) requested: AtomicBool,
    pub(super) bound: AtomicBool,
    pub(super) resumed: Mutex<Option<ResumeReport>>,
}

/// A run's checkpoints: where they go, under which key, and when (a run resource).
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::RunOptions;
/// use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
/// let store = Arc::new(FileCheckpoints::new("checkpoints"));
/// let checkpoints = Checkpoints::new(store, "task-1/sample-7").every_turns(1);
/// let options = RunOptions::new().resource(checkpoints.clone());
/// // run(&agent, input, options) … run again after a crash with the same key: it goes on.
/// # drop(options);
/// assert!(checkpoints.resumed().is_none());
/// ```
#[derive(Clone)]
pub struct Checkpoints {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints")
            .field("key", &self.inner.key)
            .field("policy", &self.inner.policy)
            .field("in_flight", &self.inner.in_flight)
            .finish_non_exhaustive()
    }
}

impl Checkpoints {
    /// Checkpoints of the run known as `key` in `store`, taken at every turn (change it with
    /// the `every_*` methods: the first that is due takes one).
    pub fn new(store: Arc<dyn CheckpointStore>, key: impl Into<String>) -> Self {
        Checkpoints {
            inner: Arc::new(Inner {
                store,
                key: key.into(),
                policy: Policy {
                    every_turns: Some(1),
                    ..Policy::default()
                },
                in_flight: InFlightPolicy::default(),
                keep_finished: false,
                parts: Vec::new(),
                requested: AtomicBool::new(false),
                bound: AtomicBool::new(false),
                resumed: Mutex::new(None),
            }),
        }
    }

    fn with(self, f: impl FnOnce(&mut Policy)) -> Self {
        self.rebuilt(|inner| f(&mut inner.policy))
    }

    /// A copy (same store and key, not yet bound) with `f` applied to its settings.
    fn rebuilt(self, f: impl FnOnce(&mut Inner)) -> Self {
        let mut next = self.with_key(self.inner.key.clone());
        if let Some(inner) = Arc::get_mut(&mut next.inner) {
            f(inner);
        }
        next
    }

    /// A checkpoint every `n` turns (1: every turn).
    #[must_use]
    pub fn every_turns(self, n: u32) -> Self {
        self.with(|p| p.every_turns = Some(n.max(1)))
    }

    /// A checkpoint whenever `n` tokens were used since the last (and not by turns unless
    /// [`every_turns`](Self::every_turns) is set after).
    #[must_use]
    pub fn every_tokens(self, n: u64) -> Self {
        self.with(|p| {
            p.every_tokens = Some(n.max(1));
            p.every_turns = None;
        })
    }

    /// A checkpoint whenever `interval` passed since the last (and not by turns unless
    /// [`every_turns`](Self::every_turns) is set after).
    #[must_use]
    pub fn every(self, interval: Duration) -> Self {
        self.with(|p| {
            p.every = Some(interval);
            p.every_turns = None;
        })
    }

    /// What resuming does with the calls that were running when the process died.
    #[must_use]
    pub fn in_flight(self, policy: InFlightPolicy) -> Self {
        self.rebuilt(|inner| inner.in_flight = policy)
    }

    /// Keeps a finished run's final state (as a checkpoint) rather than removing its
    /// checkpoints: run again under the key, the agent returns that state at once, without
    /// a turn. For an owner that keeps the result elsewhere and then calls
    /// [`clear`](Self::clear): an evaluation, once the sample is in its log, so that a crash
    /// between the two neither loses the sample nor runs its calls again.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
    /// let checkpoints =
    ///     Checkpoints::new(Arc::new(FileCheckpoints::new("ckpt")), "run-1").keep_finished();
    /// # drop(checkpoints);
    /// ```
    #[must_use]
    pub fn keep_finished(self) -> Self {
        self.rebuilt(|inner| inner.keep_finished = true)
    }

    /// Adds `part` to what each checkpoint holds (a sandbox's files: [`DirectoryPart`](super::DirectoryPart)).
    /// With parts, the end of each batch of tool calls is a whole checkpoint rather than a
    /// journal entry, so that the parts always agree with the conversation.
    #[must_use]
    pub fn part(self, part: Arc<dyn CheckpointPart>) -> Self {
        self.rebuilt(|inner| inner.parts.push(part))
    }

    /// Asks for a checkpoint at the top of the next turn, whatever the policy (the
    /// reference's manual trigger: a tool, or the code driving the run, calls it).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
    /// let checkpoints =
    ///     Checkpoints::new(Arc::new(FileCheckpoints::new("ckpt")), "run-1").every_turns(50);
    /// checkpoints.checkpoint_next_turn(); // e.g. from a tool, after an expensive step
    /// ```
    pub fn checkpoint_next_turn(&self) {
        self.inner.requested.store(true, Ordering::Release);
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.inner.key
    }

    /// These checkpoints (store, policy) under another key: one run's of many, as an
    /// evaluation gives each sample its own.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
    /// let template = Checkpoints::new(Arc::new(FileCheckpoints::new("ckpt")), "").every_turns(5);
    /// assert_eq!(template.with_key("sample-3").key(), "sample-3");
    /// ```
    pub fn with_key(&self, key: impl Into<String>) -> Checkpoints {
        Checkpoints {
            inner: Arc::new(Inner {
                store: Arc::clone(&self.inner.store),
                key: key.into(),
                policy: self.inner.policy,
                in_flight: self.inner.in_flight,
                keep_finished: self.inner.keep_finished,
                parts: self.inner.parts.clone(),
                requested: AtomicBool::new(false),
                bound: AtomicBool::new(false),
                resumed: Mutex::new(None),
            }),
        }
    }

    /// Forgets the run's checkpoint and journal (a run that ended otherwise than by
    /// finishing, whose work is kept elsewhere: an evaluation's sample that hit a limit).
    ///
    /// # Errors
    ///
    /// The store could not remove them.
    pub async fn clear(&self) -> Result<(), CheckpointError> {
        let inner = &self.inner;
        if !inner.parts.is_empty()
            && let Some(bytes) = inner.store.load(&inner.key).await?
            && let Ok(record) = serde_json::from_slice::<Record>(&bytes)
        {
            for part in &inner.parts {
                if let Some(saved) = record.parts.get(part.name()) {
                    let blobs = PartBlobs::new(&*inner.store, &inner.key, part.name());
                    part.clear(blobs, saved.clone()).await?;
                }
            }
        }
        inner.store.remove(&journal_key(&inner.key)).await?;
        inner.store.remove(&inner.key).await
    }

    /// What the run resumed from, once it has (`None` for a run that started afresh).
    pub fn resumed(&self) -> Option<ResumeReport> {
        self.inner
            .resumed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
