//! [`handoff`]: hand the conversation to another agent (§11).

use std::collections::HashSet;
use std::sync::Arc;

use actuator_agent::{
    Agent, AgentInput, AgentState, RunContext, RunOptions, filter::MessageFilter, limits::Limit,
};
use actuator_events::{RunsAgent, ToolCallAgent};
use actuator_exec::{ConversationHandler, ConversationTool, ConversationToolOutput};
use actuator_model::{BoxFuture, ChatMessage, MessageContent, ToolCall};
use actuator_tool_core::{Content, Extensions, FatalToolError, ToolArgs, ToolDef, ToolFailure};
use serde_json::{Map, Value};

use crate::common::{
    AgentToolError, SharedAgent, agent_tool_name, description, remaining_parameters,
    with_agent_requirements,
};

/// Builds a handoff tool. Start with [`handoff`].
#[derive(Clone)]
pub struct HandoffBuilder {
    agent: SharedAgent,
    description: Option<String>,
    input_filter: Option<MessageFilter>,
    output_filter: Option<MessageFilter>,
    tool_name: Option<String>,
    limits: Vec<Limit>,
    curried: Map<String, Value>,
}

/// Starts a handoff to `agent`: a serial, conversation-taking tool named
/// `transfer_to_{sanitized agent name}` that runs the agent on the conversation and appends
/// what it said.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::react;
/// use actuator_model::ScriptedModel;
/// use actuator_multi::handoff;
///
/// let searcher = react().name("Web Searcher").description("Searches the web.")
///     .model(Arc::new(ScriptedModel::new([]))).build().unwrap();
/// let tool = handoff(Arc::new(searcher)).build().unwrap();
/// assert_eq!(tool.name(), "transfer_to_web_searcher");
/// assert!(!tool.parallel());
/// ```
pub fn handoff(agent: impl Agent + 'static) -> HandoffBuilder {
    HandoffBuilder {
        agent: Arc::new(agent),
        description: None,
        input_filter: None,
        output_filter: Some(MessageFilter::content_only()),
        tool_name: None,
        limits: Vec::new(),
        curried: Map::new(),
    }
}

impl HandoffBuilder {
    /// The tool's description (default: the agent's).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Filters the conversation the agent receives.
    #[must_use]
    pub fn input_filter(mut self, filter: MessageFilter) -> Self {
        self.input_filter = Some(filter);
        self
    }

    /// Filters the messages the agent adds (default: [`content_only`](actuator_agent::filter::content_only)).
    #[must_use]
    pub fn output_filter(mut self, filter: Option<MessageFilter>) -> Self {
        self.output_filter = filter;
        self
    }

    /// The tool's name (default `transfer_to_{sanitized agent name}`).
    #[must_use]
    pub fn tool_name(mut self, name: impl Into<String>) -> Self {
        self.tool_name = Some(name.into());
        self
    }

    /// Limits applied, fresh, to each handoff.
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

    /// Checks the settings and builds the tool.
    pub fn build(self) -> Result<ToolDef, AgentToolError> {
        let agent = self.agent.as_ref();
        let parameters = remaining_parameters(agent, &self.curried)?;
        let description = description(agent, self.description.as_deref(), "handoff")?;
        let name = self
            .tool_name
            .clone()
            .unwrap_or_else(|| format!("transfer_to_{}", agent_tool_name(agent)));
        let target = self.agent.clone();
        let handoff = Handoff {
            agent: self.agent,
            input_filter: self.input_filter,
            output_filter: self.output_filter,
            limits: self.limits,
            curried: self.curried,
        };
        let tool = ToolDef::builder(name)
            .description(description)
            .parameters(parameters)
            .parallel(false)
            .conversation_handler(ConversationHandler::new(handoff))
            .build()?
            // Its calls' events name the agent handed off to.
            .with_extension(RunsAgent);
        // What the agent handed off to needs, the agent handing off needs too.
        Ok(with_agent_requirements(tool, target.as_ref()))
    }
}

struct Handoff {
    agent: SharedAgent,
    input_filter: Option<MessageFilter>,
    output_filter: Option<MessageFilter>,
    limits: Vec<Limit>,
    curried: Map<String, Value>,
}

/// Whether `m` is the handoff boundary: the transfer tool message, or a user message whose
/// text (or first text item) is the transfer text.
fn is_boundary(m: &ChatMessage, tool_message_id: &str, transfer_text: &str) -> bool {
    match m {
        ChatMessage::Tool(t) => t.id == tool_message_id,
        ChatMessage::User(u) => match &u.content {
            MessageContent::Text(t) => t == transfer_text,
            MessageContent::Parts(parts) => {
                parts.iter().find_map(Content::as_text) == Some(transfer_text)
            }
        },
        _ => false,
    }
}

fn prefix_assistant(m: &mut ChatMessage, prefix: &str) {
    if let ChatMessage::Assistant(a) = m {
        match &mut a.content {
            MessageContent::Text(t) => *t = format!("{prefix}{t}").into(),
            MessageContent::Parts(parts) => {
                if let Some(Content::Text { text, .. }) =
                    parts.iter_mut().find(|c| c.as_text().is_some())
                    && !text.is_empty()
                {
                    *text = format!("{prefix}{text}");
                }
            }
        }
    }
}

impl Handoff {
    async fn transfer(
        &self,
        conversation: &[ChatMessage],
        call: &ToolCall,
        args: ToolArgs,
        extensions: &Extensions,
    ) -> Result<ConversationToolOutput, ToolFailure> {
        let agent_name = self.agent.name().to_owned();
        let transfer_text = format!("Successfully transferred to {agent_name}.");

        // 1–3. The conversation up to this call, with only this call on its message.
        let mut conv: Vec<ChatMessage> = conversation.to_vec();
        if let Some(ChatMessage::Assistant(last)) = conv.last_mut()
            && let Some(calls) = &mut last.tool_calls
        {
            calls.retain(|c| c.id == call.id);
        }
        let tool_message = ChatMessage::tool(
            transfer_text.clone(),
            call.id.clone(),
            call.function.clone(),
            None,
        );
        let tool_message_id = tool_message.id().to_owned();
        conv.push(tool_message);
        // 4. The input filter; the boundary is re-added when the filter removed it.
        if let Some(filter) = &self.input_filter {
            conv = filter.apply(conv).await;
            if conv.last().is_none_or(|m| m.id() != tool_message_id) {
                conv.push(ChatMessage::user(transfer_text.clone()));
            }
        }
        // 5. No system messages: the agent brings its own.
        conv.retain(|m| !matches!(m, ChatMessage::System(_)));
        let seen: HashSet<String> = conv.iter().map(|m| m.id().to_owned()).collect();

        // 6–7. Run the agent with fresh limits, inside a handoff span.
        let mut all_args = args.into_map();
        all_args.extend(self.curried.clone());
        // Without the caller's context the agent would escape its limits and events: refuse.
        let cx =
            RunContext::from_extensions(extensions, &call.function).map_err(FatalToolError::new)?;
        let run = cx
            .in_span("handoff", &agent_name, |span_cx| async move {
                span_cx
                    .run(
                        self.agent.as_ref(),
                        AgentInput::continued(AgentState::new(conv)),
                        RunOptions::new()
                            .limits(self.limits.iter().copied())
                            .args(all_args)
                            .tool_call_id(call.id.as_str()),
                    )
                    .await
            })
            .await;
        // The call's event names the agent handed off to (the reference's `agent`).
        if let Some(slot) = extensions.get::<ToolCallAgent>() {
            slot.set_agent(agent_name.clone());
        }
        let run = match run {
            Ok(run) => run,
            // Another scope's limit ends the whole run (D9); anything else is fatal too.
            Err(e) => {
                return Err(match e.limit() {
                    Some(limit) => FatalToolError::new(limit.clone()).into(),
                    // An approver's or reviewer's termination ends the whole run.
                    None if e.termination().is_some() => crate::as_tool::terminated(e),
                    None => {
                        FatalToolError::msg(format!("The {agent_name} agent failed: {e}")).into()
                    }
                });
            }
        };

        // 8–9. The agent's new messages after the last boundary, prefixed; no system messages.
        let output = run.state.output();
        let messages = run.state.messages;
        let start = messages
            .iter()
            .rposition(|m| is_boundary(m, &tool_message_id, &transfer_text))
            .map_or(0, |i| i + 1);
        let prefix = format!("[{agent_name}] ");
        let mut added: Vec<ChatMessage> = messages
            .into_iter()
            .skip(start)
            .filter(|m| !seen.contains(m.id()) && !matches!(m, ChatMessage::System(_)))
            .collect();
        for m in &mut added {
            prefix_assistant(m, &prefix);
        }
        // 10. The output filter.
        if let Some(filter) = &self.output_filter {
            added = filter.apply(added).await;
        }
        // 11. The closing message.
        if let Some(limit) = &run.limit {
            added.push(ChatMessage::user(limit.exceeded_text(&agent_name)));
        } else if added
            .last()
            .is_none_or(|m| matches!(m, ChatMessage::Assistant(_)))
        {
            added.push(ChatMessage::user(format!(
                "The {agent_name} agent has completed its work."
            )));
        }
        // 12. The result, the messages, and the agent's output.
        Ok(ConversationToolOutput {
            content: transfer_text.into(),
            messages: added,
            output: (!output.is_empty()).then_some(output),
        })
    }
}

impl ConversationTool for Handoff {
    fn call<'a>(
        &'a self,
        conversation: &'a [ChatMessage],
        call: &'a ToolCall,
        args: ToolArgs,
        extensions: &'a Extensions,
    ) -> BoxFuture<'a, Result<ConversationToolOutput, ToolFailure>> {
        Box::pin(self.transfer(conversation, call, args, extensions))
    }
}
