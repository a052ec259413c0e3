//! The W3C trace context a request belongs to reaches the provider as `traceparent` and
//! `tracestate` headers, so a traced run links to the server's spans; a request without one
//! sends neither.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::ModelOptions;
use actuator_tool_core::TraceContext;
use common::{anthropic_message, anthropic_ok, chat_completion, openai_ok};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

fn trace() -> TraceContext {
    TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .unwrap()
        .with_tracestate("congo=t61rcWkgMzE")
}

/// The `traceparent` and `tracestate` headers of each request the server saw.
async fn seen(server: &MockServer) -> Vec<(Option<String>, Option<String>)> {
    let header = |r: &wiremock::Request, name: &str| {
        r.headers.get(name).map(|v| v.to_str().unwrap().to_owned())
    };
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| (header(r, "traceparent"), header(r, "tracestate")))
        .collect()
}

async fn ask_twice(model: Arc<dyn Model>, trace: &TraceContext) {
    let input = [ChatMessage::user("Hi")];
    model
        .generate(GenerateRequest::new(&input).trace(trace))
        .await
        .unwrap();
    model.generate(GenerateRequest::new(&input)).await.unwrap();
}

#[tokio::test]
async fn openai_requests_carry_the_trace_context_they_belong_to() {
    let server = MockServer::start().await;
    let body = chat_completion(json!({"role": "assistant", "content": "Hello!"}), "stop");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai_ok(body))
        .mount(&server)
        .await;
    let model = common::openai::model_at(&server.uri(), ModelOptions::new());
    let trace = trace();
    ask_twice(model, &trace).await;
    assert_eq!(
        seen(&server).await,
        [
            (
                Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned()),
                Some("congo=t61rcWkgMzE".to_owned())
            ),
            (None, None)
        ]
    );
}

#[tokio::test]
async fn anthropic_requests_carry_the_trace_context_they_belong_to() {
    let server = MockServer::start().await;
    let body = anthropic_message(json!([{"type": "text", "text": "Hello!"}]), "end_turn");
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(anthropic_ok(body))
        .mount(&server)
        .await;
    let model = ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(server.uri())
        .env(|_| None)
        .build("anthropic/claude-test")
        .unwrap();
    let trace = trace();
    ask_twice(model, &trace).await;
    let seen = seen(&server).await;
    assert_eq!(seen[0].0.as_deref(), Some(trace.traceparent().as_str()));
    assert_eq!(seen[0].1.as_deref(), Some("congo=t61rcWkgMzE"));
    assert_eq!(seen[1], (None, None));
}
