//! # actuator-agent
//!
//! The loop users run every day: generate, land the calls, read the results, repeat until an
//! answer is submitted.
//!
//! ```
//! use actuator_agent::limits::turn_limit;
//! use actuator_agent::{react, run};
//! use actuator_model::{ModelOutput, ScriptedModel};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // A scripted model stands in for a real one: it submits "Paris".
//! let model = ScriptedModel::new([ModelOutput::for_tool_call(
//!     "scripted",
//!     "submit",
//!     serde_json::json!({"answer": "Paris"}),
//! )]);
//! let agent = react().model(model).build().unwrap();
//! let done = run(&agent, "What is the capital of France?", [turn_limit(5)]).await.unwrap();
//! assert_eq!(done.state.output().completion(), "Paris");
//! # });
//! ```
//!
//! At the root, what every agent touches:
//!
//! - [`Agent`] (object-safe), [`AgentState`] (output derived on read, D10), [`agent_fn`],
//!   [`agent_with`]; [`AgentError`] keeps the state reached when a run fails.
//! - [`run`] with [`RunOptions`] (limits, an event sink, run resources); inside an agent,
//!   [`RunContext::run`] nests a run in the current one.
//! - [`RunContext`]: the one place where a model is called ([`RunContext::generate`]) and tools
//!   run ([`RunContext::execute_tools`]), with events, spans, limits and usage, for react and
//!   for any agent a user writes; [`GenerateLoop`] is the loop without react's prompts.
//! - [`MessageList`]: the conversation, which cannot outgrow its message limit.
//!
//! In modules, what configures one part:
//!
//! - [`react`](mod@react): the react agent with every parameter of the reference ([`react()`]
//!   starts it);
//! - [`limits`]: message, token, turn, time, working and cost limits, nested by scope (a scope's
//!   own limits are caught by it, outer ones propagate, D9);
//! - [`filter`]: message filters for handoff and overflow; [`compaction`]: compaction
//!   strategies; [`prompts`]: the reference's default prompts, byte for byte.
//!
//! Tools that change between turns (an MCP server's) are a
//! [`ToolSource`](actuator_tool_core::source::ToolSource), in `actuator-tool-core`.
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

pub mod limits;

mod context;
pub use context::{
    MissingRunContext, RunContext, RunElicitation, SamplingModel, SpanGuard, StructuredRunError,
};

mod generate;
pub use generate::{GenerateLoop, ToolCalls};

mod run;
pub use run::{AgentInput, AgentRun, RunOptions, run};

mod end;
pub use end::RunEnd;

pub mod channel;
pub use channel::AgentChannel;

pub mod checkpoint;

pub mod filter;

pub mod compaction;

pub mod prompts;

pub mod react;
pub use react::react;

#[doc(hidden)]
pub mod __private;
