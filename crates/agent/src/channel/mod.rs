//! An operator's line to a running agent (the reference's `agent_channel`): messages delivered
//! at the top of the agent's next turn, interrupts of the turn in flight, the transcript so
//! far, and the questions the agent asks back (`ask_user`, `notify_user`).
//!
//! The operator holds an [`AgentChannel`] and gives a clone to the run as a resource
//! ([`RunOptions::resource`](crate::RunOptions::resource)); react takes it up by itself, and a
//! custom agent in a few lines ([`AgentChannel::bind`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use actuator_events::{Event, InfoEvent, InterruptEvent, InterruptSource, Interrupted};
use actuator_model::{ChatMessage, MessageSource};
use tokio::sync::Notify;

use crate::context::RunContext;
use actuator_events::LimitExceeded;

#[cfg(unix)]
pub mod socket;
#[cfg(unix)]
pub use socket::{ChannelServer, MAX_LINE_BYTES, serve_unix};

mod tools;
pub use tools::{
    AskUserOptions, DECLINED, NO_OPERATOR, UNANSWERED, ask_user, ask_user_with, notify_user,
};

/// The most items (messages, interrupts) an operator may have queued and not yet delivered.
pub const MAX_QUEUED: usize = 256;

/// The longest message (bytes) an operator may send, and the longest answer to a question.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// The most questions and notices the agent may have waiting for the operator to read.
pub const MAX_REQUESTS: usize = 64;

/// The text a tool call cut short by an operator's interrupt answers (the reference's).
pub const CANCELLED_BY_USER: &str = "Tool call cancelled by user.";

/// Why the operator's side of a channel refused something.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChannelError {
    /// [`MAX_QUEUED`] items wait already: the agent is not taking them.
    #[error("the agent has {MAX_QUEUED} messages it has not taken yet: wait for its next turn")]
    Full,
    /// The message is over [`MAX_MESSAGE_BYTES`].
    #[error("the message is {len} bytes, over the {MAX_MESSAGE_BYTES} a channel carries")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// No question with this id waits for an answer (answered, timed out, or never asked).
    #[error("no question {id} waits for an answer (answered already, or timed out)")]
    NoQuestion {
        /// The id given.
        id: u64,
    },
}

/// What the agent asks of the operator.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OperatorRequest {
    /// A question (`ask_user`): answer it with [`AgentChannel::answer`] by its id.
    Question {
        /// Its id.
        id: u64,
        /// The question.
        message: String,
        /// The JSON Schema the answer must match, when the agent gave one.
        schema: Option<serde_json::Value>,
    },
    /// A notice (`notify_user`): nothing to answer.
    Notice {
        /// What the agent says.
        message: String,
    },
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// The operator answered.
    Accepted(String),
    /// The operator declined to answer.
    Declined,
    /// Nobody answered in time (or no operator was there).
    TimedOut,
}

#[derive(Default)]
struct State {
    queue: VecDeque<String>,
    interrupt: bool,
    transcript: Vec<ChatMessage>,
    requests: VecDeque<OperatorRequest>,
    waiting: HashMap<u64, tokio::sync::oneshot::Sender<Answer>>,
    next_question: u64,
}

struct Inner {
    state: Mutex<State>,
    /// Woken when the operator posts or interrupts.
    posted: Notify,
    /// Woken when the agent asks or notifies.
    requested: Notify,
    /// Whether an agent has taken the channel up (the first one does; agents it runs do not).
    bound: AtomicBool,
}

/// An operator's line to a running agent: clone it, give one clone to the run as a resource,
/// and keep the other.
///
/// ```
/// use actuator_agent::{AgentChannel, RunOptions};
/// let channel = AgentChannel::new();
/// let options = RunOptions::new().resource(channel.clone());
/// channel.post("Check the tests first.").unwrap();
/// channel.interrupt();
/// assert!(channel.transcript().is_empty()); // filled in as the agent runs
/// # drop(options);
/// ```
#[derive(Clone)]
pub struct AgentChannel {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AgentChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentChannel")
            .field("bound", &self.inner.bound.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for AgentChannel {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentChannel {
    /// A channel no agent has taken up yet.
    pub fn new() -> Self {
        AgentChannel {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                posted: Notify::new(),
                requested: Notify::new(),
                bound: AtomicBool::new(false),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent across a panic (each change is one assignment).
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends the agent a message, delivered as a user message at the top of its next turn
    /// (several sent meanwhile are joined into one).
    ///
    /// # Errors
    ///
    /// [`ChannelError::TooLong`], or [`ChannelError::Full`] when the agent is not taking its
    /// messages.
    pub fn post(&self, text: impl Into<String>) -> Result<(), ChannelError> {
        let text = text.into();
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(ChannelError::TooLong { len: text.len() });
        }
        {
            let mut state = self.state();
            if state.queue.len() >= MAX_QUEUED {
                return Err(ChannelError::Full);
            }
            state.queue.push_back(text);
        }
        self.inner.posted.notify_waiters();
        Ok(())
    }

    /// Cuts the agent's turn in flight short (its generation, or its tool calls, which are
    /// cancelled and answered with [`CANCELLED_BY_USER`]); between turns, the next turn is.
    /// The agent then waits for a message ([`AgentChannel::post`]) before it goes on.
    pub fn interrupt(&self) {
        self.state().interrupt = true;
        self.inner.posted.notify_waiters();
    }

    /// The agent's conversation as of its last turn.
    pub fn transcript(&self) -> Vec<ChatMessage> {
        self.state().transcript.clone()
    }

    /// The agent's next question or notice, waiting until there is one.
    pub async fn next_request(&self) -> OperatorRequest {
        loop {
            let notified = self.inner.requested.notified();
            if let Some(request) = self.state().requests.pop_front() {
                return request;
            }
            notified.await;
        }
    }

    /// The agent's next question or notice, if one waits.
    pub fn try_next_request(&self) -> Option<OperatorRequest> {
        self.state().requests.pop_front()
    }

    /// Answers question `id` (`None` declines it).
    ///
    /// # Errors
    ///
    /// [`ChannelError::NoQuestion`] when no such question waits; [`ChannelError::TooLong`].
    pub fn answer(&self, id: u64, answer: Option<String>) -> Result<(), ChannelError> {
        if let Some(text) = &answer
            && text.len() > MAX_MESSAGE_BYTES
        {
            return Err(ChannelError::TooLong { len: text.len() });
        }
        let sender = self
            .state()
            .waiting
            .remove(&id)
            .ok_or(ChannelError::NoQuestion { id })?;
        let answer = answer.map_or(Answer::Declined, Answer::Accepted);
        sender
            .send(answer)
            .map_err(|_| ChannelError::NoQuestion { id })
    }

    /// Asks the operator `message` (answer matching `schema` when given) and waits for the
    /// answer at most `timeout` (the agent's side: the `ask_user` tool).
    pub async fn ask(
        &self,
        message: impl Into<String>,
        schema: Option<serde_json::Value>,
        timeout: Duration,
    ) -> Answer {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let id = {
            let mut state = self.state();
            if state.requests.len() >= MAX_REQUESTS {
                return Answer::TimedOut;
            }
            state.next_question += 1;
            let id = state.next_question;
            state.waiting.insert(id, tx);
            state.requests.push_back(OperatorRequest::Question {
                id,
                message: message.into(),
                schema,
            });
            id
        };
        self.inner.requested.notify_waiters();
        let answer = tokio::time::timeout(timeout, rx).await;
        let mut state = self.state();
        state.waiting.remove(&id);
        // An unread question is withdrawn.
        state
            .requests
            .retain(|r| !matches!(r, OperatorRequest::Question { id: q, .. } if *q == id));
        match answer {
            Ok(Ok(answer)) => answer,
            _ => Answer::TimedOut,
        }
    }

    /// Tells the operator `message` (the agent's side: the `notify_user` tool). A notice
    /// over [`MAX_REQUESTS`] unread ones replaces the oldest.
    pub fn notify(&self, message: impl Into<String>) {
        {
            let mut state = self.state();
            if state.requests.len() >= MAX_REQUESTS
                && let Some(i) = state
                    .requests
                    .iter()
                    .position(|r| matches!(r, OperatorRequest::Notice { .. }))
            {
                state.requests.remove(i);
            }
            state.requests.push_back(OperatorRequest::Notice {
                message: message.into(),
            });
        }
        self.inner.requested.notify_waiters();
    }

    /// Takes the channel up for the agent about to run (the agent's side). The first agent of
    /// a run to ask gets it; agents it runs (handoffs, agents as tools) get `None`, so the
    /// operator talks to the outer agent only. Released when the binding is dropped.
    ///
    /// A custom agent's loop, as react's:
    ///
    /// ```
    /// use actuator_agent::{AgentChannel, AgentState, RunContext};
    /// # async fn turn(state: &mut AgentState) {}
    /// async fn agent_loop(mut state: AgentState, cx: RunContext) -> AgentState {
    ///     let binding = cx.resource::<AgentChannel>().and_then(AgentChannel::bind);
    ///     for _ in 0..10 {
    ///         if let Some(b) = &binding {
    ///             let Ok(messages) = b.before_turn(&cx, &state.messages).await else { break };
    ///             state.messages.extend(messages);
    ///         }
    ///         let interrupted = match &binding {
    ///             Some(b) => b.guard(&cx, actuator_events::Interrupted::Generate, None, turn(&mut state)).await.is_none(),
    ///             None => { turn(&mut state).await; false }
    ///         };
    ///         if let (true, Some(b)) = (interrupted, &binding) {
    ///             let Ok(messages) = b.after_interrupt(&cx, &state.messages).await else { break };
    ///             state.messages.extend(messages);
    ///         }
    ///     }
    ///     state
    /// }
    /// ```
    pub fn bind(&self) -> Option<ChannelBinding> {
        self.inner
            .bound
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| ChannelBinding {
                channel: self.clone(),
            })
    }
}

/// An agent's hold on its [`AgentChannel`] (see [`AgentChannel::bind`]).
#[derive(Debug)]
pub struct ChannelBinding {
    channel: AgentChannel,
}

impl Drop for ChannelBinding {
    fn drop(&mut self) {
        self.channel.inner.bound.store(false, Ordering::Release);
    }
}

impl ChannelBinding {
    /// Publishes `messages` as the transcript the operator reads.
    pub fn publish(&self, messages: &[ChatMessage]) {
        self.channel.state().transcript = messages.to_vec();
    }

    /// The operator's messages for the top of a turn, as one user message (source
    /// `operator`, each also recorded as an info event of source `operator`). When
    /// `messages` has no user message yet and none waits, waits for one: an agent started
    /// without a task takes it from the operator. Publishes the conversation with them.
    ///
    /// # Errors
    ///
    /// A time limit of the run passed while waiting.
    pub async fn before_turn(
        &self,
        cx: &RunContext,
        messages: &[ChatMessage],
    ) -> Result<Vec<ChatMessage>, LimitExceeded> {
        let has_user = messages.iter().any(|m| matches!(m, ChatMessage::User(_)));
        let posted = match self.drain(cx) {
            Some(m) => vec![m],
            None if has_user => Vec::new(),
            None => {
                self.publish(messages);
                vec![self.wait_for_message(cx).await?]
            }
        };
        let mut all = messages.to_vec();
        all.extend(posted.iter().cloned());
        self.publish(&all);
        Ok(posted)
    }

    /// Runs `turn` (the part of a turn that is `doing`; `in_flight`, the first tool call it
    /// runs when it runs calls) unless the operator interrupts it first: `None` when
    /// interrupted (`turn` is dropped, so cancelled, and an interrupt event is recorded). An
    /// interrupt sent between turns interrupts the next one at once.
    pub async fn guard<T>(
        &self,
        cx: &RunContext,
        doing: Interrupted,
        in_flight: Option<String>,
        turn: impl Future<Output = T>,
    ) -> Option<T> {
        let mut turn = std::pin::pin!(turn);
        loop {
            let notified = self.channel.inner.posted.notified();
            if std::mem::take(&mut self.channel.state().interrupt) {
                let mut event = InterruptEvent::new(InterruptSource::UserCancel, doing);
                if let Some(id) = in_flight {
                    event = event.with_tool_call_id(id);
                }
                cx.emit(Event::Interrupt(Box::new(event)));
                return None;
            }
            tokio::select! {
                out = turn.as_mut() => return Some(out),
                () = notified => {}
            }
        }
    }

    /// What an interrupted conversation needs before it goes on: a tool message answering
    /// each call of the last assistant message left without one ([`CANCELLED_BY_USER`]),
    /// then the operator's next message, waited for (an interrupt stops the agent until the
    /// operator says how to go on).
    ///
    /// # Errors
    ///
    /// A time limit of the run passed while waiting.
    pub async fn after_interrupt(
        &self,
        cx: &RunContext,
        messages: &[ChatMessage],
    ) -> Result<Vec<ChatMessage>, LimitExceeded> {
        let mut out = repair(messages);
        let mut all = messages.to_vec();
        all.extend(out.iter().cloned());
        self.publish(&all);
        let next = match self.drain(cx) {
            Some(m) => m,
            None => self.wait_for_message(cx).await?,
        };
        out.push(next);
        Ok(out)
    }

    /// The queued messages as one (recorded), if any.
    fn drain(&self, cx: &RunContext) -> Option<ChatMessage> {
        let texts: Vec<String> = self.channel.state().queue.drain(..).collect();
        if texts.is_empty() {
            return None;
        }
        for text in &texts {
            cx.emit(Event::Info(InfoEvent {
                source: Some("operator".to_owned()),
                message: text.clone(),
            }));
        }
        let mut message = ChatMessage::user(texts.join("\n\n"));
        if let ChatMessage::User(m) = &mut message {
            m.source = Some(MessageSource::Operator);
        }
        Some(message)
    }

    /// Waits for the operator's next message, within the run's time limits (the wait is
    /// not working time).
    async fn wait_for_message(&self, cx: &RunContext) -> Result<ChatMessage, LimitExceeded> {
        let started = std::time::Instant::now();
        let waited = cx
            .guard(async {
                loop {
                    let notified = self.channel.inner.posted.notified();
                    if let Some(m) = self.drain(cx) {
                        return m;
                    }
                    notified.await;
                }
            })
            .await;
        cx.record_waiting(started.elapsed());
        waited
    }
}

/// The ids of the last assistant message's calls that no tool message answers.
///
/// ```
/// use actuator_agent::channel::unanswered_calls;
/// use actuator_model::{ChatMessage, ModelOutput, ToolCall};
/// let out = ModelOutput::for_tool_calls("m", "", vec![ToolCall::new("c1", "add", serde_json::json!({}))]);
/// let messages = vec![ChatMessage::user("hi"), out.message().unwrap().clone().into()];
/// assert_eq!(unanswered_calls(&messages), ["c1"]);
/// ```
pub fn unanswered_calls(messages: &[ChatMessage]) -> Vec<String> {
    let Some(at) = messages
        .iter()
        .rposition(|m| matches!(m, ChatMessage::Assistant(_)))
    else {
        return Vec::new();
    };
    let ChatMessage::Assistant(assistant) = &messages[at] else {
        return Vec::new();
    };
    let answered: Vec<&str> = messages[at + 1..]
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(t) => t.tool_call_id.as_deref(),
            _ => None,
        })
        .collect();
    assistant
        .calls()
        .iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .map(|c| c.id.to_string())
        .collect()
}

/// A cancelled tool message for each unanswered call of the last assistant message.
fn repair(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let Some(ChatMessage::Assistant(assistant)) = messages
        .iter()
        .rfind(|m| matches!(m, ChatMessage::Assistant(_)))
    else {
        return Vec::new();
    };
    let unanswered = unanswered_calls(messages);
    assistant
        .calls()
        .iter()
        .filter(|c| unanswered.iter().any(|id| id.as_str() == c.id.as_str()))
        .map(|c| {
            ChatMessage::tool(
                CANCELLED_BY_USER,
                c.id.clone(),
                c.function.clone(),
                Some(actuator_model::ToolCallError {
                    kind: actuator_tool_core::ToolErrorKind::Cancelled,
                    message: CANCELLED_BY_USER.to_owned(),
                }),
            )
        })
        .collect()
}
