use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Answers at once.
#[agent]
fn quick(state: AgentState) -> Result<AgentState, AgentError> {
    Ok(state)
}

fn main() {}
