//! Conversation-taking tools: the hook that handoff (in the `multi` crate) is built on.
//!
//! Such a tool receives the conversation up to the call and returns its result text, extra
//! messages to append after its tool message, and optionally a [`ModelOutput`] that becomes
//! the run's output. The executor knows nothing of agents.

use std::sync::Arc;

use actuator_model::{BoxFuture, ChatMessage, MessageContent, ModelOutput, ToolCall};
#[cfg(doc)]
use actuator_tool_core::ToolKind;
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

/// The handler of a conversation-taking [`ToolDef`] ([`ToolKind::ConversationTaking`]), as
/// [`execute_tools`](crate::execute_tools) runs it.
///
/// ```
/// use actuator_exec::{ConversationHandler, ConversationTool, ConversationToolOutput};
/// use actuator_model::{BoxFuture, ChatMessage, ToolCall};
/// use actuator_tool_core::{Extensions, ToolArgs, ToolDef, ToolFailure, ToolKind};
///
/// struct Count;
/// impl ConversationTool for Count {
///     fn call<'a>(&'a self, conversation: &'a [ChatMessage], _call: &'a ToolCall, _args: ToolArgs,
///                 _extensions: &'a Extensions) -> BoxFuture<'a, Result<ConversationToolOutput, ToolFailure>> {
///         let n = conversation.len();
///         Box::pin(async move { Ok(ConversationToolOutput { content: n.to_string().into(), ..Default::default() }) })
///     }
/// }
/// let tool = ToolDef::builder("count_messages")
///     .description("Counts the messages so far.")
///     .conversation_handler(ConversationHandler::new(Count))
///     .build()
///     .unwrap();
/// assert_eq!(tool.kind(), ToolKind::ConversationTaking);
/// ```
#[derive(Clone)]
pub struct ConversationHandler(pub Arc<dyn ConversationTool>);

impl ConversationHandler {
    /// The handler running `tool`.
    pub fn new(tool: impl ConversationTool) -> Self {
        ConversationHandler(Arc::new(tool))
    }
}

impl std::fmt::Debug for ConversationHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConversationHandler")
    }
}

/// A copy of `def` that is conversation-taking: [`execute_tools`](crate::execute_tools) runs
/// `tool` (with the conversation) instead of the def's own handler. Schema, validation,
/// approval, timeout and events are the def's as usual.
pub fn with_conversation(def: &ToolDef, tool: impl ConversationTool) -> ToolDef {
    def.with_conversation_handler(ConversationHandler::new(tool))
}
