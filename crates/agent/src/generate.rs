//! [`RunContext::generate_loop`]: the model/tool loop of the reference's
//! `generate(tool_calls=…)`, for agents that want it without react's prompts and submission.

use std::sync::Arc;

use actuator_exec::ExecuteOptions;
use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model};
use actuator_tool_core::{ToolChoice, ToolDef, ToolInfo};

use crate::context::RunContext;
use crate::error::{AgentError, AgentErrorKind};
use crate::state::AgentState;
use actuator_tool_core::source::{ToolSet, ToolSource};

/// Which tool calls [`RunContext::generate_loop`] executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolCalls {
    /// Generate, run the calls, and again, until a turn makes no calls (`"loop"`).
    #[default]
    Loop,
    /// Generate and run one round of calls (`"single"`).
    Single,
    /// Generate once and run nothing (`"none"`).
    None,
}

/// How [`RunContext::generate_loop`] runs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GenerateLoop {
    /// Which calls are executed (default [`ToolCalls::Loop`]).
    pub tool_calls: ToolCalls,
    /// The tool choice of the first generation; a forced function becomes `auto` after it
    /// ran, so it is not forced over and over (default `auto`).
    pub tool_choice: ToolChoice,
    /// Generation settings.
    pub config: GenerateConfig,
    /// Executor settings (output limit, approval, concurrency); the run's context, sink and
    /// resources are added.
    pub execute: ExecuteOptions,
    /// Tool sources asked once per turn; their tools join the loop's tools for that turn
    /// (fixed tools in this set are added too).
    pub sources: ToolSet,
}

impl GenerateLoop {
    /// The defaults: loop until no calls, `auto` tool choice.
    pub fn new() -> Self {
        Self::default()
    }

    /// Which calls are executed.
    #[must_use]
    pub fn tool_calls(mut self, tool_calls: ToolCalls) -> Self {
        self.tool_calls = tool_calls;
        self
    }

    /// Adds a tool source, resolved once per turn ([`RunContext::resolve_tools`]).
    #[must_use]
    pub fn tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.sources.push_source(source);
        self
    }

    /// The first generation's tool choice.
    #[must_use]
    pub fn tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// Generation settings.
    #[must_use]
    pub fn config(mut self, config: GenerateConfig) -> Self {
        self.config = config;
        self
    }

    /// Executor settings (output limit, approval, concurrency).
    #[must_use]
    pub fn execute(mut self, execute: ExecuteOptions) -> Self {
        self.execute = execute;
        self
    }
}

impl RunContext {
    /// Generates with `model` on `state` and runs the tool calls as `options.tool_calls` says:
    /// each turn's assistant message and tool messages are appended to the state and its
    /// output set, with every generation and execution going through
    /// [`RunContext::generate`] and [`RunContext::execute_tools`] (events, spans, limits). The
    /// run's message limit is checked before each generation.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_agent::{AgentState, GenerateLoop, RunContext, ToolCalls};
    /// use actuator_model::{ModelOutput, ScriptedModel, ToolCall};
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
    ///
    /// let clock = ToolDef::builder("clock").description("Tells the time.")
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("12:00") })
    ///     .build().unwrap();
    /// let model = ScriptedModel::new([
    ///     ModelOutput::for_tool_calls("", "", vec![ToolCall::new("c1", "clock", serde_json::json!({}))]),
    ///     ModelOutput::from_content("", "It is noon."),
    /// ]);
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let mut state = AgentState::new(vec![actuator_model::ChatMessage::user("Time?")]);
    /// RunContext::new()
    ///     .generate_loop(&model, &mut state, &[clock], &GenerateLoop::new())
    ///     .await
    ///     .unwrap();
    /// assert_eq!(state.messages.len(), 4); // user, call, result, answer
    /// assert_eq!(state.output().completion(), "It is noon.");
    /// # });
    /// ```
    pub async fn generate_loop(
        &self,
        model: &dyn Model,
        state: &mut AgentState,
        tools: &[ToolDef],
        options: &GenerateLoop,
    ) -> Result<(), AgentError> {
        let fixed_infos: Vec<Arc<ToolInfo>> = tools.iter().map(ToolDef::info_arc).collect();
        let execute = self.execute_options_from(&options.execute);
        let mut tool_choice = options.tool_choice.clone();
        let dynamic =
            options.sources.has_sources() || options.sources.fixed_tools().next().is_some();
        let mut resolved: Vec<ToolDef>;
        let mut resolved_infos: Vec<Arc<ToolInfo>>;
        loop {
            let (tools, infos): (&[ToolDef], &[Arc<ToolInfo>]) = if dynamic {
                let set = ToolSet::new()
                    .tools(tools.iter().cloned())
                    .tools(options.sources.fixed_tools().cloned());
                let set = options
                    .sources
                    .sources()
                    .fold(set, |set, s| set.source(Arc::clone(s)));
                resolved = self
                    .resolve_tools(&set)
                    .await
                    .map_err(|e| e.or_state(state))?;
                resolved_infos = resolved.iter().map(ToolDef::info_arc).collect();
                (&resolved, &resolved_infos)
            } else {
                (tools, &fixed_infos)
            };
            self.check_messages(state.messages.len(), true)
                .map_err(|e| AgentError::with_state(e, state.clone()))?;
            let output = self
                .generate(
                    model,
                    GenerateRequest::new(&state.messages)
                        .tools(infos)
                        .tool_choice(&tool_choice)
                        .config(&options.config),
                )
                .await
                .map_err(|e| e.or_state(state))?;
            let Some(message) = output.message().cloned() else {
                return Err(AgentError::with_state(
                    AgentErrorKind::Failed("The model returned no choices.".into()),
                    state.clone(),
                ));
            };
            let called = !message.calls().is_empty();
            state
                .messages
                .push(ChatMessage::Assistant(Box::new(message)));
            state.set_output(output);
            self.check_messages(state.messages.len(), false)
                .map_err(|e| AgentError::with_state(e, state.clone()))?;
            if options.tool_calls == ToolCalls::None || !called {
                return Ok(());
            }
            let result = self
                .execute_tools(&state.messages, tools, &execute)
                .await
                .map_err(|e| e.or_state(state))?;
            state.release_parsed_arguments();
            state.messages.extend(result.messages);
            if let Some(o) = result.output {
                state.set_output(o);
            }
            self.check_messages(state.messages.len(), false)
                .map_err(|e| AgentError::with_state(e, state.clone()))?;
            if options.tool_calls == ToolCalls::Single {
                return Ok(());
            }
            if matches!(tool_choice, ToolChoice::Function { .. }) {
                tool_choice = ToolChoice::Auto;
            }
        }
    }
}
