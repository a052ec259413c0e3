//! One turn's generation (§9.4 steps 1 and 2): the turn's tools, the generation with
//! compaction and refusal retries, and the recovery from a context overflow.

use std::borrow::Cow;
use std::sync::Arc;

use actuator_events::SharedMessages;
use actuator_model::{ChatMessage, GenerateRequest, StopReason};
use actuator_tool_core::{ToolChoice, ToolDef, ToolInfo};

use super::config::{ContextOverflow, ReactModel};
use crate::compaction::Compactor;
use crate::context::RunContext;
use crate::error::{AgentError, AgentErrorKind};
use crate::filter::MessageFilter;
use crate::state::AgentState;
use actuator_tool_core::source::ToolSet;

use super::agent::{ReactAgent, fail, info};

/// The tools of one turn: the fixed ones, or those and the sources' resolved for the turn.
pub(super) struct Turn<'a> {
    pub(super) tools: Cow<'a, [ToolDef]>,
    pub(super) infos: Arc<[Arc<ToolInfo>]>,
    /// The turn's tool choice.
    pub(super) choice: ToolChoice,
}

/// How an overflow was recovered from.
pub(super) enum Recovery {
    Compaction,
    Filter,
}

impl ReactAgent {
    /// The turn's tools: the fixed tools as they are when there is no source, else the fixed
    /// tools and every source's current tools, checked as a set (D7).
    /// `number` is the turn's number (1-based), which a per-turn tool choice reads.
    pub(super) async fn turn_tools(
        &self,
        cx: &RunContext,
        state: &AgentState,
        number: u32,
    ) -> Result<Turn<'_>, AgentError> {
        let choice = self.tool_choice.for_turn(number, state);
        if self.sources.is_empty() {
            return Ok(Turn {
                tools: Cow::Borrowed(&self.tools),
                infos: Arc::clone(&self.infos),
                choice,
            });
        }
        let mut set = ToolSet::new().tools(self.tools.iter().cloned());
        for source in &self.sources {
            set.push_source(Arc::clone(source));
        }
        let tools = cx
            .resolve_tools(&set)
            .await
            .map_err(|e| e.or_state(state))?;
        let infos = tools.iter().map(ToolDef::info_arc).collect();
        Ok(Turn {
            tools: Cow::Owned(tools),
            infos,
            choice,
        })
    }

    /// §9.4 step 1: generates one turn (after compaction, with refusal retries), appends the
    /// assistant message and sets the output.
    pub(super) async fn generate(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        turn: &Turn<'_>,
        compactor: Option<&mut Compactor>,
        recorded: &mut SharedMessages,
    ) -> Result<(), AgentError> {
        cx.check_messages(state.messages.len(), true)
            .map_err(|e| fail(e, state))?;
        let model = match &self.model {
            ReactModel::Agent(agent) => {
                let taken = std::mem::take(state);
                *state = agent
                    .generate(taken, turn.tools.to_vec(), cx.clone())
                    .await?;
                // The agent may hand back a new state: keep the run's limit on it.
                state.attach(cx.budget());
                return Ok(());
            }
            ReactModel::Model(m) => m.as_ref(),
        };
        let mut compactor = compactor;
        let compacted = match compactor.as_deref_mut() {
            Some(c) => {
                let (input, message) = c
                    .compact_input(model, &state.messages, &turn.infos, false, cx)
                    .await
                    .map_err(|e| e.or_state(state))?;
                if let Some(m) = message {
                    state.messages.push(m);
                }
                Some(input)
            }
            None => None,
        };
        let input: &[ChatMessage] = compacted.as_deref().unwrap_or(&state.messages);
        let mut refusals = 0;
        let output = loop {
            // Every generation, retries included, is recorded and counted by the context.
            // The uncompacted history only grows, so its events share what earlier turns
            // recorded; a compacted view is rebuilt every turn and is recorded whole.
            let request = GenerateRequest::new(input)
                .shared_tools(&turn.infos)
                .tool_choice(&turn.choice)
                .config(&self.config);
            let generated = match &compacted {
                None => cx.generate_shared(model, request, recorded).await,
                Some(_) => cx.generate_recorded(model, request, None).await,
            };
            let output = generated.map_err(|e| e.or_state(state))?;
            let refused = output.stop_reason() == Some(StopReason::ContentFilter);
            if refused && self.retry_refusals.is_some_and(|n| refusals < n) {
                refusals += 1;
                continue;
            }
            break output;
        };
        let input_len = input.len();
        if let Some(c) = compactor {
            c.record_output(input_len, &output);
        }
        let Some(message) = output.message().cloned() else {
            return Err(fail(
                AgentErrorKind::Failed("The model returned no choices.".into()),
                state,
            ));
        };
        state
            .messages
            .push(ChatMessage::Assistant(Box::new(message)));
        state.set_output(output);
        cx.check_messages(state.messages.len(), false)
            .map_err(|e| fail(e, state))
    }

    /// §9.6: drop the failed turn, then try forced compaction, then the overflow filter.
    pub(super) async fn handle_overflow(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        infos: &[Arc<ToolInfo>],
        compactor: Option<&mut Compactor>,
        compaction_allowed: bool,
    ) -> Option<Recovery> {
        let mut previous: Vec<ChatMessage> = state.messages.to_vec();
        previous.pop();
        if let (Some(c), true, ReactModel::Model(model)) =
            (compactor, compaction_allowed, &self.model)
        {
            match c
                .compact_input(model.as_ref(), &previous, infos, true, cx)
                .await
            {
                Ok((_, message)) => {
                    state.messages.set(previous);
                    if let Some(m) = message {
                        state.messages.push(m);
                    }
                    return Some(Recovery::Compaction);
                }
                Err(e) => {
                    tracing::warn!(
                        "Forced compaction failed during overflow recovery: {e}; falling back to overflow filter."
                    );
                }
            }
        }
        let filter = match &self.overflow {
            ContextOverflow::Disabled => None,
            ContextOverflow::Auto => Some(MessageFilter::trim()),
            ContextOverflow::Filter(f) => Some(f.clone()),
        };
        if let Some(filter) = filter {
            let before = previous.len();
            state.messages.set(filter.apply(previous).await);
            if state.messages.len() < before {
                info(
                    cx,
                    "Agent exceeded model context window, truncating messages and continuing.",
                );
                return Some(Recovery::Filter);
            }
        }
        info(cx, "Agent terminated: model context window exceeded");
        None
    }
}
