//! # actuator-multi
//!
//! Agents working together:
//!
//! - [`handoff`]: hand the conversation to a specialist (a conversation-taking tool named
//!   `transfer_to_{name}`), which answers in the same conversation;
//! - [`as_tool`]: call an agent like a function, on one input, in isolation;
//! - [`as_solver`]: run an agent as a whole task's [`Solver`] over a [`TaskState`].
#![cfg_attr(docsrs, feature(doc_cfg))]

mod common;
pub use common::{AgentToolError, agent_tool_name, sanitize_tool_name};

mod handoff;
pub use handoff::{HandoffBuilder, handoff};

mod as_tool;
pub use as_tool::{AsToolBuilder, as_tool};

mod solver;
pub use solver::{AgentSolver, AsSolverBuilder, Solver, Store, TaskState, as_solver};
