//! Compaction: shrinking what the model sees as the conversation nears the context window,
//! while the full history stays in the state.
//!
//! A [`CompactionStrategy`] turns a message list into a smaller one (and optionally a message
//! to keep in the history, such as a summary). The [`Compactor`] decides when to run it (before
//! each generation, when the input nears a threshold, or forced after a `model_length` stop),
//! keeps the compacted view between turns, and always keeps system and input messages.

use std::sync::Arc;

use actuator_events::{CompactionEvent, Event};
use actuator_model::{BoxFuture, ChatMessage, Model, ModelOutput};
use actuator_tool_core::ToolInfo;

use crate::context::RunContext;
use crate::error::AgentError;
use crate::filter::partition_messages;

/// When compaction starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompactionThreshold {
    /// A share of the model's context window (default 0.9). Models that do not report a
    /// context window are then only compacted when forced.
    Ratio(f64),
    /// An absolute number of input tokens.
    Tokens(u64),
}

impl Default for CompactionThreshold {
    fn default() -> Self {
        CompactionThreshold::Ratio(0.9)
    }
}

/// The result of one compaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compacted {
    /// What the model is shown instead of the conversation.
    pub input: Vec<ChatMessage>,
    /// A message to append to the history as well (for example, a summary).
    pub message: Option<ChatMessage>,
}

/// A way to compact a conversation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a compaction strategy",
    note = "use `CompactionEdit`, `CompactionTrim` or `CompactionSummary`, or implement `CompactionStrategy`"
)]
pub trait CompactionStrategy: Send + Sync {
    /// A short name for events (`edit`, `trim`, `summary`).
    fn name(&self) -> &str;

    /// When compaction starts.
    fn threshold(&self) -> CompactionThreshold {
        CompactionThreshold::default()
    }

    /// Compacts `messages` (the input the model would otherwise see). `cx` is the run's
    /// context inside the compaction span: a strategy that generates (a summary) calls the
    /// model through [`RunContext::generate`], so that generation is recorded and limited like
    /// any other.
    fn compact<'a>(
        &'a self,
        model: &'a dyn Model,
        messages: &'a [ChatMessage],
        tools: &'a [Arc<ToolInfo>],
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<Compacted, AgentError>>;
}

/// Runs a strategy for one agent run and keeps the compacted view between turns.
pub struct Compactor {
    strategy: Arc<dyn CompactionStrategy>,
    /// System and input messages: always part of the input.
    prefix: Vec<ChatMessage>,
    /// The compacted input and how much of the history it stands for.
    view: Option<(Vec<ChatMessage>, usize)>,
    /// The last generation's reported input tokens and input length.
    calibration: Option<(u64, usize)>,
}

impl std::fmt::Debug for Compactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compactor")
            .field("strategy", &self.strategy.name())
            .field("prefix", &self.prefix.len())
            .field("compacted", &self.view.is_some())
            .finish()
    }
}

impl Compactor {
    /// A compactor for a run starting from `messages` (their system and input messages are
    /// the prefix every compacted input keeps).
    pub fn new(strategy: Arc<dyn CompactionStrategy>, messages: &[ChatMessage]) -> Self {
        let p = partition_messages(messages.to_vec());
        let mut prefix = p.system;
        prefix.extend(p.input);
        Compactor {
            strategy,
            prefix,
            view: None,
            calibration: None,
        }
    }

    /// The input the model would see now, without compacting.
    pub fn current_input(&self, history: &[ChatMessage]) -> Vec<ChatMessage> {
        match &self.view {
            Some((view, covered)) if *covered <= history.len() => {
                let mut input = view.clone();
                input.extend_from_slice(&history[*covered..]);
                input
            }
            _ => history.to_vec(),
        }
    }

    /// Estimated tokens of `input`: the last reported input tokens plus an estimate for what
    /// was added since, or the model's estimate of the whole.
    pub fn estimate(&self, model: &dyn Model, input: &[ChatMessage]) -> u64 {
        match self.calibration {
            Some((tokens, len)) if len <= input.len() => tokens + model.count_tokens(&input[len..]),
            _ => model.count_tokens(input),
        }
    }

    /// Records a generation's reported usage, to calibrate later estimates.
    pub fn record_output(&mut self, input_len: usize, output: &ModelOutput) {
        if let Some(u) = &output.usage
            && u.input_tokens > 0
        {
            self.calibration = Some((u.input_tokens, input_len));
        }
    }

    fn over_threshold(&self, model: &dyn Model, tokens: u64) -> bool {
        match self.strategy.threshold() {
            CompactionThreshold::Tokens(n) => tokens >= n,
            CompactionThreshold::Ratio(r) => model
                .context_window()
                .is_some_and(|w| tokens as f64 >= r * w as f64),
        }
    }

    /// The input for the next generation, compacting first when it is over the threshold (or
    /// `force`). Returns the input and a message to append to the history, if the strategy
    /// made one.
    pub async fn compact_input(
        &mut self,
        model: &dyn Model,
        history: &[ChatMessage],
        tools: &[Arc<ToolInfo>],
        force: bool,
        cx: &RunContext,
    ) -> Result<(Vec<ChatMessage>, Option<ChatMessage>), AgentError> {
        let input = self.current_input(history);
        let before = self.estimate(model, &input);
        if !force && !self.over_threshold(model, before) {
            return Ok((input, None));
        }
        let strategy = &*self.strategy;
        let shown = &input;
        let compacted = cx
            .in_span("compaction", strategy.name(), |cx| async move {
                strategy.compact(model, shown, tools, &cx).await
            })
            .await?;
        let mut out: Vec<ChatMessage> =
            Vec::with_capacity(compacted.input.len() + self.prefix.len());
        for m in &self.prefix {
            if !compacted.input.iter().any(|c| c.id() == m.id()) {
                out.push(m.clone());
            }
        }
        out.extend(compacted.input);
        // The summary (if any) is appended to the history; the view already holds it.
        let covered = history.len() + usize::from(compacted.message.is_some());
        if let Some(m) = &compacted.message
            && !out.iter().any(|c| c.id() == m.id())
        {
            out.push(m.clone());
        }
        self.calibration = None;
        let after = model.count_tokens(&out);
        cx.emit(Event::Compaction(CompactionEvent {
            strategy: self.strategy.name().to_owned(),
            trigger: if force { "forced" } else { "threshold" }.to_owned(),
            tokens_before: before,
            tokens_after: after,
            messages_before: input.len(),
            messages_after: out.len(),
        }));
        self.view = Some((out.clone(), covered));
        Ok((out, compacted.message))
    }
}

mod edit;
pub use edit::{CompactionEdit, TOOL_RESULT_REMOVED};

mod trim;
pub use trim::CompactionTrim;

mod summary;
pub use summary::{CompactionSummary, DEFAULT_SUMMARY_PROMPT, MEMORY_SUMMARY_ADDENDUM};
