use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

#[agent]
async fn silent(state: AgentState) -> Result<AgentState, AgentError> {
    Ok(state)
}

fn main() {}
