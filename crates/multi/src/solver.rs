//! [`as_solver`]: an agent as a whole task's solver, and the minimal [`TaskState`] /
//! [`Solver`] seam an evaluation harness plugs into.

use std::sync::Arc;

use actuator_agent::{
    Agent, AgentError, AgentInput, AgentState, RunContext, RunOptions, limits::Limit,
};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_tool_core::ToolRequirement;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::common::{AgentToolError, SharedAgent};

/// A typed key–value store carried with a task (values are kept as JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Store(Map<String, Value>);

impl Store {
    /// The value at `key`, when present and of type `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.0.get(key).and_then(|v| T::deserialize(v).ok())
    }

    /// Stores `value` at `key`. Fails only when the value cannot be represented as JSON.
    pub fn set<T: Serialize>(&mut self, key: &str, value: &T) -> Result<(), serde_json::Error> {
        self.0.insert(key.to_owned(), serde_json::to_value(value)?);
        Ok(())
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }
}

/// The state of one task (a sample of an evaluation): kept small on purpose; a harness adds
/// scoring and logging around it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// The output.
    pub output: ModelOutput,
    /// Task metadata.
    pub metadata: Map<String, Value>,
    /// Typed scratch space.
    pub store: Store,
    /// Whether the task is done.
    pub completed: bool,
}

/// Solves a task: changes its state in place.
pub trait Solver: Send + Sync {
    /// Works on `state`. Whatever happens, `state` holds the work done so far.
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>>;

    /// The run resources the solver's tools cannot work without (see
    /// `actuator_agent::Agent::requirements`): an evaluation refuses to start when its task
    /// does not provide them. Default: none.
    fn requirements(&self) -> Vec<ToolRequirement> {
        Vec::new()
    }
}

/// Builds a solver from an agent. Start with [`as_solver`].
#[derive(Clone)]
pub struct AsSolverBuilder {
    agent: SharedAgent,
    limits: Vec<Limit>,
    curried: Map<String, Value>,
}

/// Starts a solver that runs `agent` on a task's messages.
pub fn as_solver(agent: impl Agent + 'static) -> AsSolverBuilder {
    AsSolverBuilder {
        agent: Arc::new(agent),
        limits: Vec::new(),
        curried: Map::new(),
    }
}

impl AsSolverBuilder {
    /// Limits for the run; a limit ends the task (its state is still written back).
    #[must_use]
    pub fn limits(mut self, limits: impl IntoIterator<Item = Limit>) -> Self {
        self.limits.extend(limits);
        self
    }

    /// Passes an argument to the agent.
    #[must_use]
    pub fn curry(mut self, name: impl Into<String>, value: Value) -> Self {
        self.curried.insert(name.into(), value);
        self
    }

    /// Checks that every required parameter of the agent is curried (optional ones need not
    /// be, D13) and builds the solver.
    pub fn build(self) -> Result<AgentSolver, AgentToolError> {
        let params = self.agent.parameters();
        for name in self.curried.keys() {
            if !params.properties.contains_key(name) {
                return Err(AgentToolError::UnknownParameter {
                    name: self.agent.name().to_owned(),
                    param: name.clone(),
                });
            }
        }
        if let Some(missing) = params
            .required
            .iter()
            .find(|r| !self.curried.contains_key(*r))
        {
            return Err(AgentToolError::RequiredParameter {
                name: self.agent.name().to_owned(),
                param: missing.clone(),
            });
        }
        Ok(AgentSolver {
            agent: self.agent,
            limits: self.limits,
            curried: self.curried,
        })
    }
}

/// An agent as a solver. Build one with [`as_solver`].
#[derive(Clone)]
pub struct AgentSolver {
    agent: SharedAgent,
    limits: Vec<Limit>,
    curried: Map<String, Value>,
}

impl std::fmt::Debug for AgentSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSolver")
            .field("agent", &self.agent.name())
            .finish_non_exhaustive()
    }
}

impl AgentSolver {
    fn write_back(state: &mut TaskState, agent_state: &AgentState) {
        state.messages = agent_state.messages.to_vec();
        // An output the agent set explicitly is written back even when it is empty of text and
        // calls (the reference writes the agent's output back whenever it has one).
        match agent_state.explicit_output() {
            Some(explicit) => state.output = explicit.clone(),
            None => {
                let derived = agent_state.output();
                if !derived.is_empty() {
                    state.output = derived;
                }
            }
        }
    }
}

impl Solver for AgentSolver {
    fn requirements(&self) -> Vec<ToolRequirement> {
        self.agent.requirements()
    }

    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            // The task's messages are marked as the input.
            let input = AgentInput::State(AgentState::new(state.messages.clone()));
            let scoped = cx.scoped(&self.limits);
            let result = scoped
                .run(
                    self.agent.as_ref(),
                    input,
                    RunOptions::new().args(self.curried.clone()),
                )
                .await;
            match result {
                Ok(run) => {
                    Self::write_back(state, &run.state);
                    Ok(())
                }
                Err(e) => {
                    if let Some(partial) = &e.state {
                        Self::write_back(state, partial);
                    }
                    // The solver's own limits end the task normally: it was stopped, not broken.
                    if e.limit().is_some_and(|l| scoped.owns(l)) {
                        state.completed = true;
                        return Ok(());
                    }
                    Err(e)
                }
            }
        })
    }
}
