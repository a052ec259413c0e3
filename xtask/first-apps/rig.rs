//! The same first app on rig 0.44, built by `cargo xtask bench --only build`: one tool, an
//! agent, a real model by name (rig-core with its default features and `reqwest`, which its
//! README installs for a provider client, and rig-agent for the agent).
use rig_agent::{AgentBuilder, rig_tool};
use rig_core::providers::openai::{self, OpenAI};

#[rig_tool(
    description = "Add two integers",
    params(x = "First addend", y = "Second addend"),
    required(x, y)
)]
fn add(x: i64, y: i64) -> Result<i64, rig_core::tool::ToolExecutionError> {
    Ok(x + y)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = OpenAI::from_env()?.completion(openai::GPT_5_2);
    let agent = AgentBuilder::new(model).preamble("Use the tools.").tool(Add).build();
    let answer = agent.prompt("What is 3 + 4?").await?;
    println!("{answer:?}");
    Ok(())
}
