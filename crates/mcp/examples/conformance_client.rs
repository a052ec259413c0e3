//! A client for the official MCP conformance suite's client scenarios, built from
//! `McpClient` as any program would use it. The suite runs it as
//! `conformance_client <server URL>` with the scenario's name in `MCP_CONFORMANCE_SCENARIO`.
//!
//! It connects (the handshake), lists the server's tools, and calls the one the scenario is
//! about; it answers elicitation by accepting and leaving every field to its default, which
//! the client fills in from the schema. `crates/mcp/tests/conformance_client.rs` runs it.
//!
//! ```text
//! cargo run -p actuator-mcp --example conformance_client -- http://127.0.0.1:3000/mcp
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Duration;

use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_mcp::{McpClient, McpServer, mcp_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::{ElicitationRequest, ElicitationResult, SamplingRequest, SamplingResult};
use serde_json::{Map, Value, json};

/// The call each scenario expects, when it expects one.
fn call_for(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!(
            "usage: conformance_client <server URL> (the scenario in MCP_CONFORMANCE_SCENARIO)"
        );
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let server = McpServer::http(url)
        .name("conformance")
        .connect_timeout(Duration::from_secs(20))
        .timeout(Duration::from_secs(30))
        .elicitation(|_asked: ElicitationRequest| async {
            // Accept, leaving every field to the schema's default.
            Ok(ElicitationResult::accept(Map::new()))
        })
        .sampling(|asked: SamplingRequest| async move {
            let prompt = asked
                .messages
                .last()
                .and_then(|m| m.content.as_text())
                .unwrap_or_default()
                .to_owned();
            Ok(
                SamplingResult::new(format!("You said: {prompt}"), "scripted")
                    .stop_reason("endTurn"),
            )
        });
    let client = McpClient::new(server);
    let outcome = run(&client, &scenario).await;
    client.close().await;
    match outcome {
        Ok(text) => {
            println!("{scenario}: {text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(client: &McpClient, scenario: &str) -> Result<String, String> {
    let tools = mcp_tools(client).list().await.map_err(|e| e.to_string())?;
    let Some((name, arguments)) = call_for(scenario) else {
        return Ok(format!("connected; {} tools", tools.len()));
    };
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new("call_1", name, arguments)]);
    let messages = [ChatMessage::Assistant(Box::new(assistant))];
    let result = execute_tools(&messages, &tools, &ExecuteOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    match result.messages.first() {
        Some(ChatMessage::Tool(message)) => match &message.error {
            Some(error) => Err(error.message.clone()),
            None => Ok(message.content.text()),
        },
        _ => Err("the call produced no result".to_owned()),
    }
}
