//! Conversation-taking tools: the hook that handoff (in the `multi` crate) is built on.
//!
//! Such a tool receives the conversation up to the call and returns its result text, extra
//! messages to append after its tool message, and optionally a [`ModelOutput`] that becomes
//! the run's output. The executor knows nothing of agents.

use std::sync::Arc;

use actuator_model::{BoxFuture, ChatMessage, MessageContent, ModelOutput, ToolCall};
use actuator_tool_core::{Extensions, ToolArgs, ToolDef, ToolFailure};

/// What a conversation-taking tool returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationToolOutput {
    /// The tool message's content.
    pub content: MessageContent,
    /// Messages appended after the tool message, in order.
    pub messages: Vec<ChatMessage>,
    /// An output that replaces the run's output.
    pub output: Option<ModelOutput>,
}

/// A tool that receives the conversation.
pub trait ConversationTool: Send + Sync + 'static {
    /// Runs the call. `conversation` is the message list `execute_tools` was given; `args` are
    /// the validated (and approved) arguments; `extensions` are the run's
    /// ([`ExecuteOptions::extensions`](crate::ExecuteOptions)).
    fn call<'a>(
        &'a self,
        conversation: &'a [ChatMessage],
        call: &'a ToolCall,
        args: ToolArgs,
        extensions: &'a Extensions,
    ) -> BoxFuture<'a, Result<ConversationToolOutput, ToolFailure>>;
}

/// The extension that marks a [`ToolDef`] as conversation-taking.
#[derive(Clone)]
pub struct ConversationHandler(pub Arc<dyn ConversationTool>);

impl std::fmt::Debug for ConversationHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConversationHandler")
    }
}

/// Makes `def` a conversation-taking tool: [`execute_tools`](crate::execute_tools) runs `tool`
/// (with the conversation) instead of the def's own handler. Schema, validation, approval,
/// timeout and events are the def's as usual.
pub fn with_conversation(def: &ToolDef, tool: impl ConversationTool) -> ToolDef {
    def.with_extension(ConversationHandler(Arc::new(tool)))
}
