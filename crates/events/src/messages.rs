//! [`SharedMessages`]: a conversation as events record it, shared between the events of one
//! conversation so that recording a generation costs what was added since the last one, not a
//! copy of the whole conversation.

use std::sync::Arc;

use actuator_model::ChatMessage;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;

/// An immutable list of messages made of shared segments: each [`ModelEvent`](crate::ModelEvent)
/// of a conversation holds the segments of the events before it plus one segment with the
/// messages added since, so cloning is O(1) and [`SharedMessages::continued_by`] is O(messages
/// added). A log writer reads each event's whole input with [`SharedMessages::iter`] or
/// [`SharedMessages::to_vec`]; serde sees a plain list of messages (the JSON is an array).
///
/// ```
/// use actuator_events::SharedMessages;
/// use actuator_model::ChatMessage;
///
/// let mut conversation = vec![ChatMessage::user("2 + 2?")];
/// let first = SharedMessages::new().continued_by(&conversation);
/// conversation.push(ChatMessage::assistant("4"));
/// conversation.push(ChatMessage::user("And 3 + 3?"));
/// let second = first.continued_by(&conversation); // copies only the two new messages
/// assert_eq!(second.len(), 3);
/// assert!(first.is_shared_prefix_of(&second));
/// assert_eq!(second.to_vec(), conversation);
/// assert_eq!(first.to_vec(), conversation[..1]);
/// ```
#[derive(Clone, Default)]
pub struct SharedMessages {
    last: Option<Arc<Segment>>,
}

struct Segment {
    prev: Option<Arc<Segment>>,
    /// Inline up to a turn's usual two new messages (the assistant's and one tool result):
    /// one allocation per segment instead of two.
    messages: SmallVec<[ChatMessage; 2]>,
    /// Messages in this segment and every segment before it.
    len: usize,
}

impl Drop for Segment {
    // A long conversation is a long chain: drop it in a loop, not by recursion, so that no
    // number of turns can overflow the stack.
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(segment) = prev {
            prev = match Arc::into_inner(segment) {
                Some(mut s) => s.prev.take(),
                None => None,
            };
        }
    }
}

impl SharedMessages {
    /// No messages.
    pub fn new() -> Self {
        SharedMessages::default()
    }

    /// How many messages.
    pub fn len(&self) -> usize {
        self.last.as_ref().map_or(0, |s| s.len)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last message.
    pub fn last(&self) -> Option<&ChatMessage> {
        self.last.as_ref().and_then(|s| s.messages.last())
    }

    /// These messages followed by `added`, sharing these (O(added)).
    #[must_use]
    pub fn extended(&self, added: impl IntoIterator<Item = ChatMessage>) -> SharedMessages {
        let messages: SmallVec<[ChatMessage; 2]> = added.into_iter().collect();
        if messages.is_empty() {
            return self.clone();
        }
        SharedMessages {
            last: Some(Arc::new(Segment {
                len: self.len() + messages.len(),
                prev: self.last.clone(),
                messages,
            })),
        }
    }

    /// `input` as shared messages, reusing these when `input` continues them.
    ///
    /// `input` continues these when it is at least as long and its message at this length has
    /// the id of this list's last message (ids are unique per message): then only the
    /// messages after it are copied. Otherwise every message of `input` is. The caller
    /// promises that it only appends to a conversation it records this way: a message edited
    /// in place, keeping its id, would not be seen (record such a conversation from a fresh
    /// `SharedMessages`).
    #[must_use]
    pub fn continued_by(&self, input: &[ChatMessage]) -> SharedMessages {
        let n = self.len();
        let continues = match (self.last(), n.checked_sub(1).and_then(|i| input.get(i))) {
            (Some(last), Some(at)) => last.id() == at.id(),
            _ => false,
        };
        if continues {
            self.extended(input[n..].iter().cloned())
        } else {
            SharedMessages::new().extended(input.iter().cloned())
        }
    }

    /// The segments, first to last.
    fn segments(&self) -> Vec<&Segment> {
        let mut out = Vec::new();
        let mut at = self.last.as_deref();
        while let Some(s) = at {
            out.push(s);
            at = s.prev.as_deref();
        }
        out.reverse();
        out
    }

    /// The messages, in order.
    pub fn iter(&self) -> impl Iterator<Item = &ChatMessage> {
        self.segments().into_iter().flat_map(|s| s.messages.iter())
    }

    /// A copy of the messages, in order.
    pub fn to_vec(&self) -> Vec<ChatMessage> {
        let mut out = Vec::with_capacity(self.len());
        out.extend(self.iter().cloned());
        out
    }

    /// Whether `other` starts with these very messages, sharing their storage (not merely
    /// equal ones): what an event's input has in common with the next event's.
    pub fn is_shared_prefix_of(&self, other: &SharedMessages) -> bool {
        let Some(mine) = &self.last else {
            return true;
        };
        let mut at = other.last.as_ref();
        while let Some(s) = at {
            if Arc::ptr_eq(s, mine) {
                return true;
            }
            if s.len < mine.len {
                return false;
            }
            at = s.prev.as_ref();
        }
        false
    }
}

impl From<Vec<ChatMessage>> for SharedMessages {
    fn from(messages: Vec<ChatMessage>) -> Self {
        SharedMessages::new().extended(messages)
    }
}

impl From<&[ChatMessage]> for SharedMessages {
    fn from(messages: &[ChatMessage]) -> Self {
        SharedMessages::new().extended(messages.iter().cloned())
    }
}

impl PartialEq for SharedMessages {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for SharedMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for SharedMessages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for SharedMessages {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<ChatMessage>::deserialize(deserializer).map(SharedMessages::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continuation_shares_and_an_edit_copies() {
        let mut conversation = vec![ChatMessage::system("s"), ChatMessage::user("u")];
        let a = SharedMessages::new().continued_by(&conversation);
        conversation.push(ChatMessage::assistant("x"));
        let b = a.continued_by(&conversation);
        assert!(a.is_shared_prefix_of(&b));
        assert_eq!(b.to_vec(), conversation);
        // Another conversation (a different message at the boundary) is copied whole.
        let other = vec![ChatMessage::user("u"), ChatMessage::assistant("y")];
        let c = b.continued_by(&other);
        assert!(!a.is_shared_prefix_of(&c));
        assert_eq!(c.to_vec(), other);
        // Shorter input: copied whole.
        let d = b.continued_by(&conversation[..1]);
        assert_eq!(d.to_vec(), conversation[..1]);
        assert!(!b.is_shared_prefix_of(&d));
    }

    #[test]
    fn serializes_as_a_list_and_round_trips() {
        let conversation = vec![ChatMessage::user("u"), ChatMessage::assistant("a")];
        let shared = SharedMessages::from(&conversation[..1]).continued_by(&conversation);
        let json = serde_json::to_value(&shared).unwrap();
        assert_eq!(json, serde_json::to_value(&conversation).unwrap());
        let back: SharedMessages = serde_json::from_value(json).unwrap();
        assert_eq!(back, shared);
    }

    #[test]
    fn a_long_chain_drops_without_recursion() {
        let mut shared = SharedMessages::new();
        for _ in 0..200_000 {
            shared = shared.extended([ChatMessage::user("")]);
        }
        assert_eq!(shared.len(), 200_000);
        drop(shared);
    }
}
