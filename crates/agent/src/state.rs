//! [`AgentState`]: the conversation an agent works on, and its output.

use std::sync::Arc;

use actuator_model::{ChatCompletionChoice, ChatMessage, ModelOutput, StopReason};
use serde::{Deserialize, Serialize};

use crate::budget::Budget;
use crate::messages::MessageList;

/// The conversation an agent works on, and its output.
///
/// `output` is derived on read from the last assistant message unless it was set explicitly
/// (D10: it never goes stale). Serde round-trips, so a run can be saved and resumed.
///
/// ```
/// use actuator_agent::AgentState;
/// use actuator_model::ChatMessage;
///
/// let mut state = AgentState::new(vec![ChatMessage::user("2 + 2?")]);
/// assert!(state.output().is_empty());
/// state.messages.push(ChatMessage::assistant("4"));
/// assert_eq!(state.output().completion(), "4");
/// state.messages.push(ChatMessage::assistant("Four."));
/// assert_eq!(state.output().completion(), "Four."); // derived again, never stale
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// The conversation (it enforces the run's message limit as messages are added).
    pub messages: MessageList,
    /// The output, when set explicitly; shared with the [`ModelEvent`] that recorded it, so
    /// that recording a turn does not copy the output.
    ///
    /// [`ModelEvent`]: actuator_events::ModelEvent
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<Arc<ModelOutput>>,
}

impl AgentState {
    /// A state with these messages and no explicit output.
    pub fn new(messages: Vec<ChatMessage>) -> Self {
        AgentState {
            messages: messages.into(),
            output: None,
        }
    }

    /// The output: the one set explicitly, else one derived from the last assistant message
    /// (stop reason `stop`), else an empty output.
    pub fn output(&self) -> ModelOutput {
        if let Some(out) = &self.output {
            return ModelOutput::clone(out);
        }
        let last = self
            .messages
            .iter()
            .rev()
            .find_map(ChatMessage::as_assistant);
        match last {
            Some(message) => ModelOutput {
                model: message.model.clone().unwrap_or_default(),
                choices: vec![ChatCompletionChoice {
                    message: message.clone(),
                    stop_reason: StopReason::Stop,
                }],
                ..ModelOutput::default()
            },
            None => ModelOutput::default(),
        }
    }

    /// Releases the parsed arguments kept with the calls of the last message, when it is an
    /// assistant message ([`ChatMessageAssistant::release_parsed_arguments`]): the loops do
    /// this once the calls have run, so the conversation keeps each call's arguments as text
    /// alone.
    ///
    /// [`ChatMessageAssistant::release_parsed_arguments`]: actuator_model::ChatMessageAssistant::release_parsed_arguments
    pub fn release_parsed_arguments(&mut self) {
        if let Some(ChatMessage::Assistant(a)) = self.messages.last_mut() {
            a.release_parsed_arguments();
        }
    }

    /// The explicitly set output, if any.
    pub fn explicit_output(&self) -> Option<&ModelOutput> {
        self.output.as_deref()
    }

    /// The explicitly set output, mutably (copied first if an event still shares it).
    pub fn explicit_output_mut(&mut self) -> Option<&mut ModelOutput> {
        self.output.as_mut().map(Arc::make_mut)
    }

    /// Sets the output explicitly: a [`ModelOutput`], or an `Arc` of one to share it (as
    /// react does with the output its model event recorded).
    pub fn set_output(&mut self, output: impl Into<Arc<ModelOutput>>) {
        self.output = Some(output.into());
    }

    /// Goes back to deriving the output from the messages.
    pub fn clear_output(&mut self) {
        self.output = None;
    }

    /// Puts the conversation under a run's limits (done by `run` for the state it runs).
    pub(crate) fn attach(&mut self, budget: &Budget) {
        self.messages.attach(budget.clone());
    }

    /// Releases the conversation from its run (done by `run` for the state it returns).
    pub(crate) fn detach(&mut self) {
        self.messages.detach();
    }
}
