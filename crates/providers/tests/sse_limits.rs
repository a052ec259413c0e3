//! Long server-sent events through the providers: a 4 MiB line is read (in linear time; the
//! old parser needed about a second for it in release, many in debug), and an event past the
//! limit is [`ProviderError::EventTooLarge`], not an unbounded buffer.
#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::{DEFAULT_MAX_SSE_EVENT_BYTES, ModelOptions, ProviderError, RetryPolicy};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const MIB: usize = 1 << 20;

/// A server streaming one Chat Completions chunk whose text is `len` bytes, then `[DONE]`.
async fn long_stream(len: usize) -> MockServer {
    let chunk = json!({
        "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "x".repeat(len)}, "finish_reason": "stop"}],
    });
    let body = format!("data: {chunk}\n\ndata: [DONE]\n\n");
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    server
}

fn options(server: &MockServer) -> ModelOptions {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(format!("{}/v1", server.uri()))
        .env(|_| None)
        .stream(true)
        .retry(RetryPolicy::default().max_attempts(3))
}

async fn ask(model: &dyn Model) -> Result<String, actuator_model::ModelError> {
    let out = model
        .generate(GenerateRequest::new(&[ChatMessage::user("long")]))
        .await?;
    Ok(out.completion())
}

#[tokio::test]
async fn a_four_mib_event_is_read() {
    let server = long_stream(4 * MIB).await;
    let model = options(&server).build("openai/m").unwrap();
    assert_eq!(ask(&*model).await.unwrap().len(), 4 * MIB);
    assert_eq!(DEFAULT_MAX_SSE_EVENT_BYTES, 16 * MIB);
}

#[tokio::test]
async fn an_event_past_the_limit_is_a_typed_error_that_says_how_to_raise_it() {
    let server = long_stream(MIB).await;
    let model = options(&server)
        .max_sse_event_bytes(MIB / 2)
        .build("openai/m")
        .unwrap();
    let err = ask(&*model).await.unwrap_err();
    let provider = err.downcast_ref::<ProviderError>().unwrap();
    assert!(
        matches!(provider, ProviderError::EventTooLarge { limit, .. } if *limit == MIB / 2),
        "{provider:?}"
    );
    assert!(
        err.to_string()
            .contains("ModelOptions::max_sse_event_bytes"),
        "{err}"
    );
    // Not retried: the same server sends the same event again.
    assert!(!err.is_retryable());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // Raising the limit reads it.
    let model = options(&server)
        .max_sse_event_bytes(2 * MIB)
        .build("openai/m")
        .unwrap();
    assert_eq!(ask(&*model).await.unwrap().len(), MIB);
}

/// A server answering with one non-streamed Chat Completions body of about `len` bytes.
async fn long_answer(len: usize) -> MockServer {
    let body = json!({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x".repeat(len)}, "finish_reason": "stop"}],
    });
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_non_streamed_answer_past_the_limit_is_a_typed_error_not_an_unbounded_read() {
    let server = long_answer(2 * MIB).await;
    let model = options(&server)
        .stream(false)
        .max_sse_event_bytes(MIB)
        .build("openai/m")
        .unwrap();
    let err = ask(&*model).await.unwrap_err();
    let provider = err.downcast_ref::<ProviderError>().unwrap();
    assert!(
        matches!(provider, ProviderError::ResponseTooLarge { limit, .. } if *limit == MIB),
        "{provider:?}"
    );
    assert!(err.to_string().contains("max_sse_event_bytes"), "{err}");
    // Not retried: one request only.
    assert!(!err.is_retryable());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // Under the limit the same answer is read whole.
    let model = options(&server)
        .stream(false)
        .max_sse_event_bytes(4 * MIB)
        .build("openai/m")
        .unwrap();
    assert!(ask(&*model).await.unwrap().len() >= 2 * MIB);
}
