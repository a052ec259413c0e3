//! Chat messages.

use actuator_tool_core::{Content, ToolErrorKind, ToolOutput};
use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::tool_call::ToolCall;

/// A new unique message or call id: 22 characters of the 57-letter alphabet the reference's
/// `shortuuid` writes its ids in (no look-alikes: `0`/`O`, `1`/`I`/`l`), drawn from the
/// thread's cryptographically seeded generator (about 128 random bits, a version-4 UUID's
/// 122 and more).
///
/// Not a UUID written in base 57 as `shortuuid` makes one: nothing decodes an id, and the
/// digits are read straight off random bits with multiplications, where encoding a UUID
/// takes four 128-bit divisions, the dearer part of every message's id.
///
/// ```
/// let id = actuator_model::new_id();
/// assert_eq!(id.len(), 22);
/// assert!(id.bytes().all(|b| b.is_ascii_alphanumeric() && !b"01IOl".contains(&b)));
/// assert_ne!(id, actuator_model::new_id());
/// ```
pub fn new_id() -> CompactString {
    id_from_bits(rand::random())
}

/// shortuuid's alphabet (its default, in order).
const ALPHABET: &[u8; 57] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// The characters of an id.
const ID_LEN: usize = 22;
/// Every pair of digits, `PAIRS[57 * a + b] = [ALPHABET[a], ALPHABET[b]]`: an id is written
/// two digits at a time.
const PAIRS: [[u8; 2]; 57 * 57] = {
    let mut pairs = [[0u8; 2]; 57 * 57];
    let mut i = 0;
    while i < 57 * 57 {
        pairs[i] = [ALPHABET[i / 57], ALPHABET[i % 57]];
        i += 1;
    }
    pairs
};

/// The id of 192 random bits: each word, read as a fraction of one, is written in base
/// 57 × 57 by multiplying it by the base and taking the carry out as the next digit pair.
/// A word's 64 bits give five pairs (57^10 < 2^64, so every pair of the five takes its values
/// near evenly), the third word the last pair.
fn id_from_bits(bits: [u64; 3]) -> CompactString {
    const BASE: u128 = 57 * 57;
    let mut buffer = [0u8; ID_LEN];
    let mut at = 0;
    for (mut word, pairs) in [(bits[0], 5), (bits[1], 5), (bits[2], 1)] {
        for _ in 0..pairs {
            let wide = u128::from(word) * BASE;
            // The carry is below BASE, as `word` is below 2^64.
            let pair = PAIRS[(wide >> 64) as usize];
            buffer[at..at + 2].copy_from_slice(&pair);
            at += 2;
            word = wide as u64;
        }
    }
    // Every byte is from the ASCII alphabet, so the buffer is always valid UTF-8; 22 bytes
    // are kept inline, so an id costs no allocation.
    std::str::from_utf8(&buffer)
        .map(CompactString::new)
        .unwrap_or_default()
}

/// Where a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MessageSource {
    /// Part of the task's input.
    Input,
    /// Produced by a model generation.
    Generate,
    /// Sent by an operator to a running agent (through its channel).
    Operator,
}

/// Message content: a string, or a list of content items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text (up to 24 bytes kept inline, as short tool results often are).
    Text(CompactString),
    /// Content items (text, images, reasoning, …).
    Parts(Vec<Content>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Text(CompactString::default())
    }
}

impl MessageContent {
    /// The text: the string itself, or the text items concatenated (reasoning excluded).
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(t) => t.as_str().to_owned(),
            MessageContent::Parts(parts) => parts.iter().filter_map(Content::as_text).collect(),
        }
    }

    /// Whether there is no content at all.
    pub fn is_empty(&self) -> bool {
        match self {
            MessageContent::Text(t) => t.is_empty(),
            MessageContent::Parts(p) => p.is_empty(),
        }
    }
}

impl From<String> for MessageContent {
    fn from(t: String) -> Self {
        MessageContent::Text(t.into())
    }
}

impl From<CompactString> for MessageContent {
    fn from(t: CompactString) -> Self {
        MessageContent::Text(t)
    }
}

impl From<&str> for MessageContent {
    fn from(t: &str) -> Self {
        MessageContent::Text(t.into())
    }
}

impl From<Vec<Content>> for MessageContent {
    fn from(parts: Vec<Content>) -> Self {
        MessageContent::Parts(parts)
    }
}

impl From<ToolOutput> for MessageContent {
    fn from(out: ToolOutput) -> Self {
        match out {
            ToolOutput::Text(t) => MessageContent::Text(t),
            ToolOutput::Content(c) => MessageContent::Parts(c),
        }
    }
}

/// The error a tool call produced, as recorded on its tool message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallError {
    /// The kind (`parsing`, `timeout`, …).
    #[serde(rename = "type")]
    pub kind: ToolErrorKind,
    /// The message the model sees.
    pub message: String,
}

impl From<&actuator_tool_core::ToolError> for ToolCallError {
    fn from(e: &actuator_tool_core::ToolError) -> Self {
        ToolCallError {
            kind: e.kind(),
            message: e.message().to_owned(),
        }
    }
}

/// A system message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessageSystem {
    /// Unique id.
    #[serde(default = "new_id")]
    pub id: CompactString,
    /// The content.
    pub content: MessageContent,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<MessageSource>,
    /// Anything else worth keeping with the message (for example, a compaction summary marker);
    /// boxed, as it is rare and a message is kept per turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Map<String, Value>>>,
}

/// A user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessageUser {
    /// Unique id.
    #[serde(default = "new_id")]
    pub id: CompactString,
    /// The content.
    pub content: MessageContent,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<MessageSource>,
    /// Anything else worth keeping with the message (for example, a compaction summary marker);
    /// boxed, as it is rare and a message is kept per turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Map<String, Value>>>,
}

/// An assistant (model) message, with the tool calls it makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessageAssistant {
    /// Unique id.
    #[serde(default = "new_id")]
    pub id: CompactString,
    /// The content.
    pub content: MessageContent,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<MessageSource>,
    /// Anything else worth keeping with the message; boxed, as it is rare and a message is
    /// kept per turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Map<String, Value>>>,
    /// The tool calls the model made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The model that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<CompactString>,
}

impl ChatMessageAssistant {
    /// An assistant message with text and no tool calls.
    pub fn new(content: impl Into<MessageContent>) -> Self {
        ChatMessageAssistant {
            id: new_id(),
            content: content.into(),
            source: Some(MessageSource::Generate),
            metadata: None,
            tool_calls: None,
            model: None,
        }
    }

    /// The tool calls (empty when there are none).
    pub fn calls(&self) -> &[ToolCall] {
        self.tool_calls.as_deref().unwrap_or_default()
    }

    /// Keeps each call's arguments as text alone
    /// ([`ToolArguments::release_parsed`](crate::ToolArguments::release_parsed)): agents do
    /// this once the calls have run, so a long conversation does not keep a parsed copy of
    /// every call it made.
    pub fn release_parsed_arguments(&mut self) {
        for call in self.tool_calls.iter_mut().flatten() {
            call.arguments.release_parsed();
        }
    }
}

/// A tool message: the result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessageTool {
    /// Unique id.
    #[serde(default = "new_id")]
    pub id: CompactString,
    /// The result content.
    pub content: MessageContent,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<MessageSource>,
    /// Anything else worth keeping with the message; boxed, as it is rare and a message is
    /// kept per turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Box<Map<String, Value>>>,
    /// The id of the call this answers, as [`ToolCall::id`](crate::ToolCall::id) has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<CompactString>,
    /// The tool called (shared: the executor gives every result of one tool the tool's own
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<Arc<str>>,
    /// The error, when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<ToolCallError>>,
}

/// One message of a conversation.
///
/// Serializes with a `role` tag: `{"role": "user", "id": …, "content": …}`.
///
/// Each variant holds its message in a `Box`, so a conversation's vector takes 16 bytes a
/// slot and each message its own size: a vector grown by doubling keeps up to half its slots
/// empty, and those stay small. Build a variant with [`From`] (`ChatMessage::from(message)`)
/// or the constructors below; match it as usual (`ChatMessage::Tool(t) => t.function`).
///
/// ```
/// use actuator_model::ChatMessage;
/// let m = ChatMessage::user("What is 2 + 3?");
/// assert_eq!(m.text(), "What is 2 + 3?");
/// let json = serde_json::to_value(&m).unwrap();
/// assert_eq!(json["role"], "user");
/// let back: ChatMessage = serde_json::from_value(json).unwrap();
/// assert_eq!(back, m);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// A system message.
    System(Box<ChatMessageSystem>),
    /// A user message.
    User(Box<ChatMessageUser>),
    /// An assistant message.
    Assistant(Box<ChatMessageAssistant>),
    /// A tool result.
    Tool(Box<ChatMessageTool>),
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<MessageContent>) -> Self {
        ChatMessage::System(Box::new(ChatMessageSystem {
            id: new_id(),
            content: content.into(),
            source: None,
            metadata: None,
        }))
    }

    /// A user message.
    pub fn user(content: impl Into<MessageContent>) -> Self {
        ChatMessage::User(Box::new(ChatMessageUser {
            id: new_id(),
            content: content.into(),
            source: None,
            metadata: None,
        }))
    }

    /// An assistant message with text and no tool calls.
    pub fn assistant(content: impl Into<MessageContent>) -> Self {
        ChatMessage::Assistant(Box::new(ChatMessageAssistant::new(content)))
    }

    /// A tool result for a call.
    pub fn tool(
        content: impl Into<MessageContent>,
        tool_call_id: impl Into<CompactString>,
        function: impl Into<Arc<str>>,
        error: Option<ToolCallError>,
    ) -> Self {
        ChatMessage::Tool(Box::new(ChatMessageTool {
            id: new_id(),
            content: content.into(),
            source: None,
            metadata: None,
            tool_call_id: Some(tool_call_id.into()),
            function: Some(function.into()),
            error: error.map(Box::new),
        }))
    }

    /// The unique id.
    pub fn id(&self) -> &str {
        match self {
            ChatMessage::System(m) => &m.id,
            ChatMessage::User(m) => &m.id,
            ChatMessage::Assistant(m) => &m.id,
            ChatMessage::Tool(m) => &m.id,
        }
    }

    /// The content.
    pub fn content(&self) -> &MessageContent {
        match self {
            ChatMessage::System(m) => &m.content,
            ChatMessage::User(m) => &m.content,
            ChatMessage::Assistant(m) => &m.content,
            ChatMessage::Tool(m) => &m.content,
        }
    }

    /// The content, mutably.
    pub fn content_mut(&mut self) -> &mut MessageContent {
        match self {
            ChatMessage::System(m) => &mut m.content,
            ChatMessage::User(m) => &mut m.content,
            ChatMessage::Assistant(m) => &mut m.content,
            ChatMessage::Tool(m) => &mut m.content,
        }
    }

    /// Where the message came from.
    pub fn source(&self) -> Option<MessageSource> {
        match self {
            ChatMessage::System(m) => m.source,
            ChatMessage::User(m) => m.source,
            ChatMessage::Assistant(m) => m.source,
            ChatMessage::Tool(m) => m.source,
        }
    }

    /// Sets where the message came from.
    pub fn set_source(&mut self, source: Option<MessageSource>) {
        match self {
            ChatMessage::System(m) => m.source = source,
            ChatMessage::User(m) => m.source = source,
            ChatMessage::Assistant(m) => m.source = source,
            ChatMessage::Tool(m) => m.source = source,
        }
    }

    /// The metadata.
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        match self {
            ChatMessage::System(m) => m.metadata.as_deref(),
            ChatMessage::User(m) => m.metadata.as_deref(),
            ChatMessage::Assistant(m) => m.metadata.as_deref(),
            ChatMessage::Tool(m) => m.metadata.as_deref(),
        }
    }

    /// The metadata, mutably (created empty when absent).
    pub fn metadata_mut(&mut self) -> &mut Map<String, Value> {
        let slot = match self {
            ChatMessage::System(m) => &mut m.metadata,
            ChatMessage::User(m) => &mut m.metadata,
            ChatMessage::Assistant(m) => &mut m.metadata,
            ChatMessage::Tool(m) => &mut m.metadata,
        };
        slot.get_or_insert_with(Box::default)
    }

    /// Sets a new unique id (for a modified copy of a message).
    pub fn renew_id(&mut self) {
        let id = new_id();
        match self {
            ChatMessage::System(m) => m.id = id,
            ChatMessage::User(m) => m.id = id,
            ChatMessage::Assistant(m) => m.id = id,
            ChatMessage::Tool(m) => m.id = id,
        }
    }

    /// The text of the content (text items concatenated).
    pub fn text(&self) -> String {
        self.content().text()
    }

    /// The role name: `system`, `user`, `assistant` or `tool`.
    pub fn role(&self) -> &'static str {
        match self {
            ChatMessage::System(_) => "system",
            ChatMessage::User(_) => "user",
            ChatMessage::Assistant(_) => "assistant",
            ChatMessage::Tool(_) => "tool",
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&ChatMessageAssistant> {
        match self {
            ChatMessage::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The tool message, if this is one.
    pub fn as_tool(&self) -> Option<&ChatMessageTool> {
        match self {
            ChatMessage::Tool(m) => Some(m),
            _ => None,
        }
    }
}

macro_rules! from_variant {
    ($($variant:ident($message:ty)),*) => {$(
        impl From<$message> for ChatMessage {
            fn from(m: $message) -> Self {
                ChatMessage::$variant(Box::new(m))
            }
        }
    )*};
}
from_variant!(
    System(ChatMessageSystem),
    User(ChatMessageUser),
    Assistant(ChatMessageAssistant),
    Tool(ChatMessageTool)
);

#[cfg(test)]
mod tests {
    use super::{ALPHABET, id_from_bits, new_id};
    use std::collections::HashSet;

    #[test]
    fn ids_read_their_digits_off_the_bits_in_order() {
        assert_eq!(id_from_bits([0; 3]), "2222222222222222222222");
        // 2^63 is one half: each pair is half the base, 1624 = 28 × 57 + 28, and, the base
        // being odd, a half is left for the next; the second and third words give "2"s.
        let c = char::from(ALPHABET[28]);
        let halves = c.to_string().repeat(10);
        assert_eq!(
            id_from_bits([1 << 63, 0, 0]),
            format!("{halves}{}", "2".repeat(12))
        );
        // All ones is just below one: the first pair is the last, "zz".
        assert!(id_from_bits([u64::MAX; 3]).starts_with("zz"));
        // The third word gives only the last pair.
        assert_eq!(
            id_from_bits([0, 0, 1 << 63]),
            format!("{}{c}{c}", "2".repeat(20))
        );
    }

    #[test]
    fn ids_are_unique_and_spread_over_the_alphabet() {
        let ids: Vec<_> = (0..57 * 400).map(|_| new_id()).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
        // Every position takes every letter about equally often (400 expected each; a
        // generator stuck on some letters fails by far).
        for position in [0, 9, 10, 21] {
            let mut counts = [0u32; 57];
            for id in &ids {
                let letter = id.as_bytes()[position];
                let index = ALPHABET.iter().position(|&b| b == letter).unwrap();
                counts[index] += 1;
            }
            let (low, high) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            assert!(*low > 250 && *high < 550, "position {position}: {counts:?}");
        }
    }
}
