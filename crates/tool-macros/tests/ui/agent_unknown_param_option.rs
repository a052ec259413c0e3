use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
#[agent]
async fn research(
    state: AgentState,
    /// How deep to go.
    #[agent(flatten)]
    depth: u32,
) -> Result<AgentState, AgentError> {
    let _ = depth;
    Ok(state)
}

fn main() {}
