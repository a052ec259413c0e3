//! What handoff and as_tool share: the tool name, description and parameters of an agent.

use std::sync::Arc;

use actuator_agent::Agent;
use actuator_tool_core::ToolParams;
use serde_json::{Map, Value};

/// Lowercases, trims, turns runs of whitespace into `_`, and keeps only `[a-z0-9_-]`.
///
/// ```
/// use actuator_multi::sanitize_tool_name;
/// assert_eq!(sanitize_tool_name("  Sub Agent!  "), "sub_agent");
/// assert_eq!(sanitize_tool_name("Research\t\tLead-2"), "research_lead-2");
/// ```
pub fn sanitize_tool_name(name: &str) -> String {
    let lowered = name.trim().to_lowercase();
    let mut out = String::with_capacity(lowered.len());
    let mut in_space = false;
    for ch in lowered.chars() {
        if ch.is_whitespace() {
            if !in_space {
                out.push('_');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        if ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_' || ch == '-' {
            out.push(ch);
        }
    }
    out
}

/// The tool-name stem of an agent: its sanitized display name, else its sanitized own name
/// ([`Agent::own_name`]), else `agent`.
pub fn agent_tool_name(agent: &dyn Agent) -> String {
    [agent.name(), agent.own_name()]
        .into_iter()
        .map(sanitize_tool_name)
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "agent".to_owned())
}

/// Errors building a tool from an agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentToolError {
    /// Neither the option nor the agent gives a description.
    #[error(
        "Description not provided for agent '{name}'. Provide a description either with the agent's own description (for example `react().description(...)`) or with the description option of {function}()."
    )]
    MissingDescription {
        /// The agent's name.
        name: String,
        /// `handoff` or `as_tool`.
        function: &'static str,
    },
    /// A curried argument names no parameter of the agent.
    #[error("Agent {name} does not have a '{param}' parameter.")]
    UnknownParameter {
        /// The agent's name.
        name: String,
        /// The unknown parameter.
        param: String,
    },
    /// A required parameter was not curried (for `as_solver`).
    #[error(
        "To use the {name} agent as a solver you must pass a value for the agent's required '{param}' parameter to the as_solver() function."
    )]
    RequiredParameter {
        /// The agent's name.
        name: String,
        /// The parameter.
        param: String,
    },
    /// The resulting tool is not valid.
    #[error(transparent)]
    Tool(#[from] actuator_tool_core::ToolDefError),
}

/// The agent's parameters minus the curried ones (an unknown curried name is an error).
pub(crate) fn remaining_parameters(
    agent: &dyn Agent,
    curried: &Map<String, Value>,
) -> Result<ToolParams, AgentToolError> {
    let mut params = agent.parameters();
    for name in curried.keys() {
        if params.properties.remove(name).is_none() {
            return Err(AgentToolError::UnknownParameter {
                name: agent.name().to_owned(),
                param: name.clone(),
            });
        }
        params.required.retain(|r| r != name);
    }
    Ok(params)
}

/// The description from the option, else the agent's.
pub(crate) fn description(
    agent: &dyn Agent,
    option: Option<&str>,
    function: &'static str,
) -> Result<String, AgentToolError> {
    option
        .or_else(|| agent.description())
        .filter(|d| !d.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| AgentToolError::MissingDescription {
            name: agent.name().to_owned(),
            function,
        })
}

pub(crate) type SharedAgent = Arc<dyn Agent>;

/// `def`, the tool that runs `agent`, declaring what the agent's tools need (so a run that
/// offers it without, say, a sandbox is refused before it starts).
pub(crate) fn with_agent_requirements(
    def: actuator_tool_core::ToolDef,
    agent: &dyn actuator_agent::Agent,
) -> actuator_tool_core::ToolDef {
    agent
        .requirements()
        .into_iter()
        .fold(def, |def, need| def.with_requirement(need.requirement))
}
