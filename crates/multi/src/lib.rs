//! # actuator-multi
//!
//! Agents working together. Three combinators turn an [`Agent`](actuator_agent::Agent) into
//! something another agent, or an evaluation, can use; which one fits depends on who keeps the
//! conversation.
//!
//! | you want the other agent to… | use | it becomes |
//! |---|---|---|
//! | take over the conversation and answer in it (a specialist) | [`handoff`] | a tool `transfer_to_{name}` that runs the agent on the whole conversation and appends what it said |
//! | answer one question, in isolation, like a function | [`as_tool`] | a tool `{name}(input)` whose result is the agent's final text |
//! | solve a whole task of an evaluation | [`as_solver`] | a [`Solver`] over a [`TaskState`] |
//!
//! Each takes any agent (a [`react`](actuator_agent::react()) agent, an `agent_fn`, an
//! `#[agent]`, an `Arc` of one), is configured by a small builder (description, the agent's own
//! limits, arguments fixed in advance with `curry`) and checked when built.
//!
//! ## Handoff: a specialist takes the conversation
//!
//! The supervisor calls `transfer_to_researcher`; the researcher sees the conversation (through
//! an input filter when one is set), works under its own fresh limits, and what it says
//! (by default its content only, without its tool calls) is appended for the supervisor to read. An enclosing run's
//! limit still ends the whole run (D9).
//!
//! ```
//! use actuator_agent::react;
//! use actuator_model::ScriptedModel;
//! use actuator_multi::handoff;
//!
//! let researcher = react()
//!     .name("researcher")
//!     .description("Finds facts.")
//!     .model(std::sync::Arc::new(ScriptedModel::new([])))
//!     .build()
//!     .unwrap();
//! let tool = handoff(researcher).build().unwrap();
//! assert_eq!(tool.name(), "transfer_to_researcher");
//! ```
//!
//! ## As a tool: one input, one answer
//!
//! The calling model writes `input`; the agent runs on that alone and its final text is the
//! tool's result. A limit the agent hits is a tool error the calling model reads.
//!
//! ```
//! use actuator_agent::{react, limits::turn_limit};
//! use actuator_model::ScriptedModel;
//! use actuator_multi::as_tool;
//!
//! let calculator = react()
//!     .name("calculator")
//!     .description("Does arithmetic.")
//!     .model(std::sync::Arc::new(ScriptedModel::new([])))
//!     .build()
//!     .unwrap();
//! let tool = as_tool(calculator).limits([turn_limit(5)]).build().unwrap();
//! assert_eq!(tool.parameters().required, ["input"]);
//! ```
//!
//! ## As a solver: the evaluation seam
//!
//! [`Solver`] and [`TaskState`] are the seam between agents and evaluations: `actuator-eval`
//! runs a task's solver on each sample's [`TaskState`] and scores what it leaves there, and
//! [`as_solver`] is how an agent becomes one. They live here, below `eval`, so that both reach
//! them without `eval` being needed to write a solver. `TaskState` is kept small on purpose:
//! the conversation, the output, metadata, a typed [`Store`] and whether the task is done.
//!
//! ```
//! use actuator_agent::{AgentState, agent_fn};
//! use actuator_multi::{Solver, TaskState, as_solver};
//!
//! let echo = agent_fn("echo", |state: AgentState, _cx, _args| async move { Ok(state) });
//! let solver = as_solver(echo).build().unwrap();
//! let mut task = TaskState::default();
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! solver.solve(&mut task, &actuator_agent::RunContext::new()).await.unwrap();
//! # });
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod common;
pub use common::{AgentToolError, agent_tool_name, sanitize_tool_name};

mod handoff;
pub use handoff::{HandoffBuilder, handoff};

mod as_tool;
pub use as_tool::{AsToolBuilder, as_tool};

mod solver;
pub use solver::{AgentSolver, AsSolverBuilder, Solver, Store, TaskState, as_solver};
