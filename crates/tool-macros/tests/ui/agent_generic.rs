use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
///
/// # Arguments
/// * `topic` - What to research.
#[agent]
async fn research<T: serde::de::DeserializeOwned>(state: AgentState, topic: T) -> Result<AgentState, AgentError> {
    let _ = topic;
    Ok(state)
}

fn main() {}
