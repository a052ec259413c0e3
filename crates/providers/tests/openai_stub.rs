//! OpenAI Chat Completions against a stub server: every request body is checked against
//! `CreateChatCompletionRequest`, every fixture against `CreateChatCompletionResponse`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actuator_model::{
    ChatMessage, ChatMessageAssistant, GenerateConfig, Model, ModelError, ModelOutput, StopReason,
    ToolCall, ToolCallError,
};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::{ToolChoice, ToolErrorKind, ToolInfo};
use common::{chat_completion, openai_ok, openai_requests, tools};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fast_retries(attempts: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(attempts)
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
}

fn model_at(url: &str, options: ModelOptions) -> Arc<dyn Model> {
    options
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .build("openai/gpt-test")
        .unwrap()
}

async fn stub(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

async fn generate(
    model: &dyn Model,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    choice: &ToolChoice,
    config: &GenerateConfig,
) -> Result<ModelOutput, ModelError> {
    model.generate(input, tools, choice, config).await
}

async fn ask(model: &dyn Model) -> Result<ModelOutput, ModelError> {
    generate(
        model,
        &[ChatMessage::user("Hi")],
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
}

fn provider_error(err: &ModelError) -> &ProviderError {
    err.downcast_ref::<ProviderError>()
        .unwrap_or_else(|| panic!("not a ProviderError: {err:?}"))
}

#[tokio::test]
async fn text_answer_with_usage_and_the_request_it_came_from() {
    let mut body = chat_completion(
        json!({"role": "assistant", "content": "Hello!", "refusal": null}),
        "stop",
    );
    body["usage"] = json!({
        "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 60},
        "completion_tokens_details": {"reasoning_tokens": 7}
    });
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test"))
        .and(header("x-custom", "yes"))
        .respond_with(openai_ok(body))
        .mount(&server)
        .await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new()
            .header("x-custom", "yes")
            .config(GenerateConfig::default().max_tokens(64).temperature(0.5)),
    );
    let input = [ChatMessage::system("Be brief."), ChatMessage::user("Hi")];
    let config = GenerateConfig::default().temperature(0.0);
    let out = generate(&*model, &input, &[], &ToolChoice::Auto, &config)
        .await
        .unwrap();
    assert_eq!(out.completion(), "Hello!");
    assert_eq!(out.stop_reason(), Some(StopReason::Stop));
    assert_eq!(out.model, "gpt-test");
    let usage = out.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (40, 20, 120)
    );
    assert_eq!(usage.input_tokens_cache_read, Some(60));
    assert_eq!(usage.reasoning_tokens, Some(7));
    let requests = openai_requests(&server).await;
    assert_eq!(
        requests[0],
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
            ],
            // OpenAI itself takes max_completion_tokens; the call's temperature wins over the default.
            "max_completion_tokens": 64,
            "temperature": 0.0,
        })
    );
}

#[tokio::test]
async fn parallel_tool_calls_with_strict_nulls_stripped() {
    let message = json!({
        "role": "assistant", "content": null, "refusal": null,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a.txt\", \"limit\": null}"}},
            {"id": "call_b", "type": "function", "function": {"name": "tag", "arguments": "{\"labels\": {\"k\": \"v\"}, \"note\": null}"}},
            {"id": "call_c", "type": "function", "function": {"name": "add", "arguments": "{\"x\": 1, \"y\": 2}"}},
        ]
    });
    let server = stub(openai_ok(chat_completion(message, "tool_calls"))).await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new().retry(RetryPolicy::none()),
    );
    let tools = [tools::read(), tools::tag(), tools::add()];
    let config = GenerateConfig::default().parallel_tool_calls(true);
    let out = generate(
        &*model,
        &[ChatMessage::user("go")],
        &tools,
        &ToolChoice::Auto,
        &config,
    )
    .await
    .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    let calls = out.message().unwrap().calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].id, "call_a");
    // `read` went out strict: its null for the optional `limit` means "not given".
    assert_eq!(
        Value::Object(calls[0].arguments.clone()),
        json!({"path": "a.txt"})
    );
    // `tag` could not be strict (a map): its null is the model's, left for validation to judge.
    assert_eq!(
        Value::Object(calls[1].arguments.clone()),
        json!({"labels": {"k": "v"}, "note": null})
    );
    assert_eq!(calls[2].arguments["y"], 2);
    let request = &openai_requests(&server).await[0];
    assert_eq!(request["parallel_tool_calls"], true);
    assert_eq!(request["tool_choice"], "auto");
    let strict: Vec<&Value> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"]["strict"])
        .collect();
    assert_eq!(strict, [&json!(true), &json!(false), &json!(true)]);
    assert_eq!(
        request["tools"][0]["function"]["parameters"]["required"],
        json!(["path", "limit"])
    );
}

#[tokio::test]
async fn tool_choice_maps_to_the_api_values() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "ok"}),
        "stop",
    )))
    .await;
    let model = model_at(&server.uri(), ModelOptions::new().strict_tools(false));
    let tools = [tools::add(), tools::read()];
    let input = [ChatMessage::user("go")];
    let config = GenerateConfig::default().parallel_tool_calls(false);
    for choice in [
        ToolChoice::Any,
        ToolChoice::function("add"),
        ToolChoice::None,
    ] {
        generate(&*model, &input, &tools, &choice, &config)
            .await
            .unwrap();
    }
    let requests = openai_requests(&server).await;
    assert_eq!(requests[0]["tool_choice"], "required");
    assert_eq!(requests[0]["parallel_tool_calls"], false);
    // Non-strict tools carry their schema as is, without `strict`.
    assert_eq!(
        requests[0]["tools"][1]["function"]["parameters"]["required"],
        json!(["path"])
    );
    assert!(requests[0]["tools"][1]["function"].get("strict").is_none());
    assert_eq!(
        requests[1]["tool_choice"],
        json!({"type": "function", "function": {"name": "add"}})
    );
    // None: no tools at all.
    assert!(requests[2].get("tools").is_none() && requests[2].get("tool_choice").is_none());
}

#[tokio::test]
async fn a_whole_conversation_renders_as_the_api_wants() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "7"}),
        "stop",
    )))
    .await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![
        ToolCall::new("c1", "add", json!({"x": 3, "y": 4})),
        ToolCall::new("c2", "add", json!({"x": "three"})),
    ]);
    let input = [
        ChatMessage::user("What is 3 + 4?"),
        ChatMessage::Assistant(assistant),
        ChatMessage::tool("7", "c1", "add", None),
        ChatMessage::tool(
            "",
            "c2",
            "add",
            Some(ToolCallError {
                kind: ToolErrorKind::Parsing,
                message: "x: 'three' is not of type 'integer'".into(),
            }),
        ),
    ];
    generate(
        &*model,
        &input,
        &[tools::add()],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let request = &openai_requests(&server).await[0];
    assert_eq!(
        request["messages"],
        json!([
            {"role": "user", "content": "What is 3 + 4?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"x\":3,\"y\":4}"}},
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": "{\"x\":\"three\"}"}},
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "7"},
            {"role": "tool", "tool_call_id": "c2", "content": "Error: x: 'three' is not of type 'integer'"},
        ])
    );
}

#[tokio::test]
async fn malformed_arguments_become_a_parse_error_not_a_failure() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"x\": 1, \"y\": "}},
        {"id": "call_2", "type": "function", "function": {"name": "add", "arguments": "{\"x\": 1, \"y\": 2}\""}},
    ]});
    let server = stub(openai_ok(chat_completion(message, "tool_calls"))).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let out = generate(
        &*model,
        &[ChatMessage::user("go")],
        &[tools::add()],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let calls = out.message().unwrap().calls();
    let err = calls[0].parse_error.as_deref().unwrap();
    assert!(
        err.starts_with("Error parsing the following tool call arguments:"),
        "{err}"
    );
    // Stray quotes after a complete object are recovered.
    assert!(calls[1].parse_error.is_none());
    assert_eq!(calls[1].arguments["y"], 2);
}

#[tokio::test]
async fn a_refusal_is_a_content_filter_stop() {
    let message =
        json!({"role": "assistant", "content": null, "refusal": "I can't help with that."});
    let server = stub(openai_ok(chat_completion(message, "stop"))).await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ContentFilter));
    assert_eq!(out.completion(), "I can't help with that.");
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": ""}),
        "content_filter",
    )))
    .await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ContentFilter));
}

#[tokio::test]
async fn length_is_a_max_tokens_stop() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "The answer is"}),
        "length",
    )))
    .await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::MaxTokens));
    assert_eq!(out.completion(), "The answer is");
}

#[tokio::test]
async fn a_context_window_error_is_a_model_length_output() {
    let body = json!({"error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"
    }});
    let server = stub(ResponseTemplate::new(400).set_body_json(body)).await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ModelLength));
    assert!(out.completion().contains("maximum context length"));
    // Also from a compatible server that gives no code (llama.cpp's words).
    let body = json!({"error": {"message": "Requested tokens (3000) exceed context window of 2048", "type": "invalid_request_error"}});
    let server = stub(ResponseTemplate::new(400).set_body_json(body)).await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ModelLength));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "a 400 is not retried"
    );
}

#[tokio::test]
async fn other_bad_requests_carry_the_providers_message() {
    let body = json!({"error": {"message": "Invalid value for 'temperature'", "type": "invalid_request_error", "code": "invalid_value"}});
    let server = stub(ResponseTemplate::new(400).set_body_json(body)).await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(!err.is_retryable());
    match provider_error(&err) {
        ProviderError::BadRequest {
            status: 400,
            message,
            code,
            ..
        } => {
            assert_eq!(message, "Invalid value for 'temperature'");
            assert_eq!(code.as_deref(), Some("invalid_value"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn authentication_errors_name_the_variable() {
    let body = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}});
    let server = stub(ResponseTemplate::new(401).set_body_json(body)).await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(provider_error(&err), ProviderError::Authentication { var, .. } if var == "OPENAI_API_KEY")
    );
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    let server = stub(ResponseTemplate::new(404).set_body_string("no such route")).await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(provider_error(&err), ProviderError::NotFound { message, .. } if message == "no such route")
    );
}

#[tokio::test]
async fn rate_limits_wait_as_long_as_retry_after_says() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok(chat_completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        )))
        .mount(&server)
        .await;
    let model = model_at(&server.uri(), ModelOptions::new().retry(fast_retries(3)));
    let started = Instant::now();
    let out = ask(&*model).await.unwrap();
    assert_eq!(out.completion(), "ok");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited only {:?}",
        started.elapsed()
    );
    assert_eq!(openai_requests(&server).await.len(), 2);
}

#[tokio::test]
async fn a_retry_after_beyond_the_time_budget_gives_up_at_once() {
    let server = stub(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "30")
            .set_body_json(json!({"error": {"message": "slow down", "type": "requests"}})),
    )
    .await;
    let retry = fast_retries(5).max_elapsed(Duration::from_secs(2));
    let started = Instant::now();
    let err = ask(&*model_at(&server.uri(), ModelOptions::new().retry(retry)))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    match provider_error(&err) {
        ProviderError::RateLimited { retry_after, .. } => {
            assert_eq!(*retry_after, Some(Duration::from_secs(30)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_exhausted_quota_is_not_retried() {
    let body = json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}});
    let server = stub(ResponseTemplate::new(429).set_body_json(body)).await;
    let err = ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(4)),
    ))
    .await
    .unwrap_err();
    assert!(!err.is_retryable());
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_attempt_limit() {
    let server = stub(ResponseTemplate::new(500).set_body_json(
        json!({"error": {"message": "The server had an error", "type": "server_error"}}),
    ))
    .await;
    let err = ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(3)),
    ))
    .await
    .unwrap_err();
    assert!(err.is_retryable());
    assert!(
        matches!(
            provider_error(&err),
            ProviderError::Server { status: 500, .. }
        ),
        "{err:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);

    // A 500 then a success: the caller sees only the success.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(openai_ok(chat_completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        )))
        .mount(&server)
        .await;
    let out = ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(3)),
    ))
    .await
    .unwrap();
    assert_eq!(out.completion(), "ok");
}

#[tokio::test]
async fn overloaded_503_is_retried() {
    let server = stub(ResponseTemplate::new(503).set_body_string("overloaded")).await;
    let err = ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(2)),
    ))
    .await
    .unwrap_err();
    assert!(
        matches!(
            provider_error(&err),
            ProviderError::Overloaded { status: 503, .. }
        ),
        "{err:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_truncated_json_body_is_a_clear_error_not_retried() {
    let server = stub(ResponseTemplate::new(200).set_body_raw(
        r#"{"id": "chatcmpl-1", "choices": [{"index": 0, "mess"#,
        "application/json",
    ))
    .await;
    let err = ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(3)),
    ))
    .await
    .unwrap_err();
    match provider_error(&err) {
        ProviderError::MalformedResponse { message, .. } => {
            assert!(
                message.contains("not a Chat Completions response"),
                "{message}"
            );
            assert!(
                message.contains("chatcmpl-1"),
                "the start of the body is shown: {message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // Valid JSON without choices too.
    let server = stub(
        ResponseTemplate::new(200)
            .set_body_json(json!({"object": "chat.completion", "choices": []})),
    )
    .await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no choices"), "{err}");
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_times_out_each_attempt() {
    let server = stub(
        openai_ok(chat_completion(
            json!({"role": "assistant", "content": "late"}),
            "stop",
        ))
        .set_delay(Duration::from_secs(3)),
    )
    .await;
    let options = ModelOptions::new()
        .timeout(Duration::from_millis(200))
        .retry(fast_retries(2));
    let started = Instant::now();
    let err = ask(&*model_at(&server.uri(), options)).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(provider_error(&err), ProviderError::Timeout { after, .. } if *after == Duration::from_millis(200)),
        "{err:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_unanswered_tool_call_is_refused_before_sending() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "x"}),
        "stop",
    )))
    .await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new("c1", "add", json!({"x": 1, "y": 2}))]);
    let input = [
        ChatMessage::user("q"),
        ChatMessage::Assistant(assistant),
        ChatMessage::user("and?"),
    ];
    let err = generate(
        &*model,
        &input,
        &[tools::add()],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(provider_error(&err), ProviderError::InvalidConversation { message, .. } if message.contains("`c1` (add)")),
        "{err}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn compatible_servers_get_max_tokens_and_no_key_when_none_is_set() {
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "ok"}),
        "stop",
    )))
    .await;
    let url = format!("{}/v1", server.uri());
    let model = ModelOptions::new()
        .env(move |var| (var == "VLLM_BASE_URL").then(|| url.clone()))
        .config(GenerateConfig::default().max_tokens(32))
        .build("vllm/Qwen/Qwen3-8B")
        .unwrap();
    assert_eq!(model.name(), "vllm/Qwen/Qwen3-8B");
    ask(&*model).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    common::spec::check_openai_request(&body);
    assert_eq!(body["model"], "Qwen/Qwen3-8B");
    assert_eq!(body["max_tokens"], 32);
    assert!(body.get("max_completion_tokens").is_none());
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn each_retry_is_logged() {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = stub(
        ResponseTemplate::new(500)
            .set_body_json(json!({"error": {"message": "boom", "type": "server_error"}})),
    )
    .await;
    ask(&*model_at(
        &server.uri(),
        ModelOptions::new().retry(fast_retries(3)),
    ))
    .await
    .unwrap_err();
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let retries: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("retrying the request"))
        .collect();
    assert_eq!(retries.len(), 2, "{text}");
    assert!(
        retries[0].contains("attempt=1") && retries[1].contains("attempt=2"),
        "{text}"
    );
    assert!(
        retries[0].contains("HTTP 500") && retries[0].contains("boom"),
        "{text}"
    );
}

#[tokio::test]
async fn images_and_documents_in_user_messages() {
    use actuator_model::MessageContent;
    use actuator_tool_core::{Content, Media, MediaSource};
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "a cat"}),
        "stop",
    )))
    .await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let pdf = Content::Document(Media {
        source: MediaSource::Base64 {
            data: "JVBERi0=".into(),
        },
        media_type: "application/pdf".into(),
        filename: Some("a.pdf".into()),
        internal: None,
    });
    let input = [ChatMessage::user(MessageContent::Parts(vec![
        Content::text("What is this?"),
        Content::image_url("https://example.invalid/cat.png", "image/png"),
        pdf,
    ]))];
    generate(
        &*model,
        &input,
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let request = &openai_requests(&server).await[0];
    assert_eq!(
        request["messages"][0]["content"],
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.png"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"}},
        ])
    );
}
