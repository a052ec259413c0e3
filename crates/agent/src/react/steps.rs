//! The react loop (§9.4): generate, handle a context overflow, land the calls and look for a
//! submission, then ask `on_continue` how to go on; with an operator's channel and
//! checkpoints when the run has them.

use std::sync::Arc;

use actuator_events::{Interrupted, SharedMessages};
use actuator_exec::ExecuteOptions;
use actuator_model::{ChatMessage, StopReason, ToolCall};
use actuator_tool_core::{ToolDef, ToolErrorKind};

use super::config::{ContinueDecision, IncorrectMessage, OnContinue, ReactModel};
use super::submit::{apply_submission, remove_submit_tool, submission};
use crate::channel::{AgentChannel, ChannelBinding, unanswered_calls};
use crate::checkpoint::{Checkpoints, LoopCounters};
use crate::compaction::Compactor;
use crate::context::RunContext;
use crate::error::{AgentError, AgentErrorKind};
use crate::prompts::{DEFAULT_CONTINUE_PROMPT, DEFAULT_CONTINUE_PROMPT_NO_SUBMIT};
use crate::state::AgentState;

use super::agent::{ReactAgent, fail};
use super::turn::Recovery;

/// What the turn's tool calls amounted to.
enum Landed {
    /// No submission (or none that ends the loop): go on.
    Continue,
    /// The answer was accepted, or the attempts are used up.
    Done,
}

impl ReactAgent {
    /// §9.4 step 3: runs the turn's tool calls, appends their messages, and judges a
    /// submission (attempts, scorer, incorrect message).
    async fn land_calls(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        tools: &[ToolDef],
        options: &ExecuteOptions,
        attempt_count: &mut u32,
    ) -> Result<(Landed, Option<String>), AgentError> {
        let result = cx
            .execute_tools(&state.messages, tools, options)
            .await
            .map_err(|e| e.or_state(state))?;
        state.release_parsed_arguments();
        let malformed = malformed_turn(&result.messages);
        let answer = self
            .submit
            .as_ref()
            .and_then(|s| submission(&result.messages, &s.name));
        state.messages.extend(result.messages);
        if let Some(o) = result.output {
            state.set_output(o);
        }
        cx.check_messages(state.messages.len(), false)
            .map_err(|e| fail(e, state))?;
        let (Some(submit), Some(answer)) = (&self.submit, answer) else {
            return Ok((Landed::Continue, malformed));
        };
        apply_submission(state, submit, &answer);
        *attempt_count += 1;
        if *attempt_count >= self.attempts.attempts {
            return Ok((Landed::Done, malformed));
        }
        let Some(scorer) = &self.attempts.scorer else {
            return Ok((Landed::Done, malformed));
        };
        let score = scorer(state).await;
        if (self.attempts.score_value)(&score.value) == 1.0 {
            return Ok((Landed::Done, malformed));
        }
        let message = match &self.attempts.incorrect_message {
            IncorrectMessage::Text(t) => t.clone(),
            IncorrectMessage::Fn(f) => f(state, &score).await,
        };
        state.messages.push(ChatMessage::user(message));
        cx.check_messages(state.messages.len(), false)
            .map_err(|e| fail(e, state))?;
        Ok((Landed::Continue, malformed))
    }

    /// §9.4 step 4: what `on_continue` (or its default) decides after a turn. The default
    /// continue prompt follows a turn without tool calls; without a submit tool and without
    /// `on_continue`, such a turn ends the loop.
    async fn next_step(&self, state: &AgentState, called_tools: bool) -> ContinueDecision {
        match &self.on_continue {
            Some(OnContinue::Fn(f)) => f(state).await,
            Some(OnContinue::Text(text)) if !called_tools => {
                ContinueDecision::Message(text.clone())
            }
            None if self.submit.is_none() && !called_tools => ContinueDecision::Stop,
            _ => ContinueDecision::Continue,
        }
    }

    /// The user message a decision adds, if any (`{submit}` replaced by the tool's name).
    fn continue_message(&self, decision: &ContinueDecision, called_tools: bool) -> Option<String> {
        let submit_name = self.submit.as_ref().map_or("submit", |s| s.name.as_str());
        let text = match decision {
            ContinueDecision::Message(text) => text.as_str(),
            ContinueDecision::Continue if !called_tools => {
                if self.submit.is_some() {
                    DEFAULT_CONTINUE_PROMPT
                } else {
                    DEFAULT_CONTINUE_PROMPT_NO_SUBMIT
                }
            }
            _ => return None,
        };
        Some(text.replace("{submit}", submit_name))
    }

    pub(super) async fn execute(
        &self,
        mut state: AgentState,
        cx: RunContext,
    ) -> Result<AgentState, AgentError> {
        if let Some(system) = &self.system_message {
            state
                .messages
                .insert(0, ChatMessage::system(system.clone()));
        }
        // A run with checkpoints goes on from its last one, if it has one.
        let checkpoints = cx.resource::<Checkpoints>().and_then(Checkpoints::bind);
        let mut resumed_counters = LoopCounters::default();
        if let Some(checkpoints) = &checkpoints
            && let Some(resumed) = checkpoints
                .resume_with(&cx, &|call| {
                    self.tools
                        .iter()
                        .any(|t| t.name() == call.function && t.idempotent())
                })
                .await
        {
            if let Some(finished) = resumed.finished {
                return Ok(finished); // it had finished before the process died
            }
            state.messages.set(resumed.messages);
            resumed_counters = resumed.counters;
            if !resumed.rerun.is_empty() {
                self.rerun_calls(&mut state, &cx, &resumed.rerun).await?;
            }
        }
        let mut compactor = match (&self.compaction, &self.model) {
            (Some(strategy), ReactModel::Model(_)) => {
                Some(Compactor::new(Arc::clone(strategy), &state.messages))
            }
            (Some(_), ReactModel::Agent(_)) => {
                tracing::warn!(
                    "react: compaction is ignored when an agent is used as the model (the agent must compact itself)"
                );
                None
            }
            _ => None,
        };
        let exec_options = self.exec_options(&cx);
        let mut attempt_count = resumed_counters.attempts;
        let mut consecutive_refusals = resumed_counters.refusals;
        let mut overflow_compacted = false;
        // Turns in a row whose every call was malformed (not kept in checkpoints: a resumed
        // run counts afresh).
        let mut malformed_turns: u32 = 0;
        // What this conversation's model events recorded; started afresh whenever messages
        // are replaced or edited rather than appended (overflow recovery, a submission, a new
        // state from on_continue).
        let mut recorded = SharedMessages::new();
        let mut turn_number = resumed_counters.turn;
        // An operator's channel, when the run has one and no outer agent took it up.
        let channel = cx.resource::<AgentChannel>().and_then(AgentChannel::bind);
        loop {
            // 0. The operator's messages come first.
            if let Some(channel) = &channel {
                let posted = channel
                    .before_turn(&cx, &state.messages)
                    .await
                    .map_err(|e| fail(e, &state))?;
                state.messages.extend(posted);
            }
            if let Some(checkpoints) = &checkpoints {
                let counters = LoopCounters {
                    turn: turn_number,
                    attempts: attempt_count,
                    refusals: consecutive_refusals,
                };
                checkpoints
                    .turn_started(&cx, &state.messages, counters)
                    .await;
            }
            // 1. Generate the next turn.
            cx.check_time().map_err(|e| fail(e, &state))?;
            turn_number = turn_number.saturating_add(1);
            let turn = self.turn_tools(&cx, &state, turn_number).await?;
            let generated =
                self.generate(&mut state, &cx, &turn, compactor.as_mut(), &mut recorded);
            let generated = match &channel {
                None => Some(generated.await),
                Some(channel) => {
                    channel
                        .guard(&cx, Interrupted::Generate, None, generated)
                        .await
                }
            };
            match generated {
                Some(generated) => generated?,
                None => {
                    self.resume_after_interrupt(&mut state, &cx, channel.as_ref())
                        .await?;
                    continue;
                }
            }
            // Read in place: the output is the one just set (a copy only when derived).
            let derived;
            let output = match state.explicit_output() {
                Some(o) => o,
                None => {
                    derived = state.output();
                    &derived
                }
            };
            let stop = output.stop_reason();
            let called_tools = output.message().is_some_and(|m| !m.calls().is_empty());

            // 2. A context overflow: recover (forced compaction, then the filter) or stop.
            if stop == Some(StopReason::ModelLength) {
                recorded = SharedMessages::new();
                match self
                    .handle_overflow(
                        &mut state,
                        &cx,
                        &turn.infos,
                        compactor.as_mut(),
                        !overflow_compacted,
                    )
                    .await
                {
                    Some(Recovery::Compaction) => {
                        overflow_compacted = true;
                        continue;
                    }
                    Some(Recovery::Filter) => continue,
                    None => break,
                }
            }
            overflow_compacted = false;
            // Three refusals in a row end the loop.
            if stop == Some(StopReason::ContentFilter) {
                consecutive_refusals += 1;
                if consecutive_refusals >= 3 {
                    break;
                }
            } else {
                consecutive_refusals = 0;
            }

            // 3. Land the calls; an accepted submission ends the loop.
            if called_tools {
                if let Some(checkpoints) = &checkpoints {
                    let counters = LoopCounters {
                        turn: turn_number,
                        attempts: attempt_count,
                        refusals: consecutive_refusals,
                    };
                    checkpoints.journal(&cx, &state.messages, counters).await;
                }
                let attempts_before = attempt_count;
                let in_flight = channel
                    .as_ref()
                    .and_then(|_| unanswered_calls(&state.messages).into_iter().next());
                let landing = self.land_calls(
                    &mut state,
                    &cx,
                    &turn.tools,
                    &exec_options,
                    &mut attempt_count,
                );
                let landed = match &channel {
                    None => Some(landing.await),
                    Some(channel) => {
                        channel
                            .guard(&cx, Interrupted::ToolCall, in_flight, landing)
                            .await
                    }
                };
                let (landed, malformed) = match landed {
                    Some(landed) => landed?,
                    None => {
                        self.resume_after_interrupt(&mut state, &cx, channel.as_ref())
                            .await?;
                        continue;
                    }
                };
                // A model told its calls were malformed is asked again, a bounded number of
                // times in a row.
                match malformed {
                    Some(last) => {
                        malformed_turns = malformed_turns.saturating_add(1);
                        if self
                            .malformed_call_retries
                            .is_some_and(|retries| malformed_turns > retries)
                        {
                            let kind = AgentErrorKind::MalformedCalls {
                                turns: malformed_turns,
                                last,
                            };
                            return Err(fail(kind, &state));
                        }
                    }
                    None => malformed_turns = 0,
                }
                // The results are journaled at once: none runs again after a crash.
                if let Some(checkpoints) = &checkpoints {
                    let counters = LoopCounters {
                        turn: turn_number,
                        attempts: attempt_count,
                        refusals: consecutive_refusals,
                    };
                    checkpoints.journal(&cx, &state.messages, counters).await;
                }
                if attempt_count != attempts_before {
                    recorded = SharedMessages::new(); // the submission edited the history
                }
                if matches!(landed, Landed::Done) {
                    cx.record_submission();
                    break;
                }
            }

            // 4. Ask on_continue how to go on.
            let decision = self.next_step(&state, called_tools).await;
            if let Some(text) = self.continue_message(&decision, called_tools) {
                state.messages.push(ChatMessage::user(text));
            }
            match decision {
                ContinueDecision::Stop => break,
                ContinueDecision::State(new_state) => {
                    state = new_state;
                    state.attach(cx.budget());
                    recorded = SharedMessages::new();
                }
                ContinueDecision::Continue | ContinueDecision::Message(_) => {}
            }
            cx.check_messages(state.messages.len(), false)
                .map_err(|e| fail(e, &state))?;
        }
        // 5. Submit calls leave the final conversation (unless kept).
        if let Some(submit) = &self.submit
            && !submit.keep_in_messages
        {
            let messages = state.messages.take();
            state
                .messages
                .set(remove_submit_tool(messages, &submit.name));
        }
        if let Some(channel) = &channel {
            channel.publish(&state.messages);
        }
        if let Some(checkpoints) = &checkpoints {
            let counters = LoopCounters {
                turn: turn_number,
                attempts: attempt_count,
                refusals: consecutive_refusals,
            };
            checkpoints.finished(&cx, &state, counters).await;
        }
        Ok(state)
    }
}

/// The error the model was last told, when every call of the turn was malformed: its tool
/// messages all carry the reference's parsing error (arguments that are not JSON, or a tool
/// that does not exist).
fn malformed_turn(messages: &[ChatMessage]) -> Option<String> {
    let mut last = None;
    for message in messages {
        let ChatMessage::Tool(tool) = message else {
            continue;
        };
        match &tool.error {
            Some(error) if error.kind == ToolErrorKind::Parsing => {
                last = Some(error.message.clone());
            }
            _ => return None,
        }
    }
    last
}

impl ReactAgent {
    /// Runs again the calls of idempotent tools that were cut off by a crash: the last
    /// assistant message's `calls` only, their results added after those already there.
    async fn rerun_calls(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        calls: &[ToolCall],
    ) -> Result<(), AgentError> {
        let Some(at) = state
            .messages
            .iter()
            .rposition(|m| matches!(m, ChatMessage::Assistant(_)))
        else {
            return Ok(());
        };
        let mut pending: Vec<ChatMessage> = state.messages[..=at].to_vec();
        if let Some(ChatMessage::Assistant(assistant)) = pending.last_mut() {
            assistant.tool_calls = Some(calls.to_vec());
        }
        let options = self.exec_options(cx);
        let result = cx
            .execute_tools(&pending, &self.tools, &options)
            .await
            .map_err(|e| e.or_state(state))?;
        state.messages.extend(result.messages);
        cx.check_messages(state.messages.len(), false)
            .map_err(|e| fail(e, state))
    }

    /// After an operator's interrupt: answers the calls left without a result and appends the
    /// operator's next message (waited for).
    async fn resume_after_interrupt(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        channel: Option<&ChannelBinding>,
    ) -> Result<(), AgentError> {
        if let Some(channel) = channel {
            let resumed = channel
                .after_interrupt(cx, &state.messages)
                .await
                .map_err(|e| fail(e, state))?;
            state.messages.extend(resumed);
        }
        Ok(())
    }
}
