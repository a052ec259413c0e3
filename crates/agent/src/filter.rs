//! Message filters (§10): functions from a message list to a message list, used by handoff and
//! by react's overflow handling.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use actuator_model::{
    BoxFuture, ChatMessage, ChatMessageUser, CompactString, MessageContent, MessageSource, ToolCall,
};
use actuator_tool_core::Content;

/// A message filter: `async (Vec<ChatMessage>) -> Vec<ChatMessage>`.
#[derive(Clone)]
pub struct MessageFilter(
    Arc<dyn Fn(Vec<ChatMessage>) -> BoxFuture<'static, Vec<ChatMessage>> + Send + Sync>,
);

impl std::fmt::Debug for MessageFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MessageFilter")
    }
}

impl MessageFilter {
    /// A filter from an async function.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(Vec<ChatMessage>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<ChatMessage>> + Send + 'static,
    {
        MessageFilter(Arc::new(move |m| Box::pin(f(m))))
    }

    /// A filter from a plain function.
    pub fn sync(f: impl Fn(Vec<ChatMessage>) -> Vec<ChatMessage> + Send + Sync + 'static) -> Self {
        MessageFilter(Arc::new(move |m| {
            let out = f(m);
            Box::pin(std::future::ready(out))
        }))
    }

    /// Applies the filter.
    pub async fn apply(&self, messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
        (self.0)(messages).await
    }

    /// [`content_only`] as a filter.
    pub fn content_only() -> Self {
        Self::sync(content_only)
    }

    /// [`remove_tools`] as a filter.
    pub fn remove_tools() -> Self {
        Self::sync(remove_tools)
    }

    /// [`last_message`] as a filter.
    pub fn last_message() -> Self {
        Self::sync(last_message)
    }

    /// [`trim_messages`] with the default 0.7 as a filter.
    pub fn trim() -> Self {
        Self::sync(|m| trim_messages(m, 0.7))
    }
}

/// Keeps only content: system messages are dropped; user messages pass unchanged; tool results
/// become user messages (same id); assistant messages keep their text and media, drop
/// reasoning, and render their tool calls as one text item (`f1(a=1)\nf2()`), without calls.
///
/// ```
/// use actuator_agent::filter::content_only;
/// use actuator_model::{ChatMessage, ModelOutput};
/// let call = ModelOutput::for_tool_call("m", "add", serde_json::json!({"x": 1})).choices[0].message.clone();
/// let out = content_only(vec![ChatMessage::system("sys"), ChatMessage::from(call)]);
/// assert_eq!(out.len(), 1);
/// assert_eq!(out[0].text(), "add(x=1)");
/// ```
pub fn content_only(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::System(_) => None,
            ChatMessage::User(u) => Some(ChatMessage::User(u)),
            ChatMessage::Tool(t) => Some(ChatMessage::User(Box::new(ChatMessageUser {
                id: t.id,
                content: t.content,
                source: t.source,
                metadata: t.metadata,
            }))),
            ChatMessage::Assistant(mut a) => {
                let mut parts: Vec<Content> = match std::mem::take(&mut a.content) {
                    MessageContent::Text(t) => vec![Content::text(t)],
                    MessageContent::Parts(p) => {
                        p.into_iter().filter(|c| !c.is_reasoning()).collect()
                    }
                };
                let calls: Vec<String> = a.calls().iter().map(ToolCall::render).collect();
                if !calls.is_empty() {
                    parts.push(Content::text(calls.join("\n")));
                }
                // Provider-private data goes, and a tool the provider ran becomes text.
                let parts = parts
                    .into_iter()
                    .map(|c| match c {
                        Content::ToolUse(t) => {
                            Content::text(format!("{} {}\n\n{}", t.name, t.arguments, t.result))
                        }
                        other => other.without_internal(),
                    })
                    .collect();
                a.content = MessageContent::Parts(parts);
                a.tool_calls = None;
                Some(ChatMessage::Assistant(a))
            }
        })
        .collect()
}

/// Drops every tool message and every assistant message's tool calls.
pub fn remove_tools(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(_) => None,
            ChatMessage::Assistant(mut a) => {
                a.tool_calls = None;
                Some(ChatMessage::Assistant(a))
            }
            other => Some(other),
        })
        .collect()
}

/// Keeps only the last message.
pub fn last_message(mut messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let n = messages.len();
    messages.drain(..n.saturating_sub(1));
    messages
}

/// Whether a message is a compaction summary (it carries a `summary` metadata key).
pub fn is_summary_message(m: &ChatMessage) -> bool {
    m.metadata().is_some_and(|md| md.contains_key("summary"))
}

/// Messages split into system messages, the task's input, and the conversation after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionedMessages {
    /// System messages.
    pub system: Vec<ChatMessage>,
    /// Input messages (`source = input`; without any, everything up to the first user message).
    pub input: Vec<ChatMessage>,
    /// The rest.
    pub conversation: Vec<ChatMessage>,
}

/// Splits messages into system, input and conversation.
pub fn partition_messages(messages: Vec<ChatMessage>) -> PartitionedMessages {
    let mut p = PartitionedMessages::default();
    for m in messages {
        if matches!(m, ChatMessage::System(_)) {
            p.system.push(m);
        } else if is_summary_message(&m) {
            p.conversation.push(m);
        } else if m.source() == Some(MessageSource::Input) {
            p.input.push(m);
        } else {
            p.conversation.push(m);
        }
    }
    if p.input.is_empty() {
        let mut taken = 0;
        for m in &p.conversation {
            if is_summary_message(m) {
                break;
            }
            taken += 1;
            if matches!(m, ChatMessage::User(_)) {
                break;
            }
        }
        p.input = p.conversation.drain(..taken).collect();
    }
    p
}

/// Trims a conversation to fit a context window: keeps all system and input messages and the
/// newest `preserve` share of the rest, never orphaning a tool result from its call (or a call
/// from its result), and never ending on an assistant message.
pub fn trim_messages(messages: Vec<ChatMessage>, preserve: f64) -> Vec<ChatMessage> {
    let preserve = preserve.clamp(0.0, 1.0);
    let p = partition_messages(messages);
    let start = (p.conversation.len() as f64 * (1.0 - preserve)) as usize;
    let mut kept: Vec<ChatMessage> = Vec::new();
    let mut active: HashSet<CompactString> = HashSet::new();
    for m in p.conversation.into_iter().skip(start) {
        match &m {
            ChatMessage::Assistant(a) => {
                active = a.calls().iter().map(|c| c.id.clone()).collect();
                kept.push(m);
            }
            ChatMessage::Tool(t) => {
                if t.tool_call_id
                    .as_deref()
                    .is_some_and(|id| active.contains(id))
                {
                    kept.push(m);
                }
            }
            ChatMessage::User(_) => {
                active.clear();
                kept.push(m);
            }
            ChatMessage::System(_) => {}
        }
    }
    let answered: HashSet<CompactString> = kept
        .iter()
        .filter_map(|m| m.as_tool().and_then(|t| t.tool_call_id.clone()))
        .collect();
    for m in &mut kept {
        if let ChatMessage::Assistant(a) = m
            && let Some(calls) = &a.tool_calls
            && calls.iter().any(|c| !answered.contains(c.id.as_str()))
        {
            let valid: Vec<_> = calls
                .iter()
                .filter(|c| answered.contains(c.id.as_str()))
                .cloned()
                .collect();
            a.tool_calls = if valid.is_empty() { None } else { Some(valid) };
            m.renew_id();
        }
    }
    if matches!(kept.last(), Some(ChatMessage::Assistant(_))) {
        kept.pop();
    }
    let mut out = p.system;
    out.extend(p.input);
    out.extend(kept);
    out
}
