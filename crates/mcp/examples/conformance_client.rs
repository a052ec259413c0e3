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
use actuator_mcp::{CrossAppAccess, JwtSigningAlgorithm, McpClient, McpServer, OAuth, mcp_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use actuator_tool_core::{
    ElicitationRequest, ElicitationResult, HostError, SamplingRequest, SamplingResult, ToolDef,
};
use serde_json::{Map, Value, json};

/// The call each scenario expects, when it expects one.
fn call_for(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        // The auth scenarios' servers serve one tool behind the authorization.
        s if s.starts_with("auth/") => Some(("", json!({}))),
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
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let server = McpServer::http(url)
        .oauth(oauth(&scenario, &context))
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

/// OAuth as the scenario asks for it: client credentials or cross-app access where the
/// scenario is about those grants (its context carries the registrations), and otherwise
/// the authorization code with a loopback redirect, this client's metadata document, a
/// pre-registered client when the scenario gives one, and a headless "browser" that fetches
/// the authorization URL and reads the redirect it answers with (the suite's server
/// approves at once).
fn oauth(scenario: &str, context: &Value) -> OAuth {
    let text = |key: &str| context[key].as_str().unwrap_or_default().to_owned();
    match scenario {
        "auth/client-credentials-basic" => {
            return OAuth::client_credentials(text("client_id"), text("client_secret"));
        }
        "auth/client-credentials-jwt" => {
            return OAuth::private_key_jwt(
                text("client_id"),
                text("private_key_pem"),
                JwtSigningAlgorithm::ES256,
            );
        }
        "auth/cross-app-access-complete-flow" | "auth/enterprise-managed-authorization" => {
            let id_token = text("idp_id_token");
            let access = CrossAppAccess::new(
                text("idp_issuer"),
                text("idp_token_endpoint"),
                text("idp_client_id"),
                text("client_id"),
            )
            .client_secret(text("client_secret"))
            .id_token(move || {
                let id_token = id_token.clone();
                async move { Ok(id_token) }
            });
            return OAuth::cross_app_access(access);
        }
        _ => {}
    }
    let mut oauth = OAuth::new("http://localhost:3000/callback")
        .client_name("actuator-conformance")
        .client_metadata_url("https://conformance-test.local/client-metadata.json")
        .authorize(|url: String| async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| HostError::failed_from("no HTTP client", e))?;
            let response = http.get(&url).send().await.map_err(|e| {
                HostError::failed_from("the authorization URL could not be fetched", e)
            })?;
            response
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| HostError::failed("the authorization server did not redirect"))
        });
    if let Some(id) = context["client_id"].as_str() {
        oauth = oauth.client(id, context["client_secret"].as_str().map(str::to_owned));
    }
    oauth
}

async fn run(client: &McpClient, scenario: &str) -> Result<String, String> {
    let tools = mcp_tools(client).list().await.map_err(|e| e.to_string())?;
    if scenario == "json-schema-2020-12-preservation" {
        // Echo the focal tool's input schema as this client holds it (what a model is
        // offered), for the suite to check that no JSON Schema 2020-12 keyword was lost.
        let focal = tools
            .iter()
            .find(|t| t.name() == "json_schema_2020_12_tool")
            .ok_or("the server offers no json_schema_2020_12_tool")?;
        let schema = focal.parameters().to_value();
        return call(&tools, "json_schema_echo", json!({ "schema": schema })).await;
    }
    let Some((name, arguments)) = call_for(scenario) else {
        return Ok(format!("connected; {} tools", tools.len()));
    };
    // No name: call the server's first tool.
    let name = if name.is_empty() {
        match tools.first() {
            Some(tool) => tool.name().to_owned(),
            None => return Ok("connected; no tools".to_owned()),
        }
    } else {
        name.to_owned()
    };
    call(&tools, &name, arguments).await
}

/// Calls `name` through `execute_tools`, as an agent would.
async fn call(tools: &[ToolDef], name: &str, arguments: Value) -> Result<String, String> {
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new("call_1", name, arguments)]);
    let messages = [ChatMessage::Assistant(Box::new(assistant))];
    let result = execute_tools(&messages, tools, &ExecuteOptions::default())
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
