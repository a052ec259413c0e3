//! Anthropic's extended thinking budget (`GenerateConfig::reasoning_tokens`): sent as
//! `thinking.budget_tokens` with room made for it in `max_tokens`, its rules checked before
//! sending, and a forced tool choice (which extended thinking rejects) sent as `auto`. Every
//! request is checked against `messages-request.schema.json`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateConfig, GenerateRequest, Model, ModelError};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::ToolChoice;
use common::{anthropic_message, anthropic_ok, anthropic_requests, tools};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(anthropic_ok(anthropic_message(
            json!([{"type": "text", "text": "ok", "citations": null}]),
            "end_turn",
        )))
        .mount(&server)
        .await;
    server
}

fn model_at(url: &str) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(url)
        .env(|_| None)
        .stream(false)
        .retry(RetryPolicy::none())
        .build("anthropic/claude-test")
        .unwrap()
}

async fn send(
    model: &dyn Model,
    choice: ToolChoice,
    config: GenerateConfig,
) -> Result<(), ModelError> {
    model
        .generate(
            GenerateRequest::new(&[ChatMessage::user("3 + 4?")])
                .tools(&[tools::add()])
                .tool_choice(&choice)
                .config(&config),
        )
        .await
        .map(|_| ())
}

#[tokio::test]
async fn the_budget_is_sent_and_the_default_max_tokens_makes_room_for_it() {
    let server = server().await;
    let model = model_at(&server.uri());
    send(
        &*model,
        ToolChoice::Auto,
        GenerateConfig::default().reasoning_tokens(2048),
    )
    .await
    .unwrap();
    send(
        &*model,
        ToolChoice::Auto,
        GenerateConfig::default()
            .reasoning_tokens(2048)
            .max_tokens(3000),
    )
    .await
    .unwrap();
    send(&*model, ToolChoice::Auto, GenerateConfig::default())
        .await
        .unwrap();
    let requests = anthropic_requests(&server).await;
    assert_eq!(
        requests[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(requests[0]["max_tokens"], 4096 + 2048);
    assert_eq!(requests[1]["max_tokens"], 3000);
    assert!(requests[2].get("thinking").is_none());
    assert_eq!(requests[2]["max_tokens"], 4096);
}

#[tokio::test]
async fn a_forced_tool_choice_is_sent_as_auto_with_thinking() {
    let server = server().await;
    let model = model_at(&server.uri());
    let thinking = GenerateConfig::default()
        .reasoning_tokens(1024)
        .parallel_tool_calls(false);
    send(&*model, ToolChoice::Any, thinking.clone())
        .await
        .unwrap();
    send(&*model, ToolChoice::function("add"), thinking)
        .await
        .unwrap();
    send(&*model, ToolChoice::Any, GenerateConfig::default())
        .await
        .unwrap();
    let requests = anthropic_requests(&server).await;
    let auto = json!({"type": "auto", "disable_parallel_tool_use": true});
    assert_eq!(requests[0]["tool_choice"], auto);
    assert_eq!(requests[1]["tool_choice"], auto);
    // Without thinking the choice is forced as asked.
    assert_eq!(requests[2]["tool_choice"], json!({"type": "any"}));
}

#[tokio::test]
async fn budgets_the_api_would_reject_are_errors_before_sending() {
    let server = server().await;
    let model = model_at(&server.uri());
    let too_small = send(
        &*model,
        ToolChoice::Auto,
        GenerateConfig::default().reasoning_tokens(500),
    )
    .await
    .unwrap_err();
    let message = too_small.to_string();
    assert!(
        message.contains("reasoning_tokens is 500") && message.contains("at least 1024"),
        "{message}"
    );
    let over_max = send(
        &*model,
        ToolChoice::Auto,
        GenerateConfig::default()
            .reasoning_tokens(2048)
            .max_tokens(2048),
    )
    .await
    .unwrap_err();
    assert!(
        over_max
            .to_string()
            .contains("max_tokens (2048) must be greater than reasoning_tokens (2048)"),
        "{over_max}"
    );
    assert!(matches!(
        over_max.downcast_ref::<ProviderError>(),
        Some(ProviderError::InvalidConfig { .. })
    ));
    assert!(anthropic_requests(&server).await.is_empty());
}

#[tokio::test]
async fn a_budget_in_the_models_default_config_applies() {
    let server = server().await;
    let model = ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(server.uri())
        .env(|_| None)
        .stream(false)
        .config(GenerateConfig::default().reasoning_tokens(1500))
        .build("anthropic/claude-test")
        .unwrap();
    send(&*model, ToolChoice::Auto, GenerateConfig::default())
        .await
        .unwrap();
    let requests = anthropic_requests(&server).await;
    assert_eq!(requests[0]["thinking"]["budget_tokens"], 1500);
}
