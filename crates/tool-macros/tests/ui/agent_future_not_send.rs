use actuator_agent::{AgentError, AgentState};
use actuator_tool_macros::agent;
use std::rc::Rc;

/// Holds an `Rc` across an await: agents run on a multi-threaded executor.
#[agent]
async fn holds(state: AgentState) -> Result<AgentState, AgentError> {
    let rc = Rc::new(1_u8);
    std::future::ready(()).await;
    let _ = *rc;
    Ok(state)
}

fn main() {}
