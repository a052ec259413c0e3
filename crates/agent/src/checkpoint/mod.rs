//! Checkpoints: a run that dies (killed, out of memory, the machine lost) goes on from its
//! last checkpoint when run again with the same key, and never runs a tool call twice.
//!
//! Two records per key:
//! - the **checkpoint**, at a turn boundary when the [policy](Checkpoints::every_turns) says:
//!   the conversation, the loop's counters, the limits' usage;
//! - the **journal**, before and after each batch of tool calls: what the conversation gained
//!   since the checkpoint (the assistant message whose calls are about to run included, then
//!   their results). It is small, and it is what makes calls exactly-once: on resume, every
//!   call whose result the journal holds is not run again, and a call that was running when
//!   the process died is reported and, by default, not run again either: the model reads
//!   that it was interrupted and that its effect is unknown ([`InFlightPolicy`]).
//!
//! Give a run a [`Checkpoints`] as a resource; react uses it, and a custom agent does in a few
//! lines ([`Checkpoints::bind`]).

mod directory;
mod frames;
mod part;
mod store;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use actuator_events::{Event, InfoEvent};
use actuator_model::{ChatMessage, ModelOutput, ToolCall};
use serde::{Deserialize, Serialize};

pub use directory::{DEFAULT_MAX_DIRECTORY_BYTES, DEFAULT_MAX_DIRECTORY_ENTRIES, DirectoryPart};
pub use part::{CheckpointPart, PartBlobs};
pub use store::{CheckpointError, CheckpointStore, DEFAULT_MAX_CHECKPOINT_BYTES, FileCheckpoints};

use crate::context::RunContext;
use crate::limits::LimitUsage;
use crate::state::AgentState;

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
    /// Those run again, their tools being idempotent ([`CheckpointBinding::resume_with`]).
    pub rerun: Vec<ToolCall>,
    /// Whether the run had finished (its checkpoints kept by
    /// [`keep_finished`](Checkpoints::keep_finished)): the agent returns its final state.
    pub finished: bool,
}

/// Usage carried over, in a form that reads back anywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct CarriedUsage {
    tokens: u64,
    turns: u64,
    cost: f64,
    time_s: f64,
    working_s: f64,
}

impl CarriedUsage {
    fn of(usage: &LimitUsage) -> Self {
        CarriedUsage {
            tokens: usage.tokens,
            turns: usage.turns,
            cost: usage.cost,
            time_s: usage.time.as_secs_f64(),
            working_s: usage.working_time.as_secs_f64(),
        }
    }

    fn usage(&self) -> LimitUsage {
        LimitUsage {
            tokens: self.tokens,
            turns: self.turns,
            cost: self.cost,
            time: Duration::try_from_secs_f64(self.time_s).unwrap_or_default(),
            working_time: Duration::try_from_secs_f64(self.working_s).unwrap_or_default(),
            ..LimitUsage::default()
        }
    }
}

/// The loop's counters, kept with the conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopCounters {
    /// Turns begun.
    pub turn: u32,
    /// Submissions judged so far (react's attempts).
    pub attempts: u32,
    /// Refusals in a row (react gives up after three).
    #[serde(default)]
    pub refusals: u32,
}

/// A checkpoint as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    version: u32,
    /// Which checkpoint (the journal names the one it follows).
    id: String,
    messages: Vec<ChatMessage>,
    counters: LoopCounters,
    usage: CarriedUsage,
    /// Set when the run finished (the checkpoint is then its final state): its explicit
    /// output, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finished: Option<Finished>,
    /// Each part's description (see [`CheckpointPart`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    parts: BTreeMap<String, serde_json::Value>,
}

/// A finished run's output, kept with its final conversation.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Finished {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<ModelOutput>,
}

/// A journal entry as stored: what the conversation gained since the entry before (or the
/// checkpoint `base`), appended to the key's journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    version: u32,
    base: String,
    added: Vec<ChatMessage>,
    counters: LoopCounters,
    usage: CarriedUsage,
}

const VERSION: u32 = 2;

/// When checkpoints are taken (the reference's triggers), besides the first turn's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Policy {
    every_turns: Option<u32>,
    every_tokens: Option<u64>,
    every: Option<Duration>,
}

struct Inner {
    store: Arc<dyn CheckpointStore>,
    key: String,
    policy: Policy,
    in_flight: InFlightPolicy,
    keep_finished: bool,
    parts: Vec<Arc<dyn CheckpointPart>>,
    /// A checkpoint was asked for ([`Checkpoints::checkpoint_next_turn`]).
    requested: AtomicBool,
    bound: AtomicBool,
    resumed: Mutex<Option<ResumeReport>>,
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
    inner: Arc<Inner>,
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

    /// Adds `part` to what each checkpoint holds (a sandbox's files: [`DirectoryPart`]).
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
struct BindingState {
    /// The last checkpoint: its id and the ids of the messages it held (a journal is what
    /// follows them; a history edited since is checkpointed whole).
    base: Option<String>,
    /// How many messages the last checkpoint holds.
    base_len: usize,
    /// The ids of the messages the checkpoint and its journal hold: an entry adds what
    /// follows them.
    covered: Vec<String>,
    last_turn: u32,
    last_tokens: u64,
    last_at: Option<Instant>,
}

/// What is durable, against which a journal entry is written.
struct Following {
    base: String,
    base_len: usize,
    covered: usize,
}

/// A run resumed from its checkpoint: what the agent goes on with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Resumed {
    /// The conversation to go on with (in-flight calls answered or dropped, by the policy).
    pub messages: Vec<ChatMessage>,
    /// The loop's counters when it stopped.
    pub counters: LoopCounters,
    /// The report (also [`Checkpoints::resumed`], and an info event).
    pub report: ResumeReport,
    /// The final state of a run that had finished (see [`Checkpoints::keep_finished`]):
    /// the agent returns it rather than going on.
    pub finished: Option<AgentState>,
    /// Calls of the last assistant message left unanswered to be run again before the next
    /// turn ([`CheckpointBinding::resume_with`]).
    pub rerun: Vec<ToolCall>,
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

fn ids(messages: &[ChatMessage]) -> Vec<String> {
    messages.iter().map(|m| m.id().to_owned()).collect()
}

fn journal_key(key: &str) -> String {
    format!("{key}#journal")
}

fn note(cx: &RunContext, message: String) {
    tracing::info!("{message}");
    cx.emit(Event::Info(InfoEvent {
        source: Some("checkpoint".to_owned()),
        message,
    }));
}

impl CheckpointBinding {
    fn inner(&self) -> &Inner {
        &self.checkpoints.inner
    }

    fn state(&self) -> std::sync::MutexGuard<'_, BindingState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

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
