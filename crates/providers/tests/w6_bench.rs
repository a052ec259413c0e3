//! The pieces of benchmark W6 (`benches/provider.rs`, `benches/w6/`): its canned completion is
//! a valid `CreateChatCompletionResponse`, its server answers the provider with it and records
//! what came, and the request the provider sends for the 100-message conversation is a valid
//! `CreateChatCompletionRequest` that the bench's "no Value tree" writer reproduces.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
#[path = "../../tool-core/benches/fixture/mod.rs"]
mod fixture;
#[path = "../benches/w6/mod.rs"]
mod w6;

use std::sync::Arc;
use std::time::Duration;

use actuator_exec::{ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, GenerateRequest, generate};
use actuator_providers::ModelOptions;
use actuator_tool_core::{ToolDef, ToolInfo};
use serde_json::{Value, json};

#[test]
fn the_canned_completion_is_a_valid_chat_completion_response() {
    let body: Value = serde_json::from_str(w6::canned::CANNED).unwrap();
    common::spec::assert_valid(
        &common::spec::openai().chat_response,
        &body,
        "CreateChatCompletionResponse",
    );
}

#[test]
fn the_conversation_has_100_messages_and_answers_every_call() {
    let conversation = w6::conversation::build();
    assert_eq!(conversation.len(), 100);
    assert!(matches!(conversation.last(), Some(ChatMessage::Tool(_))));
    let calls = conversation
        .iter()
        .filter_map(ChatMessage::as_assistant)
        .map(|a| a.calls().len())
        .sum::<usize>();
    let results = conversation
        .iter()
        .filter(|m| m.as_tool().is_some())
        .count();
    assert_eq!((calls, results), (49, 49));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_against_the_canned_server_lands_add_and_is_recorded() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(w6::server::Server::default().serve(listener));
    // A client of the test's own: `reqwest::Client::builder()` needs a process-wide crypto
    // provider, as this crate hands its clients `ring` directly (`rustls-no-provider`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();

    let model = ModelOptions::new()
        .api_key("sk-w6-test")
        .base_url(format!("{server}/v1"))
        .timeout(Duration::from_secs(10))
        .build(&format!("openai/{}", w6::canned::MODEL))
        .unwrap();
    let tools: Vec<ToolDef> = vec![fixture::add_tool(), fixture::search_tool()];
    let infos: Vec<Arc<ToolInfo>> = tools.iter().map(ToolDef::info_arc).collect();
    let mut conversation = w6::conversation::build();
    let output = generate(&*model, GenerateRequest::new(&conversation).tools(&infos))
        .await
        .unwrap();
    let message = output.message().cloned().unwrap();
    assert_eq!(message.calls().len(), 1);
    assert_eq!(message.calls()[0].function, "add");
    assert_eq!(
        message.calls()[0].arguments.to_value().unwrap(),
        json!({"x": 3, "y": 4})
    );
    conversation.push(ChatMessage::Assistant(Box::new(message)));
    let result = execute_tools(&conversation, &tools, &ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(result.messages[0].text(), "7");

    let stats: w6::server::Stats = http
        .get(format!("{server}/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats.handler_ns.len(), 1);
    assert!(stats.body_bytes[0] > 40_000, "{:?}", stats.body_bytes);

    let last = http
        .get(format!("{server}/last"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(last.len() as u64, stats.body_bytes[0]);
    let sent: Value = serde_json::from_slice(&last).unwrap();
    common::spec::check_openai_request(&sent);
    assert_eq!(sent["messages"].as_array().unwrap().len(), 100);

    // The bench's writer without a Value tree produces the very same request.
    let direct = w6::breakdown::direct(
        sent["model"].as_str().unwrap(),
        &conversation[..100],
        &sent["tools"],
    );
    let direct: Value = serde_json::from_slice(&direct).unwrap();
    assert_eq!(direct, sent);

    http.post(format!("{server}/reset")).send().await.unwrap();
    let stats: w6::server::Stats = http
        .get(format!("{server}/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(stats.handler_ns.is_empty());
    let missing = http.get(format!("{server}/nowhere")).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    serving.abort();
}
