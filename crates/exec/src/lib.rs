//! # actuator-exec
//!
//! The staged executor: where a model's words become real calls, concurrently where safe,
//! with every failure either handed back to the model or stopping the run on purpose.
//!
//! - [`execute_tools`]: stages ([`plan_stages`]), the per-call pipeline, declared-order results.
//! - Approval: [`Approver`], [`ApprovalPolicy`], [`auto_approver`]; `TerminalApprover` (the
//!   reference's `human` approver, a prompt on stdin) with the `terminal` feature, and
//!   `TerminalElicitation`, which answers a tool's or an MCP server's questions there.
//! - Review of results ([`Reviewer`], [`ReviewPolicy`], the reference's `inspect_ai.review`):
//!   after a call has run and before the model reads its result, reviewers matched by policy
//!   let the run continue, end it ([`ExecError::ReviewTerminated`]) or escalate; each decision
//!   is an `actuator_events::ReviewEvent`. A tool's canonical arguments
//!   (`actuator_tool_core::CanonicalArguments`) are what approvers and reviewers see and what
//!   the tool runs with.
//! - Conversation-taking tools ([`with_conversation`]): the hook handoff is built on.
//! - Events: per call, a pending `actuator_events::ToolEvent` when it starts and the completed
//!   one when it ends, to the options' `EventSink`, and a `tracing` span.
//! - An operator's cancel of one running call: [`ToolCallCanceller`].
//! - An enclosing run's limit hit inside a tool ends execution as [`ExecError::Limit`].
#![cfg_attr(docsrs, feature(doc_cfg))]

mod approval;
pub use approval::{
    Approval, ApprovalDecision, ApprovalPolicy, ApprovalPolicyError, ApprovalRequest, Approver,
    PolicyDecision, apply_policies, auto_approver, default_view,
};

#[cfg(feature = "terminal")]
mod terminal;
#[cfg(feature = "terminal")]
pub use terminal::TerminalApprover;
#[cfg(feature = "terminal")]
mod terminal_review;
#[cfg(feature = "terminal")]
pub use terminal_review::TerminalReviewer;
#[cfg(feature = "terminal")]
mod terminal_elicitation;
#[cfg(feature = "terminal")]
pub use terminal_elicitation::TerminalElicitation;

mod review;
pub use review::{
    Review, ReviewDecided, ReviewDecision, ReviewPolicy, ReviewPolicyError, ReviewRequest,
    Reviewer, apply_review_policies,
};
mod review_config;
pub use review_config::{ReviewConfigError, ReviewerRegistry};
mod reviewing;
pub use review::REVIEW_TERMINATED;

mod cancel;
pub use cancel::{CANCELLED_BY_OPERATOR, ToolCallCanceller};

mod policy_config;
pub use policy_config::{ApprovalConfigError, ApproverRegistry};

mod conversation;
pub use conversation::{
    ConversationHandler, ConversationTool, ConversationToolOutput, with_conversation,
};

mod error;
pub use error::ExecError;

mod call;
mod execute;
mod options;
mod pipeline;
mod runner;
mod spread;
/// The duplicate-name check (D7) `execute_tools` makes, defined with the tool sets in
/// tool-core.
#[doc(no_inline)]
pub use actuator_tool_core::check_tool_names;
pub use execute::{ExecuteToolsResult, execute_tools, plan_stages};
pub use options::{CANCELLED_BY_SIBLING, ExecuteOptions};
