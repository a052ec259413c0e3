//! The submit tool: building it, recognising a submission, recording the answer, and removing
//! submit calls from the final conversation (§9.5).

use actuator_model::{ChatMessage, MessageContent, ModelOutput};
use actuator_tool_core::{
    Content, ToolArgs, ToolContext, ToolDef, ToolDefError, ToolFailure, ToolParams,
};
use serde_json::json;

use super::config::AgentSubmit;
use crate::prompts::DEFAULT_SUBMIT_DESCRIPTION;
use crate::state::AgentState;

/// The default submit tool, built once per process and shared (its schema and validator are
/// the same for every agent).
fn default_submit_tool() -> Result<ToolDef, ToolDefError> {
    static DEFAULT: std::sync::OnceLock<Result<ToolDef, ToolDefError>> = std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            let params = ToolParams::from_value(&json!({
                "type": "object",
                "properties": {"answer": {"type": "string", "description": "Submitted answer"}},
                "required": ["answer"]
            }))?;
            ToolDef::builder("submit")
                .description(DEFAULT_SUBMIT_DESCRIPTION)
                .parameters(params)
                .handler(|mut args: ToolArgs, _cx: ToolContext| async move {
                    let answer: String = args.required("answer")?;
                    Ok::<_, ToolFailure>(answer)
                })
                .build()
        })
        .clone()
}

/// The default submit tool, or the configured one with its overrides; never truncated unless
/// it says otherwise.
pub(super) fn submit_tool(settings: &AgentSubmit) -> Result<ToolDef, ToolDefError> {
    let mut tool = match &settings.tool {
        Some(t) => t.clone(),
        None => default_submit_tool()?,
    };
    if let Some(name) = &settings.name {
        tool = tool.with_name(name.clone())?;
    }
    if let Some(d) = &settings.description {
        tool = tool.with_description(d.clone())?;
    }
    if tool.max_output().is_none() {
        tool = tool.with_max_output(Some(0));
    }
    Ok(tool)
}

/// The submit settings a built agent keeps.
#[derive(Debug, Clone)]
pub(super) struct SubmitSettings {
    pub(super) name: String,
    pub(super) answer_only: bool,
    pub(super) delimiter: String,
    pub(super) keep_in_messages: bool,
}

/// The text of the first error-free result of the submit tool, if any.
pub(super) fn submission(messages: &[ChatMessage], submit_name: &str) -> Option<String> {
    messages.iter().find_map(|m| {
        let t = m.as_tool()?;
        (t.function.as_deref() == Some(submit_name) && t.error.is_none()).then(|| t.content.text())
    })
}

/// Removes submit calls and their results from a conversation (§9.5): every tool message of
/// the submit tool (failed ones too), and the submit calls of assistant messages; when a call
/// was removed, the message's last reasoning item goes too, and its call list becomes empty
/// (not absent).
pub fn remove_submit_tool(messages: Vec<ChatMessage>, submit_name: &str) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(t) if t.function.as_deref() == Some(submit_name) => None,
            ChatMessage::Assistant(mut a) => {
                if let Some(calls) = &a.tool_calls {
                    let kept: Vec<_> = calls
                        .iter()
                        .filter(|c| c.function != submit_name)
                        .cloned()
                        .collect();
                    if kept.len() < calls.len() {
                        if let MessageContent::Parts(parts) = &mut a.content
                            && let Some(i) = parts.iter().rposition(Content::is_reasoning)
                        {
                            parts.remove(i);
                        }
                        a.tool_calls = Some(kept);
                    }
                }
                Some(ChatMessage::Assistant(a))
            }
            other => Some(other),
        })
        .collect()
}

/// Records a submission in the output and (unless submit calls are kept) in the message
/// that made it.
pub(super) fn apply_submission(state: &mut AgentState, submit: &SubmitSettings, answer: &str) {
    let mut output = state.output();
    if submit.answer_only {
        output.set_completion(answer);
    } else {
        let joined = format!("{}{}{answer}", output.completion(), submit.delimiter);
        output.set_completion(joined.trim());
    }
    if !submit.keep_in_messages
        && let Some(message) = output.message_mut()
    {
        match &mut message.content {
            MessageContent::Text(t) => {
                *t = format!("{t}{}{answer}", submit.delimiter).trim().into();
            }
            MessageContent::Parts(parts) => parts.push(Content::text(answer)),
        }
        // The output's message is the one in the history: change both.
        let id = message.id.clone();
        let content = message.content.clone();
        if let Some(ChatMessage::Assistant(m)) =
            state.messages.iter_mut().rev().find(|m| m.id() == id)
        {
            m.content = content;
        }
    }
    state.set_output(output);
}

/// A [`ModelOutput`] helper for tests and examples: the output of a turn that submits `answer`.
pub fn submit_output(answer: &str) -> ModelOutput {
    ModelOutput::for_tool_call("", "submit", json!({ "answer": answer }))
}
