//! react's settings: the system prompt, attempts and scoring, the submit tool, what happens
//! after each turn, context overflow, and what react generates with.

use std::sync::{Arc, LazyLock};

use actuator_events::{Score, ScoreValue};
use actuator_model::{BoxFuture, CompactString, Model};
use actuator_tool_core::{ToolChoice, ToolDef};

use crate::context::RunContext;
use crate::error::AgentError;
use crate::filter::MessageFilter;
use crate::prompts::{
    DEFAULT_ASSISTANT_PROMPT, DEFAULT_HANDOFF_PROMPT, DEFAULT_INCORRECT_MESSAGE,
    DEFAULT_SUBMIT_PROMPT,
};
use crate::state::AgentState;

/// The parts of react's system message. Every part is optional; when all are empty there is no
/// system message (D11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPrompt {
    /// Agent-specific instructions, first.
    pub instructions: Option<String>,
    /// Included when any tool is a handoff.
    pub handoff_prompt: Option<String>,
    /// How to use tools and reason.
    pub assistant_prompt: Option<String>,
    /// How to submit (`{submit}` is the submit tool's name); unused when the assistant prompt
    /// has its own `{submit}`.
    pub submit_prompt: Option<String>,
}

impl Default for AgentPrompt {
    fn default() -> Self {
        AgentPrompt {
            instructions: None,
            handoff_prompt: Some(DEFAULT_HANDOFF_PROMPT.to_owned()),
            assistant_prompt: Some(DEFAULT_ASSISTANT_PROMPT.to_owned()),
            submit_prompt: Some(DEFAULT_SUBMIT_PROMPT.to_owned()),
        }
    }
}

impl AgentPrompt {
    /// No parts at all: no system message.
    pub fn none() -> Self {
        AgentPrompt {
            instructions: None,
            handoff_prompt: None,
            assistant_prompt: None,
            submit_prompt: None,
        }
    }

    /// The default prompt with these instructions first.
    pub fn instructions(text: impl Into<String>) -> Self {
        AgentPrompt {
            instructions: Some(text.into()),
            ..AgentPrompt::default()
        }
    }

    /// The system message text for these tools and submit tool name (§9.3), or `None` when every
    /// part is empty (D11).
    pub fn system_message(&self, has_handoff: bool, submit: Option<&str>) -> Option<String> {
        let mut lines: Vec<String> = Vec::new();
        let nonempty =
            |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_owned);
        if let Some(i) = nonempty(&self.instructions) {
            lines.push(i);
        }
        if has_handoff && let Some(h) = nonempty(&self.handoff_prompt) {
            lines.push(h);
        }
        if let Some(assistant) = nonempty(&self.assistant_prompt) {
            match (submit, nonempty(&self.submit_prompt)) {
                (Some(name), Some(submit_prompt)) if !assistant.contains("{submit}") => {
                    lines.push(format!(
                        "{assistant}\n{}",
                        submit_prompt.replace("{submit}", name)
                    ));
                }
                _ => lines.push(assistant.replace("{submit}", submit.unwrap_or("submit"))),
            }
        }
        if lines.is_empty() {
            None
        } else {
            Some(lines.join("\n\n"))
        }
    }
}

/// The system message of the default prompts with the default `submit` tool and no handoff,
/// rendered once for the process.
static DEFAULT_SYSTEM_MESSAGE: LazyLock<Option<String>> =
    LazyLock::new(|| AgentPrompt::default().system_message(false, Some("submit")));

/// A system message as an agent keeps it. The default one refers to the copy rendered once
/// above: a `CompactString` holds a `&'static str` as it is, so neither the agents built with
/// the default prompts nor their conversations copy its 600-odd bytes. Any other text is kept
/// as given.
pub(super) fn shared_system_message(text: String) -> CompactString {
    match DEFAULT_SYSTEM_MESSAGE.as_deref() {
        Some(default) if default == text => CompactString::const_new(default),
        _ => text.into(),
    }
}

impl From<&str> for AgentPrompt {
    fn from(s: &str) -> Self {
        AgentPrompt::instructions(s)
    }
}

impl From<String> for AgentPrompt {
    fn from(s: String) -> Self {
        AgentPrompt::instructions(s)
    }
}

/// Judges a submission within a react run: returns a [`Score`], whose value converted to a
/// number ([`AgentAttempts::score_value`]) is `1.0` when the answer is correct. (Not the
/// evaluation's scorer, which judges a whole sample after it ran.)
pub type AttemptScorer = Arc<dyn Fn(&AgentState) -> BoxFuture<'_, Score> + Send + Sync>;

/// Computes the message after an incorrect submission from the state and the whole score.
pub type IncorrectMessageFn =
    Arc<dyn for<'a> Fn(&'a AgentState, &'a Score) -> BoxFuture<'a, String> + Send + Sync>;

/// Converts a score's value to a number (default: the reference's `value_to_float`,
/// [`ScoreValue::as_f64`]).
pub type ScoreValueFn = Arc<dyn Fn(&ScoreValue) -> f64 + Send + Sync>;

/// What to tell the model after an incorrect submission.
#[derive(Clone)]
pub enum IncorrectMessage {
    /// A fixed text.
    Text(String),
    /// Computed from the state and the score.
    Fn(IncorrectMessageFn),
}

impl std::fmt::Debug for IncorrectMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IncorrectMessage::Text(t) => f.debug_tuple("Text").field(t).finish(),
            IncorrectMessage::Fn(_) => f.write_str("Fn"),
        }
    }
}

/// How many submissions the model gets, and how they are judged.
#[derive(Clone)]
pub struct AgentAttempts {
    /// Submissions allowed (at least 1).
    pub attempts: u32,
    /// What to say after an incorrect one.
    pub incorrect_message: IncorrectMessage,
    /// Judges submissions (required when `attempts > 1`).
    pub scorer: Option<AttemptScorer>,
    /// Turns a score's value into a number; `1.0` is correct.
    pub score_value: ScoreValueFn,
}

impl std::fmt::Debug for AgentAttempts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentAttempts")
            .field("attempts", &self.attempts)
            .field("incorrect_message", &self.incorrect_message)
            .field("scorer", &self.scorer.is_some())
            .finish()
    }
}

impl Default for AgentAttempts {
    fn default() -> Self {
        Self::new(1)
    }
}

impl AgentAttempts {
    /// `attempts` submissions with the default incorrect message.
    pub fn new(attempts: u32) -> Self {
        AgentAttempts {
            attempts,
            incorrect_message: IncorrectMessage::Text(DEFAULT_INCORRECT_MESSAGE.to_owned()),
            scorer: None,
            score_value: Arc::new(ScoreValue::as_f64),
        }
    }

    /// Judges submissions with `scorer`: a score whose value converts to `1.0` (`C`, `true`,
    /// `1`, …) is correct.
    ///
    /// ```
    /// use actuator_agent::{AgentState, react::AgentAttempts};
    /// use actuator_events::Score;
    /// let attempts = AgentAttempts::new(3).scorer(|state: &AgentState| {
    ///     let right = state.output().completion().contains("42");
    ///     Box::pin(async move { Score::new(if right { "C" } else { "I" }) })
    /// });
    /// assert_eq!(attempts.attempts, 3);
    /// ```
    #[must_use]
    pub fn scorer(
        mut self,
        scorer: impl Fn(&AgentState) -> BoxFuture<'_, Score> + Send + Sync + 'static,
    ) -> Self {
        self.scorer = Some(Arc::new(scorer));
        self
    }

    /// Converts score values with `f` instead of the reference's `value_to_float`.
    #[must_use]
    pub fn score_value(mut self, f: impl Fn(&ScoreValue) -> f64 + Send + Sync + 'static) -> Self {
        self.score_value = Arc::new(f);
        self
    }

    /// Says `message` after an incorrect submission.
    #[must_use]
    pub fn incorrect_message(mut self, message: IncorrectMessage) -> Self {
        self.incorrect_message = message;
        self
    }
}

impl From<u32> for AgentAttempts {
    fn from(n: u32) -> Self {
        AgentAttempts::new(n)
    }
}

/// The submit tool.
#[derive(Debug, Clone)]
pub struct AgentSubmit {
    /// Its name (default `submit`).
    pub name: Option<String>,
    /// Its description (default `Submit an answer for evaluation.`).
    pub description: Option<String>,
    /// A custom tool to use instead of the default.
    pub tool: Option<ToolDef>,
    /// Whether the completion is the answer alone (else the message text, the delimiter, and the
    /// answer).
    pub answer_only: bool,
    /// Between the message text and the answer (default `"\n\n"`).
    pub answer_delimiter: String,
    /// Whether submit calls stay in the final messages.
    pub keep_in_messages: bool,
}

impl Default for AgentSubmit {
    fn default() -> Self {
        AgentSubmit {
            name: None,
            description: None,
            tool: None,
            answer_only: false,
            answer_delimiter: "\n\n".to_owned(),
            keep_in_messages: false,
        }
    }
}

/// What `on_continue` decides after a turn.
#[derive(Debug, Clone)]
// Returned once per turn: boxing the state would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum ContinueDecision {
    /// Go on (after a text-only turn, the default continue prompt is sent).
    Continue,
    /// Stop the loop.
    Stop,
    /// Go on, sending this user message (`{submit}` is replaced), even after tool calls.
    Message(String),
    /// Go on from this state.
    State(AgentState),
}

/// Decides, after every turn, whether and how the loop goes on.
pub type OnContinueFn = Arc<dyn Fn(&AgentState) -> BoxFuture<'_, ContinueDecision> + Send + Sync>;

/// What happens after each turn.
#[derive(Clone)]
pub enum OnContinue {
    /// After a text-only turn, send this user message (`{submit}` is replaced). Only with a
    /// submit tool.
    Text(String),
    /// Called after every turn.
    Fn(OnContinueFn),
}

impl std::fmt::Debug for OnContinue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OnContinue::Text(t) => f.debug_tuple("Text").field(t).finish(),
            OnContinue::Fn(_) => f.write_str("Fn"),
        }
    }
}

/// What react does when the conversation no longer fits the model's context window (a
/// `model_length` stop): the reference's `truncation` parameter.
#[doc(alias = "truncation")]
#[derive(Debug, Clone, Default)]
pub enum ContextOverflow {
    /// Stop.
    #[default]
    Disabled,
    /// Trim the conversation ([`trim_messages`](crate::filter::trim_messages), keeping 70%).
    Auto,
    /// Apply this filter.
    Filter(MessageFilter),
}

/// An agent used as react's model: it receives the state and the tools, and returns the state
/// with the next assistant message appended (and the output set).
pub trait ModelAgent: Send + Sync {
    /// Its name.
    fn name(&self) -> &str;
    /// Generates the next turn.
    fn generate(
        &self,
        state: AgentState,
        tools: Vec<ToolDef>,
        cx: RunContext,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>>;
}

/// The tool choice of each turn of a react agent: the same every turn, or chosen per turn
/// (a small local model often needs its first tool forced). Set with
/// [`ReactBuilder::tool_choice`](super::ReactBuilder::tool_choice).
///
/// ```
/// use actuator_agent::react::ReactToolChoice;
/// use actuator_tool_core::ToolChoice;
///
/// // Force `search` on the first turn, then let the model choose.
/// let choice = ReactToolChoice::per_turn(|turn, _state| {
///     if turn == 1 { ToolChoice::function("search") } else { ToolChoice::Auto }
/// });
/// # let _ = choice;
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum ReactToolChoice {
    /// The same choice every turn (default `auto`).
    Fixed(ToolChoice),
    /// Chosen before each generation from the turn (1-based, counted within the agent's run)
    /// and the state so far.
    PerTurn(ToolChoiceFn),
}

/// Chooses a turn's tool choice from the turn (1-based) and the state so far.
pub type ToolChoiceFn = Arc<dyn Fn(u32, &AgentState) -> ToolChoice + Send + Sync>;

impl ReactToolChoice {
    /// A choice made per turn by `f(turn, state)`.
    pub fn per_turn(f: impl Fn(u32, &AgentState) -> ToolChoice + Send + Sync + 'static) -> Self {
        ReactToolChoice::PerTurn(Arc::new(f))
    }

    /// The choice for `turn` (1-based) of a run whose state is `state`.
    pub fn for_turn(&self, turn: u32, state: &AgentState) -> ToolChoice {
        match self {
            ReactToolChoice::Fixed(choice) => choice.clone(),
            ReactToolChoice::PerTurn(f) => f(turn, state),
        }
    }
}

impl Default for ReactToolChoice {
    fn default() -> Self {
        ReactToolChoice::Fixed(ToolChoice::Auto)
    }
}

impl From<ToolChoice> for ReactToolChoice {
    fn from(choice: ToolChoice) -> Self {
        ReactToolChoice::Fixed(choice)
    }
}

impl std::fmt::Debug for ReactToolChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReactToolChoice::Fixed(c) => f.debug_tuple("Fixed").field(c).finish(),
            ReactToolChoice::PerTurn(_) => f.write_str("PerTurn"),
        }
    }
}

/// The model react generates with.
#[derive(Clone)]
pub enum ReactModel {
    /// A model.
    Model(Arc<dyn Model>),
    /// An agent used as the model.
    Agent(Arc<dyn ModelAgent>),
}
