//! [`CompactionTrim`]: keeps the newest share of the conversation.

use std::sync::Arc;

use actuator_model::{BoxFuture, ChatMessage, Model};
use actuator_tool_core::ToolInfo;

use super::edit::clear_memory_content;
use super::{Compacted, CompactionStrategy, CompactionThreshold};
use crate::context::RunContext;
use crate::error::AgentError;
use crate::filter::{partition_messages, trim_messages};

/// Trimming compaction (name `trim`): keeps all system and input messages and the newest
/// `preserve` share of the rest (default 0.8), with the rules of [`trim_messages`]: a tool
/// result is never kept without its call nor a call without its result, and the input never
/// ends with an assistant message.
///
/// With `memory` (default on), the content arguments of kept `memory` tool calls
/// (`file_text`, `insert_text`, `new_str`) become `(content saved to memory)`.
///
/// ```
/// use actuator_agent::compaction::CompactionTrim;
/// use actuator_model::ChatMessage;
///
/// let mut messages = vec![ChatMessage::system("Be brief."), ChatMessage::user("Task.")];
/// for i in 0..5 {
///     messages.push(ChatMessage::assistant(format!("step {i}")));
///     messages.push(ChatMessage::user(format!("go on {i}")));
/// }
/// let trimmed = CompactionTrim::new().preserve(0.4).trim(&messages);
/// // System, input, and the newest 4 of the 10 conversation messages.
/// assert_eq!(trimmed.len(), 6);
/// assert_eq!(trimmed[1].text(), "Task.");
/// assert_eq!(trimmed[2].text(), "step 3");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionTrim {
    threshold: CompactionThreshold,
    preserve: f64,
    memory: bool,
}

impl Default for CompactionTrim {
    fn default() -> Self {
        CompactionTrim {
            threshold: CompactionThreshold::default(),
            preserve: 0.8,
            memory: true,
        }
    }
}

impl CompactionTrim {
    /// Trimming compaction with the defaults: at 90% of the context window, keep the newest
    /// 80% of the conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// When compaction starts (default: 90% of the context window).
    #[must_use]
    pub fn with_threshold(mut self, threshold: CompactionThreshold) -> Self {
        self.threshold = threshold;
        self
    }

    /// The share of the conversation (after system and input messages) to keep, from 0 to 1
    /// (default 0.8; values outside are clamped).
    #[must_use]
    pub fn preserve(mut self, preserve: f64) -> Self {
        self.preserve = preserve.clamp(0.0, 1.0);
        self
    }

    /// Whether to clear the content arguments of `memory` tool calls (default `true`).
    #[must_use]
    pub fn memory(mut self, memory: bool) -> Self {
        self.memory = memory;
        self
    }

    /// Trims `messages` (what [`CompactionStrategy::compact`] returns as the input).
    pub fn trim(&self, messages: &[ChatMessage]) -> Vec<ChatMessage> {
        let p = partition_messages(messages.to_vec());
        let prefix = p.system.len() + p.input.len();
        let mut out = trim_messages(messages.to_vec(), self.preserve);
        if self.memory
            && let Some(conversation) = out.get_mut(prefix..)
        {
            clear_memory_content(conversation);
        }
        out
    }
}

impl CompactionStrategy for CompactionTrim {
    fn name(&self) -> &str {
        "trim"
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
        let input = self.trim(messages);
        Box::pin(std::future::ready(Ok(Compacted {
            input,
            message: None,
        })))
    }
}
