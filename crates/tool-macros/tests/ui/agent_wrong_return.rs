use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;

/// Researches a topic.
#[agent]
async fn research(state: AgentState) -> Result<String, AgentError> {
    let _ = state;
    Ok(String::new())
}

fn main() {}
