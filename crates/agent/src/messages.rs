//! [`MessageList`]: an agent state's conversation, which enforces the run's message limit
//! itself as messages are added (the reference's `ChatMessageList`).

use std::ops::{Deref, DerefMut};

use actuator_model::ChatMessage;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::budget::Budget;

/// The conversation of an [`AgentState`](crate::AgentState): a list of messages (it derefs to a
/// slice, so reading, indexing, iterating and editing messages in place work as on a vector)
/// that, while a run works on it, enforces the run's message limit when messages are added.
///
/// Every way to add messages goes through the limit: [`push`](Self::push),
/// [`extend`](Self::extend), [`insert`](Self::insert), [`append`](Self::append) and
/// [`set`](Self::set) check it first, as the reference's `ChatMessageList` does:
/// an addition that would take the conversation over the limit is not made, the limit is
/// recorded, and the run stops at its next step (its next generation, tool execution or
/// message check, or when the agent returns) with that limit and the state as it was. A custom
/// agent therefore cannot escape the limit by forgetting to check it.
///
/// ```
/// use actuator_agent::{AgentState, agent_fn, run, limits::{message_limit, LimitKind}};
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
///
/// Nothing grows the list around the limit: it is not a `Vec` when mutated, so `Vec`'s own
/// additions are not there to call.
///
/// ```compile_fail
/// let mut state = actuator_agent::AgentState::default();
/// state.messages.extend_from_slice(&[actuator_model::ChatMessage::user("unchecked")]);
/// ```
#[derive(Clone, Default)]
pub struct MessageList {
    items: Vec<ChatMessage>,
    /// The limits of the run working on this list, while one does (its limit scopes and event
    /// sink, not the whole run context).
    budget: Option<Budget>,
}

impl MessageList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether adding `n` messages stays within the run's message limit; when it does not, the
    /// limit is recorded for the run to stop with.
    fn admits(&self, n: usize) -> bool {
        match &self.budget {
            Some(budget) if n > 0 => budget.admit_messages(self.items.len() + n),
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

    /// Keeps only the messages `keep` returns true for (removing never exceeds a limit).
    pub fn retain(&mut self, keep: impl FnMut(&ChatMessage) -> bool) {
        self.items.retain(keep);
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        self.items.truncate(len);
    }

    /// Removes every message.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Removes and returns the last message.
    pub fn pop(&mut self) -> Option<ChatMessage> {
        self.items.pop()
    }

    /// Removes and returns the message at `index`, or `None` past the end (where
    /// `Vec::remove` would panic).
    pub fn remove(&mut self, index: usize) -> Option<ChatMessage> {
        (index < self.items.len()).then(|| self.items.remove(index))
    }

    /// Removes the messages in `range` and returns them (a range out of bounds is clamped,
    /// where `Vec::drain` would panic).
    pub fn drain(&mut self, range: impl std::ops::RangeBounds<usize>) -> Vec<ChatMessage> {
        use std::ops::Bound;
        let len = self.items.len();
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        }
        .min(len);
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => len,
        }
        .clamp(start, len);
        self.items.drain(start..end).collect()
    }

    /// Puts the list under a run's limits.
    pub(crate) fn attach(&mut self, budget: Budget) {
        self.budget = Some(budget);
    }

    /// Releases the list from its run.
    pub(crate) fn detach(&mut self) {
        self.budget = None;
    }
}

/// Reading as a slice. Editing messages in place goes through [`DerefMut`] to a slice, which
/// cannot grow: additions go through the methods above, which check the run's message limit.
impl Deref for MessageList {
    type Target = [ChatMessage];
    fn deref(&self) -> &[ChatMessage] {
        &self.items
    }
}

impl DerefMut for MessageList {
    fn deref_mut(&mut self) -> &mut [ChatMessage] {
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
        MessageList {
            items,
            budget: None,
        }
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
