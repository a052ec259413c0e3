//! The react agent (§9): generate, land the calls, read the results, repeat until an answer is
//! submitted.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use actuator_exec::{ApprovalPolicy, ConversationHandler, ExecuteOptions, execute_tools};
use actuator_events::{Event, InfoEvent, ModelEvent, unix_seconds};
use actuator_model::{
    BoxFuture, ChatMessage, GenerateConfig, MessageContent, Model, ModelOutput, StopReason,
};
use actuator_tool_core::{
    Content, Extensions, ToolArgs, ToolChoice, ToolContext, ToolDef, ToolFailure, ToolInfo,
    ToolParams,
};
use serde_json::{Map, Value, json};

use crate::agent::{Agent, AgentError, AgentErrorKind};
use crate::compaction::{CompactionStrategy, Compactor};
use crate::filter::MessageFilter;
use crate::limits::RunContext;
use crate::prompts::{
    DEFAULT_ASSISTANT_PROMPT, DEFAULT_CONTINUE_PROMPT, DEFAULT_CONTINUE_PROMPT_NO_SUBMIT,
    DEFAULT_HANDOFF_PROMPT, DEFAULT_INCORRECT_MESSAGE, DEFAULT_SUBMIT_DESCRIPTION,
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

/// Judges a submission: returns the score's value, where `1.0` means correct.
pub type Scorer = Arc<dyn Fn(&AgentState) -> BoxFuture<'_, f64> + Send + Sync>;

/// Computes the message after an incorrect submission from the state and the score's value.
pub type IncorrectMessageFn = Arc<dyn Fn(&AgentState, f64) -> BoxFuture<'_, String> + Send + Sync>;

/// What to tell the model after an incorrect submission.
#[derive(Clone)]
pub enum IncorrectMessage {
    /// A fixed text.
    Text(String),
    /// Computed from the state and the score's value.
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
    pub scorer: Option<Scorer>,
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
        }
    }

    /// Judges submissions with `scorer` (a score of `1.0` is correct).
    #[must_use]
    pub fn scorer(
        mut self,
        scorer: impl Fn(&AgentState) -> BoxFuture<'_, f64> + Send + Sync + 'static,
    ) -> Self {
        self.scorer = Some(Arc::new(scorer));
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

/// What to do when the conversation no longer fits the context window.
#[derive(Debug, Clone, Default)]
pub enum Truncation {
    /// Stop.
    #[default]
    Disabled,
    /// Trim the conversation ([`trim_messages`](crate::trim_messages), keeping 70%).
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

/// The model react generates with.
#[derive(Clone)]
pub enum ReactModel {
    /// A model.
    Model(Arc<dyn Model>),
    /// An agent used as the model.
    Agent(Arc<dyn ModelAgent>),
}

/// Builds a react agent. Start with [`react`].
#[derive(Clone, Default)]
pub struct ReactBuilder {
    name: Option<String>,
    description: Option<String>,
    prompt: Option<AgentPrompt>,
    tools: Vec<ToolDef>,
    model: Option<ReactModel>,
    attempts: AgentAttempts,
    submit: Option<AgentSubmit>,
    no_submit: bool,
    on_continue: Option<OnContinue>,
    retry_refusals: Option<u32>,
    compaction: Option<Arc<dyn CompactionStrategy>>,
    truncation: Truncation,
    approval: Vec<ApprovalPolicy>,
    max_output: Option<usize>,
    max_concurrency: Option<usize>,
    config: GenerateConfig,
}

/// Starts building a react agent.
///
/// ```
/// use std::sync::Arc;
/// use actuator_agent::{react, run};
/// use actuator_model::{ModelOutput, ScriptedModel};
///
/// let model = ScriptedModel::new([ModelOutput::for_tool_call("", "submit", serde_json::json!({"answer": "4"}))]);
/// let agent = react().model(Arc::new(model)).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let out = run(&agent, "What is 2 + 2?", &[]).await.unwrap();
/// assert_eq!(out.state.output().completion(), "4");
/// # });
/// ```
pub fn react() -> ReactBuilder {
    ReactBuilder::default()
}

impl ReactBuilder {
    /// The display name (default `react`).
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// What the agent does (for handoff and `as_tool`).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The system prompt (a string becomes the instructions of the default prompt).
    #[must_use]
    pub fn prompt(mut self, prompt: impl Into<AgentPrompt>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// No system message at all.
    #[must_use]
    pub fn no_prompt(mut self) -> Self {
        self.prompt = Some(AgentPrompt::none());
        self
    }

    /// The tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDef>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// The model.
    #[must_use]
    pub fn model(mut self, model: Arc<dyn Model>) -> Self {
        self.model = Some(ReactModel::Model(model));
        self
    }

    /// An agent used as the model.
    #[must_use]
    pub fn model_agent(mut self, agent: Arc<dyn ModelAgent>) -> Self {
        self.model = Some(ReactModel::Agent(agent));
        self
    }

    /// Submissions allowed and how they are judged.
    #[must_use]
    pub fn attempts(mut self, attempts: impl Into<AgentAttempts>) -> Self {
        self.attempts = attempts.into();
        self
    }

    /// The submit tool's settings.
    #[must_use]
    pub fn submit(mut self, submit: AgentSubmit) -> Self {
        self.submit = Some(submit);
        self.no_submit = false;
        self
    }

    /// No submit tool: the agent ends on its first turn without tool calls.
    #[must_use]
    pub fn no_submit(mut self) -> Self {
        self.no_submit = true;
        self
    }

    /// What happens after each turn.
    #[must_use]
    pub fn on_continue(mut self, on_continue: OnContinue) -> Self {
        self.on_continue = Some(on_continue);
        self
    }

    /// Regenerates up to `n` times when the model refuses (`content_filter`).
    #[must_use]
    pub fn retry_refusals(mut self, n: u32) -> Self {
        self.retry_refusals = Some(n);
        self
    }

    /// Compacts the model's input as it nears the context window.
    #[must_use]
    pub fn compaction(mut self, strategy: Arc<dyn CompactionStrategy>) -> Self {
        self.compaction = Some(strategy);
        self
    }

    /// What to do when the context window overflows.
    #[must_use]
    pub fn truncation(mut self, truncation: Truncation) -> Self {
        self.truncation = truncation;
        self
    }

    /// Approval policies for the agent's tool calls.
    #[must_use]
    pub fn approval(mut self, policies: impl IntoIterator<Item = ApprovalPolicy>) -> Self {
        self.approval.extend(policies);
        self
    }

    /// The output limit for tools without their own.
    #[must_use]
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// The most calls of a parallel stage that run at once.
    #[must_use]
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// Generation settings.
    #[must_use]
    pub fn config(mut self, config: GenerateConfig) -> Self {
        self.config = config;
        self
    }

    /// Checks the settings and builds the agent.
    pub fn build(self) -> Result<ReactAgent, AgentError> {
        let model = self.model.ok_or_else(|| {
            AgentError::config("react() needs a model: call .model(...) or .model_agent(...).")
        })?;
        if self.no_submit && matches!(self.on_continue, Some(OnContinue::Text(_))) {
            return Err(AgentError::config(
                "Passing a string to on_continue with no submit tool is not permitted, because in this case the agent will always terminate when no tool calls are made.",
            ));
        }
        if self.attempts.attempts == 0 {
            return Err(AgentError::config("attempts must be at least 1."));
        }
        if self.attempts.attempts > 1 && self.attempts.scorer.is_none() {
            return Err(AgentError::config(
                "attempts > 1 needs a scorer to judge submissions: use AgentAttempts::new(n).scorer(...).",
            ));
        }
        let mut tools = self.tools;
        let submit = if self.no_submit {
            None
        } else {
            let settings = self.submit.unwrap_or_default();
            let tool = submit_tool(&settings).map_err(|e| AgentError::config(e.to_string()))?;
            let name = tool.name().to_owned();
            tools.push(tool);
            Some(SubmitSettings {
                name,
                answer_only: settings.answer_only,
                delimiter: settings.answer_delimiter,
                keep_in_messages: settings.keep_in_messages,
            })
        };
        actuator_exec::check_tool_names(&tools).map_err(|e| AgentError::config(e.to_string()))?;
        for tool in &tools {
            tool.check()
                .map_err(|e| AgentError::config(e.to_string()))?;
        }
        let has_handoff = tools
            .iter()
            .any(|t| t.extensions().get::<ConversationHandler>().is_some());
        let system_message = self
            .prompt
            .unwrap_or_default()
            .system_message(has_handoff, submit.as_ref().map(|s| s.name.as_str()));
        let infos = tools.iter().map(ToolDef::info_arc).collect();
        Ok(ReactAgent {
            name: self.name.unwrap_or_else(|| "react".to_owned()),
            description: self.description,
            system_message,
            tools,
            infos,
            model,
            attempts: self.attempts,
            submit,
            on_continue: self.on_continue,
            retry_refusals: self.retry_refusals,
            compaction: self.compaction,
            truncation: self.truncation,
            approval: self.approval,
            max_output: self.max_output,
            max_concurrency: self.max_concurrency,
            config: self.config,
        })
    }
}

/// The default submit tool, built once per process and shared (its schema and validator are
/// the same for every agent).
fn default_submit_tool() -> Result<ToolDef, actuator_tool_core::ToolDefError> {
    static DEFAULT: std::sync::OnceLock<Result<ToolDef, actuator_tool_core::ToolDefError>> =
        std::sync::OnceLock::new();
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
fn submit_tool(settings: &AgentSubmit) -> Result<ToolDef, actuator_tool_core::ToolDefError> {
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

#[derive(Debug, Clone)]
struct SubmitSettings {
    name: String,
    answer_only: bool,
    delimiter: String,
    keep_in_messages: bool,
}

/// A react agent. Build one with [`react`].
pub struct ReactAgent {
    name: String,
    description: Option<String>,
    system_message: Option<String>,
    tools: Vec<ToolDef>,
    infos: Vec<Arc<ToolInfo>>,
    model: ReactModel,
    attempts: AgentAttempts,
    submit: Option<SubmitSettings>,
    on_continue: Option<OnContinue>,
    retry_refusals: Option<u32>,
    compaction: Option<Arc<dyn CompactionStrategy>>,
    truncation: Truncation,
    approval: Vec<ApprovalPolicy>,
    max_output: Option<usize>,
    max_concurrency: Option<usize>,
    config: GenerateConfig,
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

enum Recovery {
    Compaction,
    Filter,
}

/// Fails with the state kept.
fn fail(kind: impl Into<AgentErrorKind>, state: &AgentState) -> AgentError {
    AgentError::with_state(kind, state.clone())
}

impl ReactAgent {
    /// The tools offered (including the submit tool).
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

    fn exec_options(&self, cx: &RunContext) -> ExecuteOptions {
        let mut extensions = Extensions::new();
        extensions.insert(cx.clone());
        ExecuteOptions {
            max_output: self.max_output.or(self.config.max_tool_output),
            max_concurrency: self.max_concurrency,
            approval: self.approval.clone(),
            events: cx.events().cloned(),
            extensions,
        }
    }

    /// Generates one turn: appends the assistant message and sets the output.
    async fn generate(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        compactor: Option<&mut Compactor>,
    ) -> Result<(), AgentError> {
        cx.check_messages(state.messages.len(), true)
            .map_err(|e| fail(e, state))?;
        let model = match &self.model {
            ReactModel::Agent(agent) => {
                let taken = std::mem::take(state);
                *state = agent
                    .generate(taken, self.tools.clone(), cx.clone())
                    .await?;
                return Ok(());
            }
            ReactModel::Model(m) => m.as_ref(),
        };
        let mut compactor = compactor;
        let compacted = match compactor.as_deref_mut() {
            Some(c) => {
                let (input, message) = c
                    .compact_input(model, &state.messages, &self.infos, false, cx)
                    .await
                    .map_err(|e| AgentError {
                        state: Some(Box::new(state.clone())),
                        ..e
                    })?;
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
            let started = SystemTime::now();
            let clock = Instant::now();
            let result = cx
                .guard(model.generate(input, &self.infos, &ToolChoice::Auto, &self.config))
                .await
                .map_err(|e| fail(e, state))?;
            if let Some(sink) = cx.events() {
                sink.emit(Event::Model(Box::new(ModelEvent {
                    model: model.name().to_owned(),
                    input: input.to_vec(),
                    tools: self.infos.iter().map(|t| (**t).clone()).collect(),
                    tool_choice: ToolChoice::Auto,
                    config: self.config.clone(),
                    output: result.as_ref().ok().cloned(),
                    error: result.as_ref().err().map(ToString::to_string),
                    started_at: unix_seconds(started),
                    completed_at: unix_seconds(SystemTime::now()),
                    working_time: clock.elapsed().as_secs_f64(),
                })));
            }
            let output = result.map_err(|e| fail(e, state))?;
            let refused = output.stop_reason() == Some(StopReason::ContentFilter);
            if refused && self.retry_refusals.is_some_and(|n| refusals < n) {
                refusals += 1;
                continue;
            }
            break output;
        };
        let input_len = input.len();
        cx.record_generation(output.usage.as_ref())
            .map_err(|e| fail(e, state))?;
        if let Some(c) = compactor {
            c.record_output(input_len, &output);
        }
        let Some(message) = output.message().cloned() else {
            return Err(fail(
                AgentErrorKind::Failed("The model returned no choices.".into()),
                state,
            ));
        };
        state.messages.push(ChatMessage::Assistant(message));
        state.set_output(output);
        cx.check_messages(state.messages.len(), false)
            .map_err(|e| fail(e, state))?;
        Ok(())
    }

    /// §9.6: drop the failed turn, then try forced compaction, then the truncation filter.
    async fn handle_overflow(
        &self,
        state: &mut AgentState,
        cx: &RunContext,
        compactor: Option<&mut Compactor>,
        compaction_allowed: bool,
    ) -> Option<Recovery> {
        let mut previous = state.messages.clone();
        previous.pop();
        if let (Some(c), true, ReactModel::Model(model)) =
            (compactor, compaction_allowed, &self.model)
        {
            match c
                .compact_input(model.as_ref(), &previous, &self.infos, true, cx)
                .await
            {
                Ok((_, message)) => {
                    state.messages = previous;
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
        let filter = match &self.truncation {
            Truncation::Disabled => None,
            Truncation::Auto => Some(MessageFilter::trim()),
            Truncation::Filter(f) => Some(f.clone()),
        };
        if let Some(filter) = filter {
            let before = previous.len();
            state.messages = filter.apply(previous).await;
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

    /// Records a submission in the output and (unless submit calls are kept) in the message
    /// that made it.
    fn apply_submission(&self, state: &mut AgentState, submit: &SubmitSettings, answer: &str) {
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
                    *t = format!("{t}{}{answer}", submit.delimiter).trim().to_owned();
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

    async fn execute(
        &self,
        mut state: AgentState,
        cx: RunContext,
    ) -> Result<AgentState, AgentError> {
        if let Some(system) = &self.system_message {
            state
                .messages
                .insert(0, ChatMessage::system(system.clone()));
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
        let mut attempt_count = 0u32;
        let mut consecutive_refusals = 0u32;
        let mut overflow_compacted = false;
        loop {
            cx.check_time().map_err(|e| fail(e, &state))?;
            self.generate(&mut state, &cx, compactor.as_mut()).await?;
            let output = state.output();
            let stop = output.stop_reason();
            if stop == Some(StopReason::ModelLength) {
                match self
                    .handle_overflow(&mut state, &cx, compactor.as_mut(), !overflow_compacted)
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
            if stop == Some(StopReason::ContentFilter) {
                consecutive_refusals += 1;
                if consecutive_refusals >= 3 {
                    break;
                }
            } else {
                consecutive_refusals = 0;
            }

            let called_tools = output.message().is_some_and(|m| !m.calls().is_empty());
            if called_tools {
                let result = cx
                    .guard(execute_tools(&state.messages, &self.tools, &exec_options))
                    .await
                    .map_err(|e| fail(e, &state))?
                    .map_err(|e| fail(exec_error_kind(e), &state))?;
                cx.record_waiting(result.waiting);
                let answer = self
                    .submit
                    .as_ref()
                    .and_then(|s| submission(&result.messages, &s.name));
                state.messages.extend(result.messages);
                if let Some(o) = result.output {
                    state.set_output(o);
                }
                cx.check_messages(state.messages.len(), false)
                    .map_err(|e| fail(e, &state))?;
                if let (Some(submit), Some(answer)) = (&self.submit, answer) {
                    self.apply_submission(&mut state, submit, &answer);
                    attempt_count += 1;
                    if attempt_count >= self.attempts.attempts {
                        break;
                    }
                    let score = match &self.attempts.scorer {
                        Some(scorer) => scorer(&state).await,
                        None => 1.0,
                    };
                    if score == 1.0 {
                        break;
                    }
                    let message = match &self.attempts.incorrect_message {
                        IncorrectMessage::Text(t) => t.clone(),
                        IncorrectMessage::Fn(f) => f(&state, score).await,
                    };
                    state.messages.push(ChatMessage::user(message));
                    cx.check_messages(state.messages.len(), false)
                        .map_err(|e| fail(e, &state))?;
                }
            }

            let submit_name = self.submit.as_ref().map_or("submit", |s| s.name.as_str());
            let continue_prompt = if self.submit.is_some() {
                DEFAULT_CONTINUE_PROMPT
            } else {
                DEFAULT_CONTINUE_PROMPT_NO_SUBMIT
            };
            match &self.on_continue {
                Some(OnContinue::Fn(f)) => match f(&state).await {
                    ContinueDecision::Continue => {
                        if !called_tools {
                            state.messages.push(ChatMessage::user(
                                continue_prompt.replace("{submit}", submit_name),
                            ));
                        }
                    }
                    ContinueDecision::Message(text) => {
                        state
                            .messages
                            .push(ChatMessage::user(text.replace("{submit}", submit_name)));
                    }
                    ContinueDecision::State(new_state) => state = new_state,
                    ContinueDecision::Stop => break,
                },
                Some(OnContinue::Text(text)) => {
                    if !called_tools {
                        state
                            .messages
                            .push(ChatMessage::user(text.replace("{submit}", submit_name)));
                    }
                }
                None => {
                    if !called_tools {
                        if self.submit.is_none() {
                            break;
                        }
                        state.messages.push(ChatMessage::user(
                            continue_prompt.replace("{submit}", submit_name),
                        ));
                    }
                }
            }
            cx.check_messages(state.messages.len(), false)
                .map_err(|e| fail(e, &state))?;
        }
        if let Some(submit) = &self.submit
            && !submit.keep_in_messages
        {
            state.messages = remove_submit_tool(std::mem::take(&mut state.messages), &submit.name);
        }
        Ok(state)
    }
}

/// A fatal tool failure caused by an enclosing scope's limit (hit inside a tool that runs an
/// agent) is that limit, so the scope it belongs to catches it (D9).
fn exec_error_kind(e: actuator_exec::ExecError) -> AgentErrorKind {
    if let actuator_exec::ExecError::Fatal { cause, .. } = &e
        && let Some(limit) = cause.downcast_ref::<crate::limits::LimitExceeded>()
    {
        return AgentErrorKind::Limit(limit.clone());
    }
    AgentErrorKind::Exec(e)
}

fn info(cx: &RunContext, message: &str) {
    tracing::info!("{message}");
    cx.emit(Event::Info(InfoEvent {
        source: Some("react".to_owned()),
        message: message.to_owned(),
    }));
}

/// The text of the first error-free result of the submit tool, if any.
fn submission(messages: &[ChatMessage], submit_name: &str) -> Option<String> {
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

impl Agent for ReactAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> Option<&str> {
        self.description.as_deref()
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

/// A [`ModelOutput`] helper for tests and examples: the output of a turn that submits `answer`.
pub fn submit_output(answer: &str) -> ModelOutput {
    ModelOutput::for_tool_call("", "submit", json!({ "answer": answer }))
}
