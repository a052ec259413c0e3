//! OpenAI's Responses API against a stub server: every request body is checked against
//! `CreateResponse`, every fixture against `Response`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{
    ChatMessage, GenerateConfig, GenerateRequest, MessageContent, Model, StopReason,
};
use actuator_providers::ModelOptions;
use actuator_tool_core::{Content, ToolChoice};
use common::responses::{reasoning_and_calls, response};
use common::{spec, tools};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn ok(body: Value) -> ResponseTemplate {
    spec::assert_valid(&spec::openai().response, &body, "Response");
    ResponseTemplate::new(200).set_body_json(body)
}

async fn stub(body: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ok(body))
        .mount(&server)
        .await;
    server
}

fn model(url: &str, name: &str, options: ModelOptions) -> Arc<dyn Model> {
    options
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .build(name)
        .unwrap()
}

async fn requests(server: &MockServer) -> Vec<Value> {
    let bodies = common::bodies(server).await;
    for body in &bodies {
        spec::assert_valid(&spec::openai().create_response, body, "CreateResponse");
    }
    bodies
}

#[tokio::test]
async fn reasoning_models_use_the_responses_api_and_replay_reasoning() {
    let server = stub(response(reasoning_and_calls(), "completed", Value::Null)).await;
    let model = model(&server.uri(), "openai/o4-mini", ModelOptions::new());
    let tools = [tools::add(), tools::read()];
    let input = [
        ChatMessage::system("Be exact."),
        ChatMessage::user("3 + 4?"),
    ];
    let config = GenerateConfig::default()
        .max_tokens(500)
        .parallel_tool_calls(true);
    let out = model
        .generate(GenerateRequest::new(&input).tools(&tools).config(&config))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    let message = out.message().unwrap();
    let MessageContent::Parts(parts) = &message.content else {
        panic!("{:?}", message.content)
    };
    assert!(
        matches!(&parts[0], Content::Reasoning { reasoning, signature: Some(s), .. } if reasoning == "Two sums." && s == "gAAAAenc")
    );
    assert_eq!(message.content.text(), "Adding.");
    let calls = message.calls();
    assert_eq!(
        (
            calls[0].id.as_str(),
            calls[0].arguments.to_map().unwrap()["y"].clone()
        ),
        ("call_1", json!(4))
    );
    assert_eq!(
        calls[1].arguments.to_value().unwrap(),
        json!({"path": "a"}),
        "strict nulls stripped"
    );
    let usage = out.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.input_tokens_cache_read,
            usage.reasoning_tokens
        ),
        (25, Some(20), Some(12))
    );
    assert_eq!(usage.input_tokens_cache_write, Some(5));

    // The next turn replays the reasoning item, the text, the calls and their outputs.
    let mut history = input.to_vec();
    history.push(ChatMessage::Assistant(Box::new(message.clone())));
    history.push(ChatMessage::tool("7", "call_1", "add", None));
    history.push(ChatMessage::tool("text", "call_2", "read", None));
    model
        .generate(
            GenerateRequest::new(&history)
                .tools(&tools)
                .tool_choice(&ToolChoice::function("add")),
        )
        .await
        .unwrap();
    let requests = requests(&server).await;
    let first = &requests[0];
    assert_eq!(first["max_output_tokens"], 500);
    assert_eq!(first["store"], false);
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["tools"][0]["strict"], true);
    assert_eq!(first["tools"][0]["name"], "add");
    assert_eq!(
        first["input"][0],
        json!({"type": "message", "role": "system", "content": "Be exact."})
    );
    let replay = &requests[1];
    assert_eq!(
        replay["tool_choice"],
        json!({"type": "function", "name": "add"})
    );
    assert_eq!(
        replay["input"].as_array().unwrap()[2..],
        [
            json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Two sums."}], "encrypted_content": "gAAAAenc"}),
            json!({"type": "message", "role": "assistant", "content": "Adding."}),
            json!({"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"x\":3,\"y\":4}"}),
            json!({"type": "function_call", "call_id": "call_2", "name": "read", "arguments": "{\"path\":\"a\"}"}),
            json!({"type": "function_call_output", "call_id": "call_1", "output": "7"}),
            json!({"type": "function_call_output", "call_id": "call_2", "output": "text"}),
        ]
    );
}

#[tokio::test]
async fn incomplete_responses_and_refusals_map_to_stop_reasons() {
    let text = json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
        "content": [{"type": "output_text", "text": "The answer", "annotations": [], "logprobs": []}]}]);
    let server = stub(response(
        text,
        "incomplete",
        json!({"reason": "max_output_tokens"}),
    ))
    .await;
    let out = model(
        &server.uri(),
        "openai/gpt-4.1-mini",
        ModelOptions::new().responses_api(true),
    )
    .generate(GenerateRequest::new(&[ChatMessage::user("q")]))
    .await
    .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::MaxTokens));
    assert_eq!(out.completion(), "The answer");
    let body = &requests(&server).await[0];
    assert!(body.get("include").is_none(), "not a reasoning model");

    let refusal = json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]);
    let server = stub(response(refusal, "completed", Value::Null)).await;
    let out = model(&server.uri(), "openai/o3", ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("q")]))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ContentFilter));
    assert_eq!(out.completion(), "I can't help with that.");
}

#[tokio::test]
async fn other_models_keep_chat_completions_unless_asked() {
    let server = MockServer::start().await;
    let chat = common::chat_completion(json!({"role": "assistant", "content": "ok"}), "stop");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(common::openai_ok(chat))
        .mount(&server)
        .await;
    let out = model(&server.uri(), "openai/gpt-4.1-mini", ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("q")]))
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    // And a reasoning model can be sent to Chat Completions too.
    let out = model(
        &server.uri(),
        "openai/o4-mini",
        ModelOptions::new().responses_api(false),
    )
    .generate(GenerateRequest::new(&[ChatMessage::user("q")]))
    .await
    .unwrap();
    assert_eq!(out.completion(), "ok");
    // Both went to /chat/completions (the only route mounted), each a valid request.
    assert_eq!(common::openai_requests(&server).await.len(), 2);
}
