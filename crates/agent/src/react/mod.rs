//! The react agent (§9): generate, land the calls, read the results, repeat until an answer is
//! submitted.
//!
//! - `config`: the settings ([`AgentPrompt`], [`AgentAttempts`], [`AgentSubmit`],
//!   [`OnContinue`], [`ContextOverflow`], [`ReactModel`]);
//! - `builder`: [`react`] and [`ReactBuilder`];
//! - `submit`: the submit tool and its removal from the final conversation;
//! - `agent`: [`ReactAgent`]; `steps`: its loop; `turn`: one turn's generation.

mod agent;
mod builder;
mod config;
mod steps;
mod submit;
mod turn;

pub use agent::ReactAgent;
pub use builder::{DEFAULT_MALFORMED_CALL_RETRIES, ReactBuilder, react};
pub use config::{
    AgentAttempts, AgentPrompt, AgentSubmit, AttemptScorer, ContextOverflow, ContinueDecision,
    IncorrectMessage, IncorrectMessageFn, ModelAgent, OnContinue, OnContinueFn, ReactModel,
    ReactToolChoice, ScoreValueFn, ToolChoiceFn,
};
pub use submit::{remove_submit_tool, submit_output};
