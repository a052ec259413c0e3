//! [`as_tool`]: call an agent like a function (§12).

use std::sync::Arc;

use actuator_agent::{Agent, AgentInput, RunContext, RunOptions, limits::Limit};
use actuator_events::{RunsAgent, ToolCallAgent};
use actuator_model::{ChatMessage, MessageContent};
use actuator_tool_core::{
    Content, FatalToolError, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure, ToolOutput,
};
use serde_json::{Map, Value, json};

use crate::common::{
    AgentToolError, SharedAgent, agent_tool_name, description, remaining_parameters,
    with_agent_requirements,
};

/// Builds a tool that runs an agent. Start with [`as_tool`].
#[derive(Clone)]
pub struct AsToolBuilder {
    agent: SharedAgent,
    description: Option<String>,
    limits: Vec<Limit>,
    curried: Map<String, Value>,
    parallel: bool,
    max_output: Option<usize>,
}

/// Starts a tool that runs `agent` on one input message in an isolated conversation and
/// returns its answer. Its first parameter is `input` (`Input message.`), followed by the
/// agent's own parameters minus curried ones.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::react;
/// use actuator_model::ScriptedModel;
/// use actuator_multi::as_tool;
///
/// let calculator = react().name("calculator").description("Does arithmetic.")
///     .model(Arc::new(ScriptedModel::new([]))).build().unwrap();
/// let tool = as_tool(Arc::new(calculator)).build().unwrap();
/// assert_eq!(tool.name(), "calculator");
/// assert_eq!(tool.parameters().required, vec!["input"]);
/// assert_eq!(tool.max_output(), Some(0));
/// ```
pub fn as_tool(agent: impl Agent + 'static) -> AsToolBuilder {
    AsToolBuilder {
        agent: Arc::new(agent),
        description: None,
        limits: Vec::new(),
        curried: Map::new(),
        parallel: false,
        max_output: Some(0),
    }
}

impl AsToolBuilder {
    /// The tool's description (default: the agent's).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The agent's own limits for each call; hitting one is a tool error the model reads.
    #[must_use]
    pub fn limits(mut self, limits: impl IntoIterator<Item = Limit>) -> Self {
        self.limits.extend(limits);
        self
    }

    /// Fixes an argument of the agent: the model does not see it.
    #[must_use]
    pub fn curry(mut self, name: impl Into<String>, value: Value) -> Self {
        self.curried.insert(name.into(), value);
        self
    }

    /// Lets calls run in parallel stages (default: serial).
    #[must_use]
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The output limit (default `Some(0)`: never truncated).
    #[must_use]
    pub fn max_output(mut self, max_output: Option<usize>) -> Self {
        self.max_output = max_output;
        self
    }

    /// Checks the settings and builds the tool.
    pub fn build(self) -> Result<ToolDef, AgentToolError> {
        let agent = self.agent.as_ref();
        let own = remaining_parameters(agent, &self.curried)?;
        let description = description(agent, self.description.as_deref(), "as_tool")?;
        let mut params = actuator_tool_core::ToolParams::default();
        params.properties.insert(
            "input".into(),
            json!({"type": "string", "description": "Input message."}),
        );
        params.properties.extend(own.properties);
        params.required = own.required;
        params.required.push("input".into());
        params.defs = own.defs;
        let agent = self.agent.clone();
        let limits = self.limits;
        let curried = self.curried;
        let tool = ToolDef::builder(agent_tool_name(self.agent.as_ref()))
            .description(description)
            .parameters(params)
            .parallel(self.parallel)
            .max_output(self.max_output)
            .handler(move |mut args: ToolArgs, ctx: ToolContext| {
                let agent = agent.clone();
                let limits = limits.clone();
                let curried = curried.clone();
                async move {
                    let input: String = args.required("input")?;
                    let mut agent_args = args.into_map();
                    agent_args.extend(curried);
                    // Without the caller's context the agent would escape its limits and
                    // events: refuse.
                    let cx = RunContext::from_tool_context(&ctx).map_err(FatalToolError::new)?;
                    let run = cx
                        .run(
                            agent.as_ref(),
                            AgentInput::Text(input),
                            RunOptions::new()
                                .limits(limits)
                                .args(agent_args)
                                // A live view places the run under this call.
                                .tool_call_id(Arc::clone(&ctx.call_id)),
                        )
                        .await
                        .map_err(|e| -> ToolFailure {
                            match e.limit() {
                                // Not this call's limit: it ends the run (D9).
                                Some(limit) => FatalToolError::new(limit.clone()).into(),
                                // An approver's or reviewer's termination ends the whole run,
                                // as the reference's TerminateSampleError does.
                                None if e.termination().is_some() => terminated(e),
                                None => FatalToolError::msg(format!(
                                    "The {} agent failed: {e}",
                                    agent.name()
                                ))
                                .into(),
                            }
                        })?;
                    // The call's event names the agent run it started (the reference's
                    // `agent_span_id`).
                    if let Some(slot) = ctx.extensions.get::<ToolCallAgent>() {
                        slot.set_agent_span_id(run.span_id.clone());
                    }
                    if let Some(limit) = run.limit {
                        return Err(ToolError::with_kind(
                            actuator_tool_core::ToolErrorKind::Limit,
                            limit.exceeded_text("tool"),
                        )
                        .into());
                    }
                    Ok::<_, ToolFailure>(result_of(&run.state))
                }
            })
            .build()?
            // Its calls' events name the agent run they start.
            .with_extension(RunsAgent);
        Ok(with_agent_requirements(tool, self.agent.as_ref()))
    }
}

/// The agent's answer: its output's content (reasoning dropped), else its last assistant
/// message's, else nothing.
fn result_of(state: &actuator_agent::AgentState) -> ToolOutput {
    let output = state.output();
    let content = match output.message() {
        Some(m) => Some(m.content.clone()),
        None => state
            .messages
            .last()
            .and_then(ChatMessage::as_assistant)
            .map(|a| a.content.clone()),
    };
    match content {
        None => ToolOutput::default(),
        Some(MessageContent::Text(t)) => ToolOutput::Text(t),
        Some(MessageContent::Parts(parts)) => {
            let kept: Vec<Content> = parts.into_iter().filter(|c| !c.is_reasoning()).collect();
            if kept.iter().all(|c| c.as_text().is_some()) {
                ToolOutput::Text(kept.iter().filter_map(Content::as_text).collect())
            } else {
                ToolOutput::Content(kept)
            }
        }
    }
}

/// The failure of a tool whose agent was terminated by an approver or a reviewer: fatal, with
/// the executor's error as its cause, which the enclosing executor recognises and stops its own
/// run with (so the termination reaches the sample, whatever the depth).
pub(crate) fn terminated(e: actuator_agent::AgentError) -> ToolFailure {
    match e.kind {
        actuator_agent::AgentErrorKind::Exec(exec) => FatalToolError::new(exec).into(),
        other => FatalToolError::msg(other.to_string()).into(),
    }
}
