use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
#[agent]
async fn research(state: AgentState, cx: &actuator_agent::RunContext) -> Result<AgentState, AgentError> {
    let _ = cx;
    Ok(state)
}

fn main() {}
