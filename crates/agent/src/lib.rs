//! # actuator-agent
//!
//! The loop users run every day: generate, land the calls, read the results, repeat until an
//! answer is submitted.
//!
//! - [`Agent`] (object-safe), [`AgentState`] (output derived on read, D10), [`agent_fn`],
//!   [`agent_with`].
//! - [`run`] (and [`run_with`], with an event sink and run resources) with nested [`Limit`]s
//!   (message, token, turn, time, working, cost) enforced by a [`RunContext`]: a scope's own
//!   limits are caught by it, outer ones propagate (D9).
//! - [`RunContext::generate`] and [`RunContext::execute_tools`]: the one place where a model is
//!   called and tools run, with events, spans, time limits and usage, for react and for any
//!   agent a user writes.
//! - [`ToolSource`] and [`ToolSet`]: tools that can change between turns (an MCP server's),
//!   resolved once per turn with the fixed tools ([`RunContext::resolve_tools`]).
//! - [`react`]: the react agent with every parameter of the reference.
//! - Message filters ([`content_only`], [`remove_tools`], [`last_message`], [`trim_messages`])
//!   and [`compaction`] strategies.
#![cfg_attr(docsrs, feature(doc_cfg))]
// `AgentError` carries the partial state so that nothing done before an error is lost; it is
// returned only when a run ends, so its size costs nothing on the hot path.
#![allow(clippy::result_large_err)]

mod agent;
pub use agent::{Agent, AgentWith, FnAgent, agent_fn, agent_with};

mod error;
pub use error::{AgentError, AgentErrorKind};

mod budget;

mod state;
pub use state::AgentState;

mod messages;
pub use messages::MessageList;

mod limits;
pub use limits::{
    Limit, LimitExceeded, LimitKind, LimitUsage, cost_limit, message_limit, time_limit,
    token_limit, turn_limit, working_limit,
};

mod context;
pub use context::{MissingRunContext, RunContext, SpanGuard};

pub use actuator_tool_core::source::{ToolSet, ToolSetError, ToolSource, ToolSourceError};

mod generate;
pub use generate::{GenerateLoop, ToolCalls};

mod run;
pub use run::{AgentInput, AgentRun, RunOptions, run};

mod filter;
pub use filter::{
    MessageFilter, PartitionedMessages, content_only, is_summary_message, last_message,
    partition_messages, remove_tools, trim_messages,
};

pub mod compaction;

mod prompts;
pub use prompts::{
    DEFAULT_ASSISTANT_PROMPT, DEFAULT_CONTINUE_PROMPT, DEFAULT_CONTINUE_PROMPT_NO_SUBMIT,
    DEFAULT_HANDOFF_PROMPT, DEFAULT_INCORRECT_MESSAGE, DEFAULT_SUBMIT_DESCRIPTION,
    DEFAULT_SUBMIT_PROMPT, PARALLEL_TOOLS_PROMPT,
};

mod react;
pub use react::{
    AgentAttempts, AgentPrompt, AgentSubmit, AttemptScorer, ContextOverflow, ContinueDecision,
    IncorrectMessage, IncorrectMessageFn, ModelAgent, OnContinue, OnContinueFn, ReactAgent,
    ReactBuilder, ReactModel, ReactToolChoice, ScoreValueFn, ToolChoiceFn, react,
    remove_submit_tool, submit_output,
};

#[doc(hidden)]
pub mod __private;
