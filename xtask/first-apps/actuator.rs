//! A first app on Actuator, built by `cargo xtask bench --only build`: one tool, a react
//! agent, a real model by name (facade with its default features and `providers`).
use actuator::agent::{RunOptions, react};
use actuator::prelude::*;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = actuator::providers::get_model("openai/gpt-4.1-mini")?;
    let agent = react()
        .name("calculator")
        .tools([add_tool()])
        .model(model)
        .build()?;
    let run = actuator::agent::run(&agent, "What is 3 + 4?", RunOptions::new()).await?;
    println!("{:?}", run.end);
    Ok(())
}
