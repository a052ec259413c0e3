//! Streamed answers (server-sent events) for both wire formats: every replayed event is first
//! checked against the official stream schemas (`CreateChatCompletionStreamResponse`,
//! Anthropic's `stream-event.schema.json`), every request against the request schemas.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_model::{
    ChatMessage, GenerateConfig, GenerateRequest, MessageContent, Model, ModelError, ModelOutput,
    StopReason,
};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::Content;
use common::{spec, tools};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn retries(n: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(n)
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
}

/// An OpenAI event stream of `chunks` (each checked against the chunk schema), then `[DONE]`
/// when `done`.
fn openai_sse(chunks: &[Value], done: bool) -> ResponseTemplate {
    let mut body = String::new();
    for chunk in chunks {
        spec::assert_valid(
            &spec::openai().chat_chunk,
            chunk,
            "CreateChatCompletionStreamResponse",
        );
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// An Anthropic event stream, each event checked against the stream-event schema. `ping` and
/// `error` events are sent by the API but are not members of the SDK's `RawMessageStreamEvent`
/// union the schema was made from, so only their shape is checked here.
fn anthropic_sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for event in events {
        match event["type"].as_str() {
            Some("ping") => assert_eq!(event, &json!({"type": "ping"})),
            Some("error") => {
                assert!(
                    event["error"]["type"].is_string() && event["error"]["message"].is_string()
                );
            }
            _ => spec::assert_valid(
                &spec::anthropic().stream_event,
                event,
                "anthropic RawMessageStreamEvent",
            ),
        }
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
}

fn openai_model(url: &str, retry: RetryPolicy) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .stream(true)
        .retry(retry)
        .build("openai/gpt-test")
        .unwrap()
}

fn anthropic_model(url: &str, stream: Option<bool>) -> Arc<dyn Model> {
    let mut options = ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(url)
        .env(|_| None)
        .retry(retries(3));
    if let Some(stream) = stream {
        options = options.stream(stream);
    }
    options.build("anthropic/claude-test").unwrap()
}

async fn ask(model: &dyn Model, config: &GenerateConfig) -> Result<ModelOutput, ModelError> {
    model
        .generate(
            GenerateRequest::new(&[ChatMessage::user("3 + 4 and 5 + 6?")])
                .tools(&[tools::read(), tools::add()])
                .config(config),
        )
        .await
}

async fn mount(server: &MockServer, response: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST")).respond_with(response);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

fn openai_tool_stream() -> Vec<Value> {
    let mut usage = json!({
        "id": "chatcmpl-s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "gpt-test",
        "choices": [],
        "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42, "prompt_tokens_details": {"cached_tokens": 10}},
    });
    usage["usage"]["completion_tokens_details"] = json!({"reasoning_tokens": 4});
    vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Adding "}), None),
        chunk(json!({"content": "both."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"x\": 3, "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a\", \"limit\": null}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"y\": 4}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        usage,
    ]
}

#[tokio::test]
async fn openai_chunks_aggregate_into_one_output() {
    let server = MockServer::start().await;
    mount(&server, openai_sse(&openai_tool_stream(), true), None).await;
    let out = ask(
        &*openai_model(&server.uri(), retries(1)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    let message = out.message().unwrap();
    assert_eq!(message.content.text(), "Adding both.");
    let calls = message.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].function.as_str()),
        ("call_1", "add")
    );
    assert_eq!(
        calls[0].arguments.to_value().unwrap(),
        json!({"x": 3, "y": 4})
    );
    // Strict-mode nulls are stripped from streamed arguments too.
    assert_eq!(calls[1].arguments.to_value().unwrap(), json!({"path": "a"}));
    let usage = out.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.input_tokens_cache_read,
            usage.reasoning_tokens
        ),
        (20, 12, Some(10), Some(4))
    );
    let requests = common::openai_requests(&server).await;
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(
        requests[0]["stream_options"],
        json!({"include_usage": true})
    );
}

#[tokio::test]
async fn an_openai_stream_cut_short_is_retried_then_a_clear_error() {
    let mut cut = openai_tool_stream();
    cut.truncate(5);
    let server = MockServer::start().await;
    mount(&server, openai_sse(&cut, false), Some(1)).await;
    mount(&server, openai_sse(&openai_tool_stream(), true), None).await;
    let out = ask(
        &*openai_model(&server.uri(), retries(3)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.message().unwrap().calls().len(), 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);

    let server = MockServer::start().await;
    mount(&server, openai_sse(&cut, false), None).await;
    let err = ask(
        &*openai_model(&server.uri(), retries(1)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::Connection { message, .. }) if message.contains("ended before")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_openai_error_mid_stream_is_an_error_and_a_bad_event_is_malformed() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        chunk(json!({"content": "Hel"}), None),
        json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}})
    );
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"),
        None,
    )
    .await;
    let err = ask(
        &*openai_model(&server.uri(), retries(2)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::Server { message, .. }) if message.contains("while processing")),
        "{err:?}"
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        2,
        "a server error mid-stream is retried"
    );

    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(
            "data: {\"choices\": [{\"delta\": 7}]}\n\n",
            "text/event-stream",
        ),
        None,
    )
    .await;
    let err = ask(
        &*openai_model(&server.uri(), retries(2)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::MalformedResponse { provider, message }) if provider == "OpenAI" && message.contains("not a chat completion chunk")),
        "{err:?}"
    );
}

fn anthropic_tool_stream() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {
            "id": "msg_s1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 40, "output_tokens": 1, "cache_read_input_tokens": 8}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "sums."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBsig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "", "citations": null}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Adding."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"x\": 3,"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": " \"y\": 4}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"x\": 5, \"y\""}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]
}

#[tokio::test]
async fn anthropic_events_aggregate_into_one_output() {
    let server = MockServer::start().await;
    mount(&server, anthropic_sse(&anthropic_tool_stream()), None).await;
    let out = ask(
        &*anthropic_model(&server.uri(), Some(true)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    let message = out.message().unwrap();
    let MessageContent::Parts(parts) = &message.content else {
        panic!("{:?}", message.content)
    };
    assert!(
        matches!(&parts[0], Content::Reasoning { reasoning, signature: Some(s), .. } if reasoning == "Two sums." && s == "EqQBsig"),
        "{parts:?}"
    );
    assert_eq!(message.content.text(), "Adding.");
    let calls = message.calls();
    assert_eq!(
        calls[0].arguments.to_value().unwrap(),
        json!({"x": 3, "y": 4})
    );
    // Input cut off mid-object is a parse error the model is told about, not a failure.
    assert!(
        calls[1]
            .parse_error
            .as_deref()
            .unwrap()
            .starts_with("Error parsing the following tool call arguments:")
    );
    let usage = out.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.input_tokens_cache_read
        ),
        (40, 30, Some(8))
    );
    let requests = common::bodies(&server).await;
    spec::assert_valid(
        &spec::anthropic().request_streaming,
        &requests[0],
        "anthropic MessageCreateParamsStreaming",
    );
    assert_eq!(requests[0]["stream"], true);
}

#[tokio::test]
async fn anthropic_streams_by_default_only_for_long_answers() {
    let server = MockServer::start().await;
    mount(&server, anthropic_sse(&anthropic_tool_stream()), None).await;
    let model = anthropic_model(&server.uri(), None);
    ask(&*model, &GenerateConfig::default().max_tokens(32_000))
        .await
        .unwrap();
    let requests = common::bodies(&server).await;
    assert_eq!(requests[0]["stream"], true);
    spec::assert_valid(
        &spec::anthropic().request_streaming,
        &requests[0],
        "anthropic MessageCreateParamsStreaming",
    );

    let server = MockServer::start().await;
    let reply = common::anthropic_message(
        json!([{"type": "text", "text": "ok", "citations": null}]),
        "end_turn",
    );
    mount(&server, common::anthropic_ok(reply), None).await;
    ask(
        &*anthropic_model(&server.uri(), None),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let requests = common::anthropic_requests(&server).await;
    assert!(requests[0].get("stream").is_none());
}

#[tokio::test]
async fn an_overloaded_error_event_is_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = MockServer::start().await;
    let mut events = anthropic_tool_stream();
    events.truncate(3);
    events.push(overloaded.clone());
    mount(&server, anthropic_sse(&events), Some(1)).await;
    mount(&server, anthropic_sse(&anthropic_tool_stream()), None).await;
    let out = ask(
        &*anthropic_model(&server.uri(), Some(true)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.message().unwrap().calls().len(), 2);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);

    let server = MockServer::start().await;
    mount(
        &server,
        anthropic_sse(&[anthropic_tool_stream()[0].clone(), overloaded]),
        None,
    )
    .await;
    let err = ask(
        &*anthropic_model(&server.uri(), Some(true)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<ProviderError>(),
            Some(ProviderError::Overloaded { status: 529, .. })
        ),
        "{err:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn an_anthropic_stream_without_message_stop_is_incomplete() {
    let mut events = anthropic_tool_stream();
    events.pop();
    let server = MockServer::start().await;
    mount(&server, anthropic_sse(&events), None).await;
    let err = ask(
        &*anthropic_model(&server.uri(), Some(true)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::Connection { message, .. }) if message.contains("ended before")),
        "{err:?}"
    );
}

#[tokio::test]
async fn streamed_reasoning_deltas_are_kept_with_their_field() {
    let server = MockServer::start().await;
    let chunks = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"reasoning_content": "3 + 4 "}), None),
        chunk(json!({"reasoning_content": "is 7."}), None),
        chunk(json!({"content": "7"}), None),
        chunk(json!({}), Some("stop")),
    ];
    mount(&server, openai_sse(&chunks, true), None).await;
    let out = ask(
        &*openai_model(&server.uri(), retries(1)),
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let MessageContent::Parts(parts) = &out.choices[0].message.content else {
        panic!("no parts: {:?}", out.choices[0].message.content);
    };
    assert!(matches!(
        &parts[0],
        Content::Reasoning { reasoning, internal: Some(Value::String(field)), .. }
            if reasoning == "3 + 4 is 7." && field == "reasoning_content"
    ));
    assert_eq!(out.completion(), "7");
}
