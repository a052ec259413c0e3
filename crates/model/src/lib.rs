//! # actuator-model
//!
//! The conversation vocabulary shared by every layer of Actuator:
//!
//! - [`ChatMessage`] (system, user, assistant, tool), each with a unique id, content and source;
//! - [`ToolCall`] and [`format_function_call`] (`name(k='v', n=3)`, shared by approval, views
//!   and message filters); a provider's raw argument text becomes a `ToolCall` through
//!   `actuator_dialect::parse_tool_call`;
//! - [`ModelOutput`], [`StopReason`], [`ModelUsage`], [`GenerateConfig`];
//! - the object-safe [`Model`] trait and the one value a call to it takes, [`GenerateRequest`]
//!   (input, tools, tool choice, config, and the [`GenerateObserver`] that hears of a
//!   provider's retries and the time it waits between them);
//! - [`concurrency`]: how many requests go to one model endpoint at once, adaptive (the
//!   reference's `adaptive_connections`) or fixed, shared by every user of the endpoint;
//! - [`generate`] and [`resolve_tool_choice`], and the test models [`ScriptedModel`] and
//!   [`FunctionModel`], the embedded default of the examples.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The string type of ids and names: up to 24 bytes kept inline, so a message's id, a call's
/// id and function, and the model's name cost no allocation.
pub use compact_str::CompactString;

mod message;
pub use message::{
    ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser,
    MessageContent, MessageSource, ToolCallError, new_id,
};

mod arguments;
pub use arguments::{ToolArguments, ToolArgumentsError};
mod tool_call;
pub use tool_call::{DEFAULT_CALL_WIDTH, ToolCall, ToolCallKind, format_function_call};

mod output;
pub use output::{ChatCompletionChoice, ModelOutput, ModelUsage, StopReason};

mod config;
pub use config::GenerateConfig;

pub mod pricing;

mod response_schema;
pub use response_schema::ResponseSchema;
mod structured;
pub use structured::{Structured, StructuredOutputError, generate_structured};

mod observe;
pub use observe::{GenerateObserver, RetryReport, StreamDelta, ToolCallDelta};

mod request;
pub use request::GenerateRequest;

pub mod concurrency;
pub mod credentials;

#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;

mod error;
pub use error::{ApiError, ErrorCause, ModelError};

mod model;
pub use model::{BoxFuture, Model, estimate_tokens, generate, resolve_tool_choice, shared_model};

mod scripted;
pub use scripted::{FunctionModel, ScriptedModel};
