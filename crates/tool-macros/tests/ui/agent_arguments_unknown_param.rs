use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
///
/// # Arguments
/// * `state` - The conversation so far (allowed: not in the schema).
/// * `topic` - What to research.
/// * `depht` - How deep to go.
#[agent]
async fn research(state: AgentState, topic: String) -> Result<AgentState, AgentError> {
    let _ = topic;
    Ok(state)
}

fn main() {}
