//! The reference's condensed transcript: each model event's input, which repeats the whole
//! conversation so far, is written once per distinct message into the sample's
//! `events_data.messages` pool, and the event keeps `input_refs`, ranges
//! `[start, end_exclusive)` into it. A log then grows with the conversation, not with its
//! square; the reference's reader (and `inspect view`) resolve the references on read, and
//! so does ours ([`resolve_events_data`]).

use std::collections::HashMap;

use actuator_model::ChatMessage;
use serde_json::{Map, Value, json};

/// The message pool of one sample's events.
#[derive(Default)]
pub(crate) struct MessagePool {
    messages: Vec<Value>,
    /// A message's JSON without its `id` (the reference's dedup key) → its pool index.
    by_content: HashMap<String, usize>,
    /// A message's address → its pool index: the events share their conversation's
    /// messages, so each is serialized once however many events repeat it. Valid while the
    /// events are alive, which they are for the whole sample.
    by_address: HashMap<usize, usize>,
}

impl MessagePool {
    /// `input` as range-encoded references into the pool, adding the messages it lacks.
    pub(crate) fn refs<'a>(&mut self, input: impl IntoIterator<Item = &'a ChatMessage>) -> Value {
        let mut ranges: Vec<[usize; 2]> = Vec::new();
        for message in input {
            let index = self.index(message);
            match ranges.last_mut() {
                Some(last) if last[1] == index => last[1] += 1,
                _ => ranges.push([index, index + 1]),
            }
        }
        json!(ranges)
    }

    fn index(&mut self, message: &ChatMessage) -> usize {
        let address = std::ptr::from_ref(message) as usize;
        if let Some(&index) = self.by_address.get(&address) {
            return index;
        }
        let value = serde_json::to_value(message).unwrap_or(Value::Null);
        let key = match &value {
            Value::Object(fields) => {
                let without_id: Map<String, Value> = fields
                    .iter()
                    .filter(|(k, _)| k.as_str() != "id")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Value::Object(without_id).to_string()
            }
            other => other.to_string(),
        };
        let index = match self.by_content.get(&key) {
            Some(&index) => index,
            None => {
                let index = self.messages.len();
                self.messages.push(value);
                self.by_content.insert(key, index);
                index
            }
        };
        self.by_address.insert(address, index);
        index
    }

    /// The sample's `events_data`, or `None` when no event referred to a message.
    pub(crate) fn into_events_data(self) -> Option<Value> {
        (!self.messages.is_empty()).then(|| json!({"messages": self.messages, "calls": []}))
    }
}

/// Puts every model event's input back from `events_data` and drops the pool, as the
/// reference's reader does. References past the pool's end are skipped (the reference
/// slices), so a damaged log reads with what it has rather than failing.
pub(crate) fn resolve_events_data(events: &mut [Value], events_data: Option<Value>) {
    let Some(data) = events_data else {
        return;
    };
    let pool = data
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for event in events.iter_mut() {
        let Some(fields) = event.as_object_mut() else {
            continue;
        };
        let Some(refs) = fields.remove("input_refs") else {
            continue;
        };
        let mut input = Vec::new();
        for range in refs.as_array().into_iter().flatten() {
            let bound = |i: usize| range.get(i).and_then(Value::as_u64).unwrap_or(0) as usize;
            let (start, end) = (bound(0), bound(1).min(pool.len()));
            if start < end {
                input.extend_from_slice(&pool[start..end]);
            }
        }
        fields.insert("input".into(), Value::Array(input));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_conversation_is_pooled_once_and_resolved_back() {
        let conversation: Vec<ChatMessage> = (0..5)
            .map(|i| ChatMessage::user(format!("turn {i}")))
            .collect();
        let mut pool = MessagePool::default();
        let mut events: Vec<Value> = (1..=5)
            .map(|n| json!({"event": "model", "input": [], "input_refs": pool.refs(&conversation[..n])}))
            .collect();
        assert_eq!(events[4]["input_refs"], json!([[0, 5]]));
        let data = pool.into_events_data().unwrap();
        assert_eq!(data["messages"].as_array().unwrap().len(), 5);

        resolve_events_data(&mut events, Some(data));
        for (n, event) in events.iter().enumerate() {
            assert_eq!(event["input"].as_array().unwrap().len(), n + 1);
            assert!(event.get("input_refs").is_none());
        }
        assert_eq!(events[4]["input"][4]["content"], "turn 4");
    }

    #[test]
    fn equal_messages_but_their_ids_share_one_entry() {
        let mut a = ChatMessage::user("same");
        let mut b = ChatMessage::user("same");
        if let (ChatMessage::User(a), ChatMessage::User(b)) = (&mut a, &mut b) {
            a.id = "one".into();
            b.id = "two".into();
        }
        let other = ChatMessage::user("other");
        let mut pool = MessagePool::default();
        assert_eq!(pool.refs(&[a, other, b]), json!([[0, 2], [0, 1]]));
    }

    #[test]
    fn references_past_the_pool_are_skipped_not_a_panic() {
        let mut events = vec![json!({"input_refs": [[0, 2], [7, 9], "junk", [5]]})];
        resolve_events_data(
            &mut events,
            Some(json!({"messages": [{"role": "user", "content": "only"}]})),
        );
        assert_eq!(
            events[0]["input"],
            json!([{"role": "user", "content": "only"}])
        );
    }
}
