//! # Actuator
//!
//! Give language models hands: turn plain Rust functions into tools a model can call, land
//! each call on the real function exactly and safely, and run agents that loop over model and
//! tools until they submit an answer, alone or handing work to each other.
//!
//! This facade re-exports the layers behind features:
//!
//! | module | crate | feature |
//! |---|---|---|
//! | [`tool_core`] | tool definitions, validation, results, errors, truncation | always |
//! | [`tool`], [`tool_input`] | the `#[tool]` attribute; `#[tool_input]` for a tool's struct or enum parameter | `macros` (default) |
//! | [`serde`], [`schemars`] | the versions a tool's parameter types derive from (what `#[tool_input]` uses) | always |
//! | [`macro@agent`] | the `#[agent]` attribute (`#[actuator::agent]`; the module of the same name is below) | `macros` and `agent` (default) |
//! | [`dialect`] | each provider's tool object with a report of what changed, `strip_strict_nulls`, `parse_tool_call` | `dialect` (default) |
//! | `model`, `events`, `exec` | messages, the `Model` trait, scripted models; run events and limit errors; the staged executor | `exec` |
//! | `agent` | `Agent`, `AgentState`, `run` with limits, `react`, filters, compaction | `agent` (default) |
//! | `multi` | `handoff`, `as_tool`, `as_solver` | `multi` (default) |
//! | `providers` | `get_model("openai/…")`, Anthropic, OpenAI-compatible servers; typed errors, retries | `providers` |
//! | `eval` | `Task`, datasets, scorers, `eval` with progress, logs `inspect view` reads | `eval` |
//! | `mcp` | MCP servers' tools for agents (`mcp_tools`, a `ToolSource`), and `ToolDef`s served over MCP (`ToolServer`, `serve_stdio`, `serve_http`) | `mcp` |
//! | `otel` | `OtelSink`: a run's agent, model and tool spans with OpenTelemetry's GenAI conventions, exported over OTLP/HTTP | `otel` |
//! | `sandbox`, `tools` | the `Sandbox` trait and `LocalSandbox` (bubblewrap); `bash`, `python`, `text_editor`, `bash_session`, `think` | `tools` (default) |
//!
//! ```
//! use actuator::prelude::*;
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `x` - First addend.
//! /// * `y` - Second addend.
//! #[tool]
//! async fn add(x: i64, y: i64) -> i64 {
//!     x + y
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let add = add_tool();
//! let args = serde_json::json!({"x": 2, "y": 3});
//! add.validate(&args).unwrap();
//! let out = add.call(args, ToolContext::new("call_1", "add")).await.unwrap();
//! assert_eq!(out.text(), "5");
//! # }
//! ```
//!
//! A struct (or enum) parameter takes `#[tool_input]`, which derives `Deserialize` and
//! `JsonSchema` through this crate's re-exports: no `serde` or `schemars` in your
//! `Cargo.toml`.
//!
//! ```
//! use actuator::prelude::*;
//!
//! /// Which results to keep.
//! #[tool_input]
//! struct Filter {
//!     /// Only results in this language.
//!     language: Option<String>,
//!     /// At most this many results.
//!     #[serde(default)]
//!     limit: u32,
//! }
//!
//! /// Search the documentation.
//! ///
//! /// # Arguments
//! /// * `query` - What to search for.
//! /// * `filter` - Which results to keep.
//! #[tool]
//! fn search(query: String, filter: Filter) -> String {
//!     format!("{query}: {:?}, {}", filter.language, filter.limit)
//! }
//!
//! let def = search_tool();
//! assert_eq!(def.parameters().required, ["query", "filter"]);
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use actuator_tool_core as tool_core;

pub use actuator_tool_core::{schemars, serde};

#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use actuator_tool_macros::tool;
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use actuator_tool_macros::tool_input;

#[cfg(feature = "dialect")]
#[cfg_attr(docsrs, doc(cfg(feature = "dialect")))]
pub use actuator_dialect as dialect;

#[cfg(feature = "exec")]
#[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
pub use actuator_events as events;
#[cfg(feature = "exec")]
#[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
pub use actuator_exec as exec;
#[cfg(feature = "exec")]
#[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
pub use actuator_model as model;

#[cfg(feature = "agent")]
#[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
pub use actuator_agent as agent;
// The attribute and the module share the name `agent` in different namespaces (macros and
// types): `#[actuator::agent]` is the attribute, `actuator::agent::run` the module's.
#[cfg(all(feature = "macros", feature = "agent"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "macros", feature = "agent"))))]
pub use actuator_tool_macros::agent;

#[cfg(feature = "multi")]
#[cfg_attr(docsrs, doc(cfg(feature = "multi")))]
pub use actuator_multi as multi;

#[cfg(feature = "eval")]
#[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
pub use actuator_eval as eval;
#[cfg(feature = "providers")]
#[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
pub use actuator_providers as providers;

#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use actuator_otel as otel;

#[cfg(feature = "tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
pub use actuator_sandbox as sandbox;
#[cfg(feature = "tools")]
#[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
pub use actuator_tools as tools;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub use actuator_mcp as mcp;

/// What a first program needs, behind the features that bring it: a tool, an agent, a model,
/// a run with limits; the built-in tools and their sandbox; MCP servers' tools; an evaluation.
///
/// Everything else is one module away (`actuator::agent::react::AgentSubmit`,
/// `actuator::exec::execute_tools`, …).
///
/// ```
/// use actuator::prelude::*;
///
/// let agent = react().model(ScriptedModel::new([])).build().unwrap();
/// let _limits = [turn_limit(10), token_limit(100_000)];
/// assert_eq!(agent.name(), "react");
/// ```
pub mod prelude {
    pub use actuator_tool_core::{
        Content, FatalToolError, IntoToolOutput, Json, ToolArgs, ToolChoice, ToolContext, ToolDef,
        ToolError, ToolFailure, ToolInfo, ToolOutput, ToolParams,
    };

    #[cfg(all(feature = "macros", feature = "agent"))]
    #[cfg_attr(docsrs, doc(cfg(all(feature = "macros", feature = "agent"))))]
    pub use actuator_tool_macros::agent;
    #[cfg(feature = "macros")]
    #[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
    pub use actuator_tool_macros::{tool, tool_input};

    #[cfg(feature = "exec")]
    #[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
    pub use actuator_events::{ConsoleTranscript, EventLog};
    #[cfg(feature = "exec")]
    #[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
    pub use actuator_exec::{ExecuteOptions, execute_tools};
    #[cfg(feature = "exec")]
    #[cfg_attr(docsrs, doc(cfg(feature = "exec")))]
    pub use actuator_model::{ChatMessage, Model, ModelOutput, ScriptedModel};

    #[cfg(feature = "agent")]
    #[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
    pub use actuator_agent::limits::{
        message_limit, time_limit, token_limit, turn_limit, working_limit,
    };
    #[cfg(feature = "agent")]
    #[cfg_attr(docsrs, doc(cfg(feature = "agent")))]
    pub use actuator_agent::{
        Agent, AgentError, AgentRun, AgentState, RunContext, RunEnd, RunOptions, react, run,
    };

    #[cfg(feature = "multi")]
    #[cfg_attr(docsrs, doc(cfg(feature = "multi")))]
    pub use actuator_multi::{as_tool, handoff};

    #[cfg(feature = "tools")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
    pub use actuator_sandbox::LocalSandbox;
    #[cfg(feature = "tools")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tools")))]
    pub use actuator_tools::{bash, python, text_editor};

    #[cfg(feature = "providers")]
    #[cfg_attr(docsrs, doc(cfg(feature = "providers")))]
    pub use actuator_providers::{ModelOptions, get_model};

    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub use actuator_mcp::{McpServer, mcp_tools};

    #[cfg(feature = "eval")]
    #[cfg_attr(docsrs, doc(cfg(feature = "eval")))]
    pub use actuator_eval::{EvalOptions, Sample, Task, eval};
}

/// `docs/agents.md`, whose examples run as doctests of this crate.
#[cfg(all(doctest, feature = "macros", feature = "multi"))]
#[doc = include_str!("../../../docs/agents.md")]
pub struct AgentsGuide;

/// `docs/durability.md`, whose examples run as doctests of this crate.
#[cfg(all(doctest, feature = "agent", feature = "eval"))]
#[doc = include_str!("../../../docs/durability.md")]
pub struct DurabilityGuide;
