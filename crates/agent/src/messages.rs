//! [`MessageList`]: an agent state's conversation, which enforces the run's message limit
//! itself as messages are added (the reference's `ChatMessageList`).

use std::ops::{Deref, DerefMut};

use actuator_model::ChatMessage;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::context::RunContext;

/// The conversation of an [`AgentState`](crate::AgentState): a `Vec<ChatMessage>` (it derefs to
/// one, so reading, indexing, iterating, `retain` and `truncate` work as on a vector) that,
/// while a run works on it, enforces the run's message limit when messages are added.
///
/// [`push`](Self::push), [`extend`](Self::extend), [`insert`](Self::insert) and
/// [`append`](Self::append) check the limit first, as the reference's `ChatMessageList` does:
/// an addition that would take the conversation over the limit is not made, the limit is
/// recorded, and the run stops at its next step (its next generation, tool execution or
/// message check, or when the agent returns) with that limit and the state as it was. A custom
/// agent therefore cannot escape the limit by forgetting to check it.
///
/// ```
/// use actuator_agent::{AgentState, LimitKind, agent_fn, message_limit, run};
/// use actuator_model::ChatMessage;
///
/// // An agent that adds messages forever and never checks a limit itself.
/// let chatty = agent_fn("chatty", |mut state: AgentState, _cx, _args| async move {
///     for i in 0..100 {
///         state.messages.push(ChatMessage::assistant(format!("message {i}")));
///     }
///     Ok(state)
/// });
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let out = run(&chatty, "go", &[message_limit(3)]).await.unwrap();
/// let limit = out.limit.unwrap();
/// assert_eq!(limit.kind, LimitKind::Message);
/// assert_eq!(limit.message, "Message limit exceeded. count: 4; limit: 3");
/// assert_eq!(out.state.messages.len(), 3); // the input and the two messages that fit
/// # });
/// ```
#[derive(Clone, Default)]
pub struct MessageList {
    items: Vec<ChatMessage>,
    /// The run enforcing its message limit on this list, while one works on it.
    run: Option<RunContext>,
}

impl MessageList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether adding `n` messages stays within the run's message limit; when it does not, the
    /// limit is recorded for the run to stop with.
    fn admits(&self, n: usize) -> bool {
        match &self.run {
            Some(cx) if n > 0 => cx.admit_messages(self.items.len() + n),
            _ => true,
        }
    }

    /// Appends a message, unless it would exceed the run's message limit (see above).
    pub fn push(&mut self, message: ChatMessage) {
        if self.admits(1) {
            self.items.push(message);
        }
    }

    /// Appends messages, unless together they would exceed the run's message limit (then none
    /// is added).
    pub fn extend(&mut self, messages: impl IntoIterator<Item = ChatMessage>) {
        let messages: Vec<ChatMessage> = messages.into_iter().collect();
        if self.admits(messages.len()) {
            self.items.extend(messages);
        }
    }

    /// Moves every message of `other` to the end, unless that would exceed the run's message
    /// limit (then `other` is left as it was).
    pub fn append(&mut self, other: &mut Vec<ChatMessage>) {
        if self.admits(other.len()) {
            self.items.append(other);
        }
    }

    /// Inserts a message at `index` (an index past the end appends, where `Vec::insert` would
    /// panic), unless it would exceed the run's message limit.
    pub fn insert(&mut self, index: usize, message: ChatMessage) {
        if self.admits(1) {
            let index = index.min(self.items.len());
            self.items.insert(index, message);
        }
    }

    /// Replaces the whole conversation, keeping the run's limit on it (a longer replacement
    /// than the limit allows is refused like any addition).
    pub fn set(&mut self, messages: Vec<ChatMessage>) {
        let growth = messages.len().saturating_sub(self.items.len());
        if self.admits(growth) {
            self.items = messages;
        }
    }

    /// The messages, as a vector.
    pub fn into_vec(self) -> Vec<ChatMessage> {
        self.items
    }

    /// Takes the messages out, leaving the list empty (and still limited).
    pub fn take(&mut self) -> Vec<ChatMessage> {
        std::mem::take(&mut self.items)
    }

    /// Puts the list under `cx`'s message limit.
    pub(crate) fn attach(&mut self, cx: RunContext) {
        self.run = Some(cx);
    }

    /// Releases the list from its run.
    pub(crate) fn detach(&mut self) {
        self.run = None;
    }
}

impl Deref for MessageList {
    type Target = Vec<ChatMessage>;
    fn deref(&self) -> &Vec<ChatMessage> {
        &self.items
    }
}

impl DerefMut for MessageList {
    fn deref_mut(&mut self) -> &mut Vec<ChatMessage> {
        &mut self.items
    }
}

impl std::fmt::Debug for MessageList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.items).finish()
    }
}

/// Lists are equal when their messages are (the run they belong to does not matter).
impl PartialEq for MessageList {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl PartialEq<Vec<ChatMessage>> for MessageList {
    fn eq(&self, other: &Vec<ChatMessage>) -> bool {
        &self.items == other
    }
}

impl From<Vec<ChatMessage>> for MessageList {
    fn from(items: Vec<ChatMessage>) -> Self {
        MessageList { items, run: None }
    }
}

impl From<MessageList> for Vec<ChatMessage> {
    fn from(list: MessageList) -> Self {
        list.items
    }
}

impl FromIterator<ChatMessage> for MessageList {
    fn from_iter<I: IntoIterator<Item = ChatMessage>>(iter: I) -> Self {
        MessageList::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl IntoIterator for MessageList {
    type Item = ChatMessage;
    type IntoIter = std::vec::IntoIter<ChatMessage>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a> IntoIterator for &'a MessageList {
    type Item = &'a ChatMessage;
    type IntoIter = std::slice::Iter<'a, ChatMessage>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl Serialize for MessageList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.items.serialize(s)
    }
}

impl<'de> Deserialize<'de> for MessageList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<ChatMessage>::deserialize(d).map(MessageList::from)
    }
}
