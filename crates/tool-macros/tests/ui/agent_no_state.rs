use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Does nothing.
#[agent]
async fn nothing() -> Result<AgentState, AgentError> {
    Ok(AgentState::new(Vec::new()))
}

fn main() {}
