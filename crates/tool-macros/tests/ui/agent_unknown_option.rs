use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
#[agent(name = "research", parallel)]
async fn research(state: AgentState) -> Result<AgentState, AgentError> {
    Ok(state)
}

fn main() {}
