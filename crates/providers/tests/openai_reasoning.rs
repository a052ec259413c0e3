//! Reasoning over Chat Completions: read from the fields compatible servers put it in
//! (`reasoning_content`, `reasoning`) or from a leading `<think>` block, and sent back the same
//! way on the next turn; reasoning another provider produced is not sent. Every response is
//! checked against `CreateChatCompletionResponse` and every request against
//! `CreateChatCompletionRequest`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_model::{ChatMessage, ChatMessageAssistant, GenerateConfig, MessageContent};
use actuator_providers::{ModelOptions, RetryPolicy};
use actuator_tool_core::{Content, ToolChoice};
use common::openai::{generate, model_at, stub};
use common::{chat_completion, openai_ok, openai_requests};
use serde_json::{Value, json};

/// Sends "Hi", gets `message` back, then sends the conversation with it plus "And?": returns
/// the assistant message of the first answer and the second request's assistant message.
async fn round_trip(message: Value) -> (ChatMessageAssistant, Value) {
    let server = stub(openai_ok(chat_completion(message, "stop"))).await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new().retry(RetryPolicy::none()),
    );
    let config = GenerateConfig::default();
    let mut input = vec![ChatMessage::user("Hi")];
    let out = generate(&*model, &input, &[], &ToolChoice::Auto, &config)
        .await
        .unwrap();
    let answer = out.choices[0].message.clone();
    input.push(ChatMessage::Assistant(Box::new(answer.clone())));
    input.push(ChatMessage::user("And?"));
    generate(&*model, &input, &[], &ToolChoice::Auto, &config)
        .await
        .unwrap();
    let requests = openai_requests(&server).await;
    (answer, requests[1]["messages"][1].clone())
}

fn reasoning_of(message: &ChatMessageAssistant) -> Vec<(String, Option<Value>)> {
    match &message.content {
        MessageContent::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Content::Reasoning {
                    reasoning,
                    internal,
                    ..
                } => Some((reasoning.clone(), internal.clone())),
                _ => None,
            })
            .collect(),
        MessageContent::Text(_) => vec![],
    }
}

#[tokio::test]
async fn reasoning_content_goes_back_in_reasoning_content() {
    let (answer, sent) = round_trip(json!({
        "role": "assistant", "content": "7", "refusal": null,
        "reasoning_content": "3 + 4 is 7.",
    }))
    .await;
    assert_eq!(
        reasoning_of(&answer),
        [("3 + 4 is 7.".to_owned(), Some(json!("reasoning_content")))]
    );
    assert_eq!(answer.content.text(), "7");
    assert_eq!(
        sent,
        json!({"role": "assistant", "content": "7", "reasoning_content": "3 + 4 is 7."})
    );
}

#[tokio::test]
async fn reasoning_goes_back_in_reasoning() {
    let (answer, sent) = round_trip(json!({
        "role": "assistant", "content": "7", "refusal": null, "reasoning": "Adding.",
    }))
    .await;
    assert_eq!(
        reasoning_of(&answer),
        [("Adding.".to_owned(), Some(json!("reasoning")))]
    );
    assert_eq!(
        sent,
        json!({"role": "assistant", "content": "7", "reasoning": "Adding."})
    );
}

#[tokio::test]
async fn a_leading_think_block_is_reasoning_and_goes_back_as_one() {
    let (answer, sent) = round_trip(json!({
        "role": "assistant", "refusal": null,
        "content": "  <think>\nThe user greets me.\n</think>\n\nHello!",
    }))
    .await;
    assert_eq!(
        reasoning_of(&answer),
        [("The user greets me.".to_owned(), Some(json!("think")))]
    );
    assert_eq!(answer.content.text(), "Hello!");
    assert_eq!(
        sent,
        json!({"role": "assistant", "content": "<think>\nThe user greets me.\n</think>\nHello!"})
    );
}

#[tokio::test]
async fn think_tags_elsewhere_are_text() {
    let (answer, _) = round_trip(json!({
        "role": "assistant", "refusal": null, "content": "Use <think>…</think> tags.",
    }))
    .await;
    assert!(reasoning_of(&answer).is_empty());
    assert_eq!(answer.content.text(), "Use <think>…</think> tags.");
}

#[tokio::test]
async fn other_providers_reasoning_and_redacted_reasoning_are_not_sent() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "ok", "refusal": null}),
        "stop",
    )))
    .await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new().retry(RetryPolicy::none()),
    );
    let assistant = ChatMessage::assistant(MessageContent::Parts(vec![
        // Anthropic's signed thinking, an OpenAI reasoning item, a redacted block.
        Content::Reasoning {
            reasoning: "signed".into(),
            signature: Some("sig".into()),
            redacted: false,
            internal: None,
        },
        Content::Reasoning {
            reasoning: "item".into(),
            signature: None,
            redacted: false,
            internal: Some(json!({"id": "rs_1"})),
        },
        Content::Reasoning {
            reasoning: String::new(),
            signature: None,
            redacted: true,
            internal: Some(json!("reasoning_content")),
        },
        Content::text("Hello"),
    ]));
    let input = [
        ChatMessage::user("Hi"),
        assistant,
        ChatMessage::user("And?"),
    ];
    generate(
        &*model,
        &input,
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let requests = openai_requests(&server).await;
    assert_eq!(
        requests[0]["messages"][1],
        json!({"role": "assistant", "content": "Hello"})
    );
}
