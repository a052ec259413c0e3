//! # actuator-model
//!
//! The conversation vocabulary shared by every layer of Actuator:
//!
//! - [`ChatMessage`] (system, user, assistant, tool), each with a unique id, content and source;
//! - [`ToolCall`], [`parse_tool_call`] (the reference's recovery rules for raw provider
//!   arguments) and [`format_function_call`] (`name(k='v', n=3)`, shared by approval, views
//!   and message filters);
//! - [`ModelOutput`], [`StopReason`], [`ModelUsage`], [`GenerateConfig`];
//! - the object-safe [`Model`] trait, [`resolve_tool_choice`], and the test models
//!   [`ScriptedModel`] and [`FunctionModel`], the embedded default of the examples.

mod message;
pub use message::{
    ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser,
    MessageContent, MessageSource, ToolCallError, new_id,
};

mod tool_call;
pub use tool_call::{
    DEFAULT_CALL_WIDTH, MAX_SHOWN_ARGUMENT_BYTES, ToolCall, ToolCallKind, format_function_call,
    parse_tool_call,
};

mod output;
pub use output::{ChatCompletionChoice, ModelOutput, ModelUsage, StopReason};

mod config;
pub use config::GenerateConfig;

mod model;
pub use model::{
    BoxFuture, FunctionModel, Model, ModelError, ScriptedModel, estimate_tokens, generate,
    resolve_tool_choice,
};
