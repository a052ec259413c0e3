//! # actuator-tool-core
//!
//! The tool definition layer of Actuator: everything between a typed Rust function and a
//! validated, deserialized call.
//!
//! - [`ToolInfo`] / [`ToolParams`]: what a model reads about a tool.
//! - [`ToolDef`]: a tool ready to run — its info, its options (parallel, output limit,
//!   timeout, viewer) and its handler. Built by `#[tool]` or by hand with [`ToolDef::builder`].
//! - [`CanonicalArguments`]: how a tool resolves its arguments before acting on them (the
//!   reference's `set_tool_canonical_arguments`), which approval and review then see.
//! - [`ToolChoice`]: which tools the model may or must call.
//! - Results ([`Content`], [`ToolOutput`], [`IntoToolOutput`]) and errors ([`ToolError`],
//!   [`FatalToolError`], [`ToolFailure`], [`ToolDefError`]).
//! - Argument validation against the compiled JSON Schema ([`ArgumentValidator`]) and
//!   deserialization into typed parameters ([`ToolArgs`]).
//! - [`truncate_tool_output`]: the envelope a model sees when output is too long.
//! - [`source`]: tools that can change between turns ([`ToolSource`], an MCP server's tools
//!   for one) and the set an agent resolves each turn ([`ToolSet`]).
//!
//! Rendering a tool for a provider (MCP, OpenAI, Anthropic, Gemini) is the job of
//! `actuator-dialect`.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The `schemars` a tool's parameter types derive `JsonSchema` from (see [`serde`]).
pub use schemars;
/// The `serde` a tool's parameter types derive `Deserialize` from (what `#[tool_input]`
/// derives through, so a crate using `actuator` needs no `serde` dependency of its own).
pub use serde;

mod info;
pub use info::{MAX_TOOL_NAME_LEN, ToolInfo, ToolParams, validate_tool_name};

mod error;
// `From` impls only: `?` on any error in a tool body.
mod any_error;
pub use error::{
    FatalToolError, IoErrorExt, LimitValue, ToolDefError, ToolError, ToolErrorKind, ToolFailure,
    format_amount, format_limit, limit_exceeded_text,
};

mod error_chain;
pub use error_chain::ErrorChain;

mod choice;
pub use choice::ToolChoice;

mod content;
/// The string of a [`ToolOutput::Text`]: short texts are kept inline (re-exported from
/// `compact_str`; build one from a `&str` or `String` with `.into()`).
pub use compact_str::CompactString;
pub use content::{
    Content, IntoToolOutput, Json, Media, MediaSource, ServerToolKind, ServerToolUse, ToolOutput,
};

mod validate;
pub use validate::{ArgumentValidator, MAX_ARGUMENT_DEPTH, check_nesting_depth};

mod args;
pub use args::ToolArgs;
mod strict;

mod schema;
pub use schema::{ParamsBuilder, ToolParam, accepts_missing};

mod literal;
pub use literal::{python_literal, python_str};

mod view;
pub use view::{ContentFormat, ToolCallContent, ToolCallView, ToolCallViewer};

mod context;
pub use context::{Extensions, ToolContext};

mod progress;
pub use progress::{ProgressReport, ProgressSink, ToolProgress};

mod elicitation;
pub use elicitation::ElicitationHandler;
mod host;
pub use host::{
    CallHost, ElicitationAction, ElicitationRequest, ElicitationResult, HostError, HostFuture,
    LogEntry, LogLevel, SamplingMessage, SamplingRequest, SamplingResult, SamplingRole, ToolHost,
};

mod trace;
pub use trace::{MAX_TRACESTATE_LEN, TraceContext, TraceContextError};
mod requirement;
pub use requirement::{ResourceRequirement, ToolRequirement};

mod def;
pub use def::{
    BoxFuture, CanonicalArguments, Idempotent, ToolDef, ToolDefBuilder, ToolHandler, ToolKind,
};

pub mod source;
pub use source::{ToolSet, ToolSetError, ToolSource, ToolSourceError, check_tool_names};

mod truncate;
pub use truncate::{DEFAULT_MAX_TOOL_OUTPUT, Truncated, truncate_tool_output};

#[doc(hidden)]
pub mod __private;
