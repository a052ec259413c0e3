use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
///
/// # Arguments
/// * `topic` - What to research.
#[agent]
async fn research(state: AgentState, topic: String, depth: u32) -> Result<AgentState, AgentError> {
    let _ = (topic, depth);
    Ok(state)
}

fn main() {}
