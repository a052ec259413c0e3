//! OpenAI Chat Completions against a stub server: every request body is checked against
//! `CreateChatCompletionRequest`, every fixture against `CreateChatCompletionResponse`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_model::{
    ChatMessage, ChatMessageAssistant, GenerateConfig, StopReason, ToolCall, ToolCallError,
};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::{ToolChoice, ToolErrorKind};
use common::openai::{ask, generate, model_at, provider_error, stub};
use common::{chat_completion, openai_ok, openai_requests, tools};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer};

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
        calls[0].arguments.to_value().unwrap(),
        json!({"path": "a.txt"})
    );
    // `tag` could not be strict (a map): its null is the model's, left for validation to judge.
    assert_eq!(
        calls[1].arguments.to_value().unwrap(),
        json!({"labels": {"k": "v"}, "note": null})
    );
    assert_eq!(calls[2].arguments.to_map().unwrap()["y"], 2);
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
        ChatMessage::Assistant(Box::new(assistant)),
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
    assert_eq!(calls[1].arguments.to_map().unwrap()["y"], 2);
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
        ChatMessage::Assistant(Box::new(assistant)),
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

#[tokio::test(flavor = "current_thread")]
async fn what_the_dialect_changed_is_logged_per_tool() {
    let logs = common::Captured::default();
    let _guard = logs.install(tracing::Level::DEBUG);
    let server = stub(openai_ok(chat_completion(
        json!({"role": "assistant", "content": "ok", "refusal": null}),
        "stop",
    )))
    .await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new().retry(RetryPolicy::none()),
    );
    generate(
        &*model,
        &[ChatMessage::user("Hi")],
        &[tools::add(), tools::read(), tools::tag()],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let text = logs.text();
    let reports: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("OpenAI dialect changed the tool's schema"))
        .collect();
    // `add` goes out strict unchanged: nothing to report. `read`'s optional `limit` becomes
    // nullable; `tag`'s map cannot be strict and goes out non-strict.
    assert_eq!(reports.len(), 2, "{text}");
    assert!(
        reports[0].contains("tool=read")
            && reports[0].contains("strict=true")
            && reports[0].contains("limit"),
        "{text}"
    );
    assert!(
        reports[1].contains("tool=tag") && reports[1].contains("strict=false"),
        "{text}"
    );
}
