//! [`react`] and [`ReactBuilder`]: every setting of the reference's `react()`, checked when
//! the agent is built.

use std::sync::Arc;

use actuator_exec::{ApprovalPolicy, ReviewPolicy};
use actuator_model::{GenerateConfig, Model};
use actuator_tool_core::{ToolDef, ToolKind};

use super::agent::ReactAgent;
use super::config::{
    AgentAttempts, AgentPrompt, AgentSubmit, ContextOverflow, OnContinue, shared_system_message,
};
use super::config::{ModelAgent, ReactModel, ReactToolChoice};
use super::submit::{SubmitSettings, submit_tool};
use crate::compaction::CompactionStrategy;
use crate::error::AgentError;
#[cfg(doc)]
use crate::error::AgentErrorKind;
use actuator_tool_core::source::{ToolSet, ToolSource};

/// Builds a react agent. Start with [`react`].
#[derive(Clone, Default)]
pub struct ReactBuilder {
    name: Option<String>,
    description: Option<String>,
    prompt: Option<AgentPrompt>,
    tools: Vec<ToolDef>,
    sources: Vec<Arc<dyn ToolSource>>,
    model: Option<ReactModel>,
    attempts: AgentAttempts,
    submit: Option<AgentSubmit>,
    no_submit: bool,
    on_continue: Option<OnContinue>,
    retry_refusals: Option<u32>,
    malformed_call_retries: MalformedCallRetries,
    compaction: Option<Arc<dyn CompactionStrategy>>,
    overflow: ContextOverflow,
    approval: Vec<ApprovalPolicy>,
    review: Vec<ReviewPolicy>,
    max_output: Option<usize>,
    max_concurrency: Option<usize>,
    config: GenerateConfig,
    tool_choice: ReactToolChoice,
}

/// The default bound on re-asking a model whose tool calls are malformed turn after turn
/// ([`ReactBuilder::malformed_call_retries`]).
pub const DEFAULT_MALFORMED_CALL_RETRIES: u32 = 3;

/// [`ReactBuilder::malformed_call_retries`], defaulting to a bound.
#[derive(Clone, Copy)]
struct MalformedCallRetries(Option<u32>);

impl Default for MalformedCallRetries {
    fn default() -> Self {
        MalformedCallRetries(Some(DEFAULT_MALFORMED_CALL_RETRIES))
    }
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

    /// A source of tools that can change between turns (an MCP server's tools): asked once
    /// per turn, before the generation, and its tools are offered and run that turn beside
    /// the fixed tools. A source that fails to list, or a turn whose tools share a name (D7),
    /// ends the run with [`AgentErrorKind::Tools`](crate::AgentErrorKind::Tools), the state kept.
    #[must_use]
    pub fn tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// Fixed tools and sources together (see [`tool_source`](Self::tool_source)).
    #[must_use]
    pub fn tool_set(mut self, set: ToolSet) -> Self {
        self.tools.extend(set.fixed_tools().cloned());
        self.sources.extend(set.sources().cloned());
        self
    }

    /// The model: one by value (`ScriptedModel::new(..)`, a provider's model) or shared (an
    /// `Arc<dyn Model>`, kept as it is).
    #[must_use]
    pub fn model(mut self, model: impl Model + 'static) -> Self {
        self.model = Some(ReactModel::Model(actuator_model::shared_model(model)));
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

    /// How many turns in a row the model is told that its tool calls were malformed
    /// (arguments that are not JSON, a tool that does not exist: the reference's parsing
    /// error) before the run stops with [`AgentErrorKind::MalformedCalls`]; `None`: never
    /// stop for it, as the reference does. A turn with one well-formed call starts the count
    /// again. Default [`DEFAULT_MALFORMED_CALL_RETRIES`] (3): a model that cannot follow the
    /// tools' schemas would otherwise loop until a limit ends the run, its sample indistinct
    /// from one that ran out of turns while working.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::react;
    /// use actuator_model::ScriptedModel;
    /// let model = Arc::new(ScriptedModel::new([]));
    /// let agent = react().model(model.clone()).malformed_call_retries(Some(5)).build().unwrap();
    /// let unbounded = react().model(model).malformed_call_retries(None).build().unwrap();
    /// # let _ = (agent, unbounded);
    /// ```
    #[must_use]
    pub fn malformed_call_retries(mut self, retries: Option<u32>) -> Self {
        self.malformed_call_retries = MalformedCallRetries(retries);
        self
    }

    /// Compacts the model's input as it nears the context window.
    #[must_use]
    pub fn compaction(mut self, strategy: Arc<dyn CompactionStrategy>) -> Self {
        self.compaction = Some(strategy);
        self
    }

    /// What to do when the conversation overflows the context window (the reference's
    /// `truncation`; default [`ContextOverflow::Disabled`]).
    #[doc(alias = "truncation")]
    #[must_use]
    pub fn context_overflow(mut self, overflow: ContextOverflow) -> Self {
        self.overflow = overflow;
        self
    }

    /// Approval policies for the agent's tool calls.
    #[must_use]
    pub fn approval(mut self, policies: impl IntoIterator<Item = ApprovalPolicy>) -> Self {
        self.approval.extend(policies);
        self
    }

    /// Review policies for the results of the agent's tool calls (the reference's `review`):
    /// after a call has run and before the model reads its result.
    #[must_use]
    pub fn review(mut self, policies: impl IntoIterator<Item = ReviewPolicy>) -> Self {
        self.review.extend(policies);
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

    /// The tool choice of each generation (default `auto`): a [`ToolChoice`] for every turn
    /// (`Any` makes the model call a tool every turn; `function(name)` forces one), or
    /// [`ReactToolChoice::per_turn`] to choose per turn, as a small local model that needs its
    /// first tool forced does.
    ///
    /// ```
    /// use actuator_agent::{react, run, react::ReactToolChoice};
    /// use actuator_model::{ModelOutput, ScriptedModel};
    /// use actuator_tool_core::ToolChoice;
    ///
    /// let model = ScriptedModel::new([ModelOutput::for_tool_call("", "submit", serde_json::json!({"answer": "4"}))]);
    /// let agent = react()
    ///     .model(std::sync::Arc::new(model))
    ///     .tool_choice(ReactToolChoice::per_turn(|turn, _| {
    ///         if turn == 1 { ToolChoice::function("submit") } else { ToolChoice::Auto }
    ///     }))
    ///     .build()
    ///     .unwrap();
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let out = run(&agent, "What is 2 + 2?", ()).await.unwrap();
    /// assert_eq!(out.state.output().completion(), "4");
    /// # });
    /// ```
    ///
    /// [`ToolChoice`]: actuator_tool_core::ToolChoice
    #[must_use]
    pub fn tool_choice(mut self, choice: impl Into<ReactToolChoice>) -> Self {
        self.tool_choice = choice.into();
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
            .any(|t| t.kind() == ToolKind::ConversationTaking);
        let system_message = self
            .prompt
            .unwrap_or_default()
            .system_message(has_handoff, submit.as_ref().map(|s| s.name.as_str()))
            .map(shared_system_message);
        let infos = tools.iter().map(ToolDef::info_arc).collect();
        Ok(ReactAgent {
            name: self.name.unwrap_or_else(|| "react".to_owned()),
            description: self.description,
            system_message,
            tools,
            sources: self.sources,
            infos,
            model,
            attempts: self.attempts,
            submit,
            on_continue: self.on_continue,
            retry_refusals: self.retry_refusals,
            malformed_call_retries: self.malformed_call_retries.0,
            compaction: self.compaction,
            overflow: self.overflow,
            approval: self.approval,
            review: self.review,
            max_output: self.max_output,
            max_concurrency: self.max_concurrency,
            config: self.config,
            tool_choice: self.tool_choice,
        })
    }
}
