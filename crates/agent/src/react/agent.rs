//! [`ReactAgent`]: its settings as built, and the [`Agent`] it is. Its loop is in `steps.rs`,
//! one turn's generation in `turn.rs`.

use std::sync::Arc;

use actuator_events::{Event, InfoEvent};
use actuator_exec::{ApprovalPolicy, ExecuteOptions, ReviewPolicy};
use actuator_model::{BoxFuture, CompactString, GenerateConfig};
use actuator_tool_core::{ToolDef, ToolInfo, ToolRequirement};
use serde_json::{Map, Value};

use super::config::{AgentAttempts, ContextOverflow, OnContinue, ReactModel, ReactToolChoice};
use super::submit::SubmitSettings;
use crate::agent::Agent;
use crate::compaction::CompactionStrategy;
use crate::context::RunContext;
use crate::error::{AgentError, AgentErrorKind};
use crate::state::AgentState;
use actuator_tool_core::source::ToolSource;

/// A react agent. Build one with [`react`](crate::react()).
/// A react agent. Build one with [`react`](crate::react()).
pub struct ReactAgent {
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) system_message: Option<CompactString>,
    pub(super) tools: Vec<ToolDef>,
    pub(super) sources: Vec<Arc<dyn ToolSource>>,
    /// Shared with every model event of the agent's runs.
    pub(super) infos: Arc<[Arc<ToolInfo>]>,
    pub(super) model: ReactModel,
    pub(super) attempts: AgentAttempts,
    pub(super) submit: Option<SubmitSettings>,
    pub(super) on_continue: Option<OnContinue>,
    pub(super) retry_refusals: Option<u32>,
    pub(super) malformed_call_retries: Option<u32>,
    pub(super) compaction: Option<Arc<dyn CompactionStrategy>>,
    pub(super) overflow: ContextOverflow,
    pub(super) approval: Vec<ApprovalPolicy>,
    pub(super) review: Vec<ReviewPolicy>,
    pub(super) max_output: Option<usize>,
    pub(super) max_concurrency: Option<usize>,
    pub(super) config: GenerateConfig,
    pub(super) tool_choice: ReactToolChoice,
}

impl std::fmt::Debug for ReactAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReactAgent")
            .field("name", &self.name)
            .field(
                "tools",
                &self.tools.iter().map(ToolDef::name).collect::<Vec<_>>(),
            )
            .field("submit", &self.submit.as_ref().map(|s| &s.name))
            .finish_non_exhaustive()
    }
}

impl ReactAgent {
    /// The fixed tools offered (including the submit tool); tools from
    /// [sources](super::builder::ReactBuilder::tool_source) are added to them each turn.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// The system message, if there is one.
    pub fn system_message(&self) -> Option<&str> {
        self.system_message.as_deref()
    }

    /// The submit tool's name, when there is one.
    pub fn submit_name(&self) -> Option<&str> {
        self.submit.as_ref().map(|s| s.name.as_str())
    }

    pub(super) fn exec_options(&self, cx: &RunContext) -> ExecuteOptions {
        let mut options = cx.execute_options();
        options.max_output = self.max_output;
        options.max_concurrency = self.max_concurrency;
        options.approval = self.approval.clone();
        options.review = self.review.clone();
        options
    }
}

/// Fails with the state kept.
pub(super) fn fail(kind: impl Into<AgentErrorKind>, state: &AgentState) -> AgentError {
    AgentError::with_state(kind, state.clone())
}

pub(super) fn info(cx: &RunContext, message: &str) {
    tracing::info!("{message}");
    cx.emit(Event::Info(InfoEvent {
        source: Some("react".to_owned()),
        message: message.to_owned(),
    }));
}

impl Agent for ReactAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    fn requirements(&self) -> Vec<ToolRequirement> {
        ToolRequirement::of_tools(&self.tools)
    }

    fn run(
        &self,
        state: AgentState,
        cx: RunContext,
        _args: Map<String, Value>,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>> {
        Box::pin(self.execute(state, cx))
    }
}
