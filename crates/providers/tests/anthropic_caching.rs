//! Anthropic prompt caching for agent loops (issue 38 §4), as the reference places it: a
//! breakpoint on the system prompt, on the last tool and on the conversation's second-to-last
//! cacheable block (never a thinking block), plus the request's automatic breakpoint; at most
//! the API's four; none with `cache_prompt(false)` or on models that cannot cache. Cache reads
//! and writes come back in the usage. Every request is checked against Anthropic's schema.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{
    ChatMessage, ChatMessageAssistant, GenerateConfig, GenerateRequest, MessageContent, Model,
    ToolCall,
};
use actuator_providers::{ModelOptions, RetryPolicy};
use actuator_tool_core::{Content, ToolInfo};
use common::{anthropic_message, anthropic_ok, anthropic_requests, tools};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer};

async fn server_with_usage(usage: Value) -> MockServer {
    let server = MockServer::start().await;
    let mut message = anthropic_message(
        json!([{"type": "text", "text": "ok", "citations": null}]),
        "end_turn",
    );
    message["usage"] = usage;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(anthropic_ok(message))
        .mount(&server)
        .await;
    server
}

fn model(server: &MockServer, name: &str) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(server.uri())
        .env(|_| None)
        .retry(RetryPolicy::none())
        .build(&format!("anthropic/{name}"))
        .unwrap()
}

/// An agent loop's second turn: system, question, an assistant turn that thought, spoke and
/// called a tool, and the tool's result.
fn second_turn() -> Vec<ChatMessage> {
    let mut assistant = ChatMessageAssistant::new(MessageContent::Parts(vec![
        Content::Reasoning {
            reasoning: "Add them.".into(),
            signature: Some("sig".into()),
            redacted: false,
            internal: None,
        },
        Content::text("Adding."),
    ]));
    assistant.tool_calls = Some(vec![ToolCall::new(
        "toolu_1",
        "add",
        json!({"x": 1, "y": 2}),
    )]);
    vec![
        ChatMessage::system("You add numbers."),
        ChatMessage::user("What is 1 + 2?"),
        ChatMessage::Assistant(Box::new(assistant)),
        ChatMessage::tool("3", "toolu_1", "add", None),
    ]
}

fn two_tools() -> Vec<Arc<ToolInfo>> {
    let mut other = (*tools::add()).clone();
    other.name = "subtract".into();
    vec![tools::add(), Arc::new(other)]
}

/// Every JSON pointer in `value` under which a `cache_control` sits.
fn breakpoints(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if key == "cache_control" {
                    out.push(at.to_owned());
                } else {
                    breakpoints(v, &format!("{at}/{key}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                breakpoints(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

async fn send(model: &dyn Model, config: &GenerateConfig) {
    let input = second_turn();
    let tools = two_tools();
    model
        .generate(GenerateRequest::new(&input).tools(&tools).config(config))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_agent_loops_request_caches_the_system_prompt_the_tools_and_the_conversation() {
    let server = server_with_usage(json!({
        "input_tokens": 12, "output_tokens": 5,
        "cache_creation_input_tokens": 900, "cache_read_input_tokens": 4000
    }))
    .await;
    let model = model(&server, "claude-sonnet-4-5");
    let input = second_turn();
    let tools = two_tools();
    let out = model
        .generate(GenerateRequest::new(&input).tools(&tools))
        .await
        .unwrap();
    let request = &anthropic_requests(&server).await[0];

    let mut found = Vec::new();
    breakpoints(request, "", &mut found);
    found.sort();
    assert_eq!(
        found,
        vec![
            // The request's automatic breakpoint (the last cacheable block).
            "".to_owned(),
            // The assistant turn's tool call: the second-to-last cacheable block (the tool
            // result is the last); the thinking block before it is never marked.
            "/messages/1/content/2".to_owned(),
            "/system/0".to_owned(),
            "/tools/1".to_owned(),
        ],
        "{request:#}"
    );
    assert!(found.len() <= 4, "the API takes at most four breakpoints");
    assert_eq!(request["system"][0]["text"], "You add numbers.");
    assert_eq!(request["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(request["messages"][1]["content"][0]["type"], "thinking");

    // What the cache did comes back in the usage.
    let usage = out.usage.unwrap();
    assert_eq!(usage.input_tokens_cache_write, Some(900));
    assert_eq!(usage.input_tokens_cache_read, Some(4000));
}

#[tokio::test]
async fn no_breakpoint_when_caching_is_off_or_the_model_cannot_cache() {
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let server = server_with_usage(usage.clone()).await;
    send(
        &*model(&server, "claude-sonnet-4-5"),
        &GenerateConfig::default().cache_prompt(false),
    )
    .await;
    let old = server_with_usage(usage).await;
    send(&*model(&old, "claude-2.1"), &GenerateConfig::default()).await;
    for request in [
        &anthropic_requests(&server).await[0],
        &anthropic_requests(&old).await[0],
    ] {
        let mut found = Vec::new();
        breakpoints(request, "", &mut found);
        assert!(found.is_empty(), "{found:?}");
        // The system prompt stays a plain string.
        assert_eq!(request["system"], "You add numbers.");
    }
}

#[tokio::test]
async fn a_first_turn_marks_what_it_has() {
    let server = server_with_usage(json!({"input_tokens": 10, "output_tokens": 5})).await;
    let model = model(&server, "claude-haiku-4-5");
    let input = [ChatMessage::user("Hi")];
    model.generate(GenerateRequest::new(&input)).await.unwrap();
    let request = &anthropic_requests(&server).await[0];
    let mut found = Vec::new();
    breakpoints(request, "", &mut found);
    // One block only: the automatic breakpoint covers it, there is no second-to-last.
    assert_eq!(found, vec!["".to_owned()]);
}
