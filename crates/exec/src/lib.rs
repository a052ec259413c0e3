//! # actuator-exec
//!
//! The staged executor: where a model's words become real calls, concurrently where safe,
//! with every failure either handed back to the model or stopping the run on purpose.
//!
//! - [`execute_tools`]: stages ([`plan_stages`]), the per-call pipeline, declared-order results.
//! - Approval: [`Approver`], [`ApprovalPolicy`], [`auto_approver`], [`TerminalApprover`].
//! - Conversation-taking tools ([`with_conversation`]): the hook handoff is built on.
//! - Events: [`ToolEvent`] to an [`EventSink`], and a `tracing` span per call.

mod approval;
pub use approval::{
    Approval, ApprovalDecision, ApprovalPolicy, ApprovalPolicyError, ApprovalRequest, Approver,
    TerminalApprover, apply_policies, auto_approver, default_view,
};

mod conversation;
pub use conversation::{
    ConversationHandler, ConversationTool, ConversationToolOutput, with_conversation,
};

mod error;
pub use error::ExecError;

mod events;
pub use events::{
    ApprovalEvent, CompactionEvent, Event, EventLog, EventSink, InfoEvent, LimitEvent, ModelEvent,
    SpanBeginEvent, SpanEndEvent, ToolEvent, unix_seconds,
};

mod execute;
pub use execute::{
    CANCELLED_BY_SIBLING, ExecuteOptions, ExecuteToolsResult, check_tool_names, execute_tools,
    plan_stages,
};
