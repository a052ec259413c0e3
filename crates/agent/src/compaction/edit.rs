//! [`CompactionEdit`]: clears older tool results and reasoning, keeping the conversation's
//! shape.

use std::collections::HashSet;
use std::sync::Arc;

use actuator_model::{
    BoxFuture, ChatMessage, ChatMessageAssistant, CompactString, MessageContent, Model,
};
use actuator_tool_core::{Content, ToolInfo};
use serde_json::Value;

use super::{Compacted, CompactionStrategy, CompactionThreshold};
use crate::context::RunContext;
use crate::error::AgentError;
use crate::filter::partition_messages;

/// What a cleared tool result says instead of its content.
pub const TOOL_RESULT_REMOVED: &str = "(Tool result removed)";

/// A tool whose result carries tool definitions (context), never a result safe to clear.
const TOOL_SEARCH_NAME: &str = "tool_search";

/// The memory tool's name.
pub(crate) const MEMORY_TOOL: &str = "memory";

/// Memory tool arguments holding saved content (cleared once compaction runs).
const MEMORY_CONTENT_ARGS: [&str; 3] = ["file_text", "insert_text", "new_str"];

/// What a cleared memory argument says instead of the content.
const MEMORY_CONTENT_SAVED: &str = "(content saved to memory)";

/// Message-editing compaction (name `edit`): clears the results of older tool calls and the
/// reasoning of older assistant turns, keeping every message in place.
///
/// - The last `keep_tool_uses` tool uses (call and result) stay intact (default 3); older
///   results are replaced by [`TOOL_RESULT_REMOVED`], their calls kept. With
///   [`keep_tool_inputs(false)`](CompactionEdit::keep_tool_inputs), the call and its result
///   are removed instead and the call is noted in the assistant's text. Either way a call and
///   its result are never separated.
/// - Reasoning items are removed from all but the last `keep_thinking_turns` assistant
///   messages (default 1).
/// - Tools named in [`exclude_tools`](CompactionEdit::exclude_tools) (and `tool_search`,
///   whose result defines tools) are never cleared, nor counted against the budget.
/// - With `memory` (default on), the content arguments of `memory` tool calls
///   (`file_text`, `insert_text`, `new_str`) become `(content saved to memory)`.
/// - System and input messages are never edited; a trailing assistant message is dropped, since
///   providers expect the input to end with a user or tool message.
///
/// ```
/// use actuator_agent::compaction::{CompactionEdit, TOOL_RESULT_REMOVED};
/// use actuator_model::{ChatMessage, ModelOutput, ToolCall};
///
/// let mut messages = vec![ChatMessage::user("Count the files.")];
/// for i in 0..3 {
///     let call = ToolCall::new(format!("c{i}"), "ls", serde_json::json!({}));
///     let turn = ModelOutput::for_tool_calls("m", "", vec![call]);
///     messages.push(ChatMessage::from(turn.choices[0].message.clone()));
///     messages.push(ChatMessage::tool(format!("listing {i}"), format!("c{i}"), "ls", None));
/// }
/// let edited = CompactionEdit::new().keep_tool_uses(1).edit(&messages);
/// assert_eq!(edited.len(), messages.len());
/// assert_eq!(edited[2].text(), TOOL_RESULT_REMOVED);
/// assert_eq!(edited[4].text(), TOOL_RESULT_REMOVED);
/// assert_eq!(edited[6].text(), "listing 2");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionEdit {
    threshold: CompactionThreshold,
    keep_thinking_turns: Option<usize>,
    keep_tool_uses: usize,
    keep_tool_inputs: bool,
    exclude_tools: Vec<String>,
    memory: bool,
}

impl Default for CompactionEdit {
    fn default() -> Self {
        CompactionEdit {
            threshold: CompactionThreshold::default(),
            keep_thinking_turns: Some(1),
            keep_tool_uses: 3,
            keep_tool_inputs: true,
            exclude_tools: Vec::new(),
            memory: true,
        }
    }
}

impl CompactionEdit {
    /// Editing compaction with the defaults: at 90% of the context window, keep the last 3
    /// tool uses and the reasoning of the last assistant turn.
    pub fn new() -> Self {
        Self::default()
    }

    /// When compaction starts (default: 90% of the context window).
    #[must_use]
    pub fn with_threshold(mut self, threshold: CompactionThreshold) -> Self {
        self.threshold = threshold;
        self
    }

    /// How many of the most recent tool uses (call and result) stay intact (default 3). With
    /// `0`, every result is cleared.
    #[must_use]
    pub fn keep_tool_uses(mut self, n: usize) -> Self {
        self.keep_tool_uses = n;
        self
    }

    /// How many of the most recent assistant turns keep their reasoning (default 1).
    #[must_use]
    pub fn keep_thinking_turns(mut self, n: usize) -> Self {
        self.keep_thinking_turns = Some(n);
        self
    }

    /// Keeps the reasoning of every assistant turn.
    #[must_use]
    pub fn keep_all_thinking(mut self) -> Self {
        self.keep_thinking_turns = None;
        self
    }

    /// Whether the calls of cleared tool uses stay (default `true`: only the result is
    /// replaced). With `false`, the call and its result are both removed, and the assistant
    /// message notes `[Tool call: NAME (parameters and results removed from history)]`.
    #[must_use]
    pub fn keep_tool_inputs(mut self, keep: bool) -> Self {
        self.keep_tool_inputs = keep;
        self
    }

    /// Tools whose uses are never cleared (added to any named before).
    #[must_use]
    pub fn exclude_tools(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.exclude_tools.extend(tools.into_iter().map(Into::into));
        self
    }

    /// Whether to clear the content arguments of `memory` tool calls (default `true`).
    #[must_use]
    pub fn memory(mut self, memory: bool) -> Self {
        self.memory = memory;
        self
    }

    /// Edits `messages` (what [`CompactionStrategy::compact`] returns as the input).
    pub fn edit(&self, messages: &[ChatMessage]) -> Vec<ChatMessage> {
        let p = partition_messages(messages.to_vec());
        let mut conversation = p.conversation;

        // Reasoning: keep it in the last `keep_thinking_turns` assistant turns only.
        if let Some(keep) = self.keep_thinking_turns {
            let mut turns = 0usize;
            for m in conversation.iter_mut().rev() {
                if let ChatMessage::Assistant(a) = m {
                    turns += 1;
                    if turns > keep {
                        clear_reasoning(a);
                    }
                }
            }
        }

        // Tool uses, oldest first: (assistant index, call id, function, result index).
        let mut uses: Vec<(usize, CompactString, CompactString, usize)> = Vec::new();
        for (i, m) in conversation.iter().enumerate() {
            let Some(a) = m.as_assistant() else { continue };
            for call in a.calls() {
                if call.function == TOOL_SEARCH_NAME
                    || self.exclude_tools.iter().any(|t| *t == call.function)
                {
                    continue;
                }
                if let Some(j) = find_tool_message(&conversation, &call.id, i) {
                    uses.push((i, call.id.clone(), call.function.clone(), j));
                }
            }
        }
        let clear = uses.len().saturating_sub(self.keep_tool_uses);
        let mut removed: HashSet<usize> = HashSet::new();
        for (assistant, call_id, function, result) in uses.into_iter().take(clear) {
            if self.keep_tool_inputs {
                if let ChatMessage::Tool(t) = &mut conversation[result]
                    && t.content != MessageContent::Text(TOOL_RESULT_REMOVED.into())
                {
                    t.content = MessageContent::Text(TOOL_RESULT_REMOVED.into());
                    t.id = actuator_model::new_id();
                }
            } else {
                removed.insert(result);
                if let ChatMessage::Assistant(a) = &mut conversation[assistant] {
                    replace_call_with_text(a, &call_id, &function);
                }
            }
        }
        if !removed.is_empty() {
            conversation = conversation
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !removed.contains(i))
                .map(|(_, m)| m)
                .collect();
        }

        if self.memory {
            clear_memory_content(&mut conversation);
        }

        // Providers expect the input to end with a user or tool message.
        while matches!(conversation.last(), Some(ChatMessage::Assistant(_))) {
            conversation.pop();
        }

        let mut out = p.system;
        out.extend(p.input);
        out.extend(conversation);
        out
    }
}

impl CompactionStrategy for CompactionEdit {
    fn name(&self) -> &str {
        "edit"
    }

    fn threshold(&self) -> CompactionThreshold {
        self.threshold
    }

    fn compact<'a>(
        &'a self,
        _model: &'a dyn Model,
        messages: &'a [ChatMessage],
        _tools: &'a [Arc<ToolInfo>],
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<Compacted, AgentError>> {
        let input = self.edit(messages);
        Box::pin(std::future::ready(Ok(Compacted {
            input,
            message: None,
        })))
    }
}

/// Removes the reasoning items of an assistant message (renewing its id when any went).
fn clear_reasoning(a: &mut ChatMessageAssistant) {
    let MessageContent::Parts(parts) = &mut a.content else {
        return;
    };
    if !parts.iter().any(Content::is_reasoning) {
        return;
    }
    parts.retain(|c| !c.is_reasoning());
    if parts.is_empty() {
        a.content = MessageContent::default();
    }
    a.id = actuator_model::new_id();
}

/// The index of the tool message answering `call_id`, after `start`.
fn find_tool_message(messages: &[ChatMessage], call_id: &str, start: usize) -> Option<usize> {
    messages
        .iter()
        .enumerate()
        .skip(start + 1)
        .find(|(_, m)| {
            m.as_tool()
                .is_some_and(|t| t.tool_call_id.as_deref() == Some(call_id))
        })
        .map(|(i, _)| i)
}

/// Removes a call from an assistant message and notes it in the text.
fn replace_call_with_text(a: &mut ChatMessageAssistant, call_id: &str, function: &str) {
    if let Some(calls) = &mut a.tool_calls {
        calls.retain(|c| c.id != call_id);
        if calls.is_empty() {
            a.tool_calls = None;
        }
    }
    let placeholder = Content::text(format!(
        "[Tool call: {function} (parameters and results removed from history)]"
    ));
    a.content = match std::mem::take(&mut a.content) {
        MessageContent::Text(t) if t.is_empty() => MessageContent::Parts(vec![placeholder]),
        MessageContent::Text(t) => MessageContent::Parts(vec![Content::text(t), placeholder]),
        MessageContent::Parts(mut parts) => {
            parts.push(placeholder);
            MessageContent::Parts(parts)
        }
    };
    a.id = actuator_model::new_id();
}

/// Replaces the content arguments of `memory` tool calls with `(content saved to memory)`,
/// keeping the others (command, path, …) so the model knows what it saved where.
pub(crate) fn clear_memory_content(messages: &mut [ChatMessage]) {
    for m in messages {
        let ChatMessage::Assistant(a) = m else {
            continue;
        };
        let mut modified = false;
        for call in a.tool_calls.iter_mut().flatten() {
            if call.function != MEMORY_TOOL {
                continue;
            }
            let mut cleared = false;
            // Arguments that do not parse (nested past the parser's limit) stay as they are.
            let Ok(mut arguments) = call.arguments.to_map() else {
                continue;
            };
            for (key, value) in arguments.iter_mut() {
                if MEMORY_CONTENT_ARGS.contains(&key.as_str())
                    && value.as_str() != Some(MEMORY_CONTENT_SAVED)
                {
                    *value = Value::String(MEMORY_CONTENT_SAVED.to_owned());
                    cleared = true;
                }
            }
            if cleared {
                call.arguments = arguments.into();
                // A custom view may show the content too.
                call.view = None;
                modified = true;
            }
        }
        if modified {
            a.id = actuator_model::new_id();
        }
    }
}
