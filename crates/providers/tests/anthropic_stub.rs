//! Anthropic Messages against a stub server: every request body is checked against
//! `messages-request.schema.json`, every fixture against `message-response.schema.json`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_model::{
    ChatMessage, ChatMessageAssistant, GenerateConfig, GenerateRequest, MessageContent, Model,
    ModelError, ModelOutput, StopReason, ToolCall, ToolCallError,
};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::{Content, ToolChoice, ToolErrorKind, ToolInfo};
use common::{anthropic_message, anthropic_ok, anthropic_requests, tools};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn model_at(url: &str, options: ModelOptions) -> Arc<dyn Model> {
    options
        .api_key("sk-ant-test")
        .base_url(url)
        .env(|_| None)
        .retry(
            RetryPolicy::default()
                .max_attempts(3)
                .backoff(Duration::from_millis(5), Duration::from_millis(20)),
        )
        .build("anthropic/claude-test")
        .unwrap()
}

async fn stub(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
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
    let request = GenerateRequest::new(input)
        .tools(tools)
        .tool_choice(choice)
        .config(config);
    model.generate(request).await
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

fn text_reply() -> ResponseTemplate {
    anthropic_ok(anthropic_message(
        json!([{"type": "text", "text": "ok", "citations": null}]),
        "end_turn",
    ))
}

#[tokio::test]
async fn tool_results_go_first_in_one_user_message_and_thinking_is_replayed() {
    let server = stub(text_reply()).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let mut assistant = ChatMessageAssistant::new(MessageContent::Parts(vec![
        Content::Reasoning {
            reasoning: "Two sums.".into(),
            signature: Some("sig-1".into()),
            redacted: false,
            internal: None,
        },
        Content::Reasoning {
            reasoning: String::new(),
            signature: Some("opaque".into()),
            redacted: true,
            internal: None,
        },
        // Reasoning from another provider has no signature and is not replayed.
        Content::Reasoning {
            reasoning: "foreign".into(),
            signature: None,
            redacted: false,
            internal: None,
        },
        Content::text("Adding."),
    ]));
    assistant.tool_calls = Some(vec![
        ToolCall::new("toolu_1", "add", json!({"x": 1, "y": 2})),
        ToolCall::new("toolu_2", "add", json!({"x": "two"})),
    ]);
    let input = [
        ChatMessage::system("Be exact."),
        ChatMessage::user("Add things."),
        ChatMessage::Assistant(Box::new(assistant)),
        ChatMessage::tool("3", "toolu_1", "add", None),
        ChatMessage::tool(
            "",
            "toolu_2",
            "add",
            Some(ToolCallError {
                kind: ToolErrorKind::Parsing,
                message: "x: 'two' is not of type 'integer'".into(),
            }),
        ),
        ChatMessage::user("Go on."),
    ];
    // The rendering alone: cache breakpoints (on by default) have a test of their own.
    let config = GenerateConfig::default()
        .max_tokens(100)
        .temperature(0.2)
        .cache_prompt(false);
    generate(&*model, &input, &[tools::add()], &ToolChoice::Auto, &config)
        .await
        .unwrap();
    let request = &anthropic_requests(&server).await[0];
    assert_eq!(request["system"], "Be exact.");
    assert_eq!(request["max_tokens"], 100);
    assert_eq!(request["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        request["tools"][0]["input_schema"]["required"],
        json!(["x", "y"])
    );
    assert_eq!(
        request["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Add things."}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two sums.", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"x": 1, "y": 2}},
                {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"x": "two"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "3"}]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "x: 'two' is not of type 'integer'", "is_error": true},
                {"type": "text", "text": "Go on."},
            ]},
        ])
    );
}

#[tokio::test]
async fn thinking_tool_use_usage_and_stop_reason_come_back() {
    let mut body = anthropic_message(
        json!([
            {"type": "thinking", "thinking": "I should add.", "signature": "EqQBCkYIARgCIkBsig"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Let me add.", "citations": null},
            {"type": "tool_use", "id": "toolu_01", "name": "add", "input": {"x": 3, "y": 4}},
            {"type": "tool_use", "id": "toolu_02", "name": "add", "input": {"x": 5, "y": 6}},
        ]),
        "tool_use",
    );
    body["usage"] = json!({"input_tokens": 50, "output_tokens": 20, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 100});
    let server = stub(anthropic_ok(body)).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let out = generate(
        &*model,
        &[ChatMessage::user("3+4, 5+6?")],
        &[tools::add()],
        &ToolChoice::Auto,
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
        matches!(&parts[0], Content::Reasoning { reasoning, signature: Some(s), redacted: false, .. } if reasoning == "I should add." && s == "EqQBCkYIARgCIkBsig")
    );
    assert!(
        matches!(&parts[1], Content::Reasoning { signature: Some(s), redacted: true, .. } if s == "EmwKAhgBEgy3va3pzix")
    );
    assert_eq!(message.content.text(), "Let me add.");
    let calls = message.calls();
    assert_eq!(
        (
            calls[0].id.as_str(),
            calls[1].arguments.to_map().unwrap()["y"].clone()
        ),
        ("toolu_01", json!(6))
    );
    let usage = out.usage.unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.total_tokens),
        (50, 20, 175)
    );
    assert_eq!(
        (
            usage.input_tokens_cache_write,
            usage.input_tokens_cache_read
        ),
        (Some(5), Some(100))
    );

    // The same output, replayed as the next turn's history, sends the blocks back as they came.
    let mut history = vec![
        ChatMessage::user("3+4, 5+6?"),
        ChatMessage::Assistant(Box::new(message.clone())),
    ];
    history.push(ChatMessage::tool("7", "toolu_01", "add", None));
    history.push(ChatMessage::tool("11", "toolu_02", "add", None));
    generate(
        &*model,
        &history,
        &[tools::add()],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let replay = &anthropic_requests(&server).await[1];
    assert_eq!(
        replay["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "I should add.", "signature": "EqQBCkYIARgCIkBsig"})
    );
    assert_eq!(
        replay["messages"][1]["content"][1],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"})
    );
    assert_eq!(
        replay["messages"][2]["content"].as_array().unwrap().len(),
        2
    );
}

#[tokio::test]
async fn tool_choice_and_disable_parallel_tool_use() {
    let server = stub(text_reply()).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let input = [ChatMessage::user("go")];
    let serial = GenerateConfig::default().parallel_tool_calls(false);
    generate(
        &*model,
        &input,
        &[tools::add()],
        &ToolChoice::function("add"),
        &serial,
    )
    .await
    .unwrap();
    generate(
        &*model,
        &input,
        &[tools::add()],
        &ToolChoice::Any,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    generate(
        &*model,
        &input,
        &[tools::add()],
        &ToolChoice::None,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let requests = anthropic_requests(&server).await;
    assert_eq!(
        requests[0]["tool_choice"],
        json!({"type": "tool", "name": "add", "disable_parallel_tool_use": true})
    );
    assert_eq!(
        requests[0]["max_tokens"], 4096,
        "max_tokens is required; the default fills it"
    );
    assert_eq!(requests[1]["tool_choice"], json!({"type": "any"}));
    assert!(requests[2].get("tools").is_none() && requests[2].get("tool_choice").is_none());
}

#[tokio::test]
async fn stop_reasons_map() {
    for (reason, expected) in [
        ("end_turn", StopReason::Stop),
        ("max_tokens", StopReason::MaxTokens),
        ("refusal", StopReason::ContentFilter),
        ("model_context_window_exceeded", StopReason::ModelLength),
        ("stop_sequence", StopReason::Stop),
    ] {
        let body = anthropic_message(
            json!([{"type": "text", "text": "x", "citations": null}]),
            reason,
        );
        let server = stub(anthropic_ok(body)).await;
        let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
            .await
            .unwrap();
        assert_eq!(out.stop_reason(), Some(expected), "{reason}");
    }
}

#[tokio::test]
async fn prompt_too_long_is_a_model_length_output() {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}});
    let server = stub(ResponseTemplate::new(400).set_body_json(body)).await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ModelLength));
    assert!(out.completion().contains("prompt is too long"));
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(529).set_body_json(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(text_reply())
        .mount(&server)
        .await;
    let out = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    assert_eq!(anthropic_requests(&server).await.len(), 3);

    let server = stub(ResponseTemplate::new(529).set_body_json(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ))
    .await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::Overloaded { status: 529, message, .. }) if message == "Overloaded"),
        "{err:?}"
    );
}

#[tokio::test]
async fn authentication_errors_name_the_variable() {
    let body = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let server = stub(ResponseTemplate::new(401).set_body_json(body)).await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("ANTHROPIC_API_KEY")
            && err.to_string().contains("invalid x-api-key"),
        "{err}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_malformed_body_is_a_clear_error() {
    let server = stub(ResponseTemplate::new(200).set_body_raw(
        r#"{"id": "msg_1", "type": "message", "content": [{"type": "te"#,
        "application/json",
    ))
    .await;
    let err = ask(&*model_at(&server.uri(), ModelOptions::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::MalformedResponse { message, .. }) if message.contains("not a Messages API message")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_empty_assistant_turn_is_refused_before_sending() {
    let server = stub(text_reply()).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let input = [
        ChatMessage::user("q"),
        ChatMessage::assistant(""),
        ChatMessage::user("again"),
    ];
    let err = generate(
        &*model,
        &input,
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::InvalidConversation { message, .. }) if message.contains("message 1")),
        "{err}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
    let _: Value = json!(null);
}

#[tokio::test]
async fn images_and_documents_in_user_messages() {
    use actuator_tool_core::{Media, MediaSource};
    let server = stub(text_reply()).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let image = Content::Image(Media {
        source: MediaSource::Base64 {
            data: "iVBORw0KGgo=".into(),
        },
        media_type: "image/png".into(),
        filename: None,
        internal: None,
    });
    let input = [ChatMessage::user(MessageContent::Parts(vec![
        Content::text("What is this?"),
        image,
        Content::Document(Media {
            source: MediaSource::Url {
                url: "https://example.invalid/a.pdf".into(),
            },
            media_type: "application/pdf".into(),
            filename: None,
            internal: None,
        }),
    ]))];
    generate(
        &*model,
        &input,
        &[],
        &ToolChoice::Auto,
        &GenerateConfig::default().cache_prompt(false),
    )
    .await
    .unwrap();
    let request = &anthropic_requests(&server).await[0];
    assert_eq!(
        request["messages"][0]["content"],
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "document", "source": {"type": "url", "url": "https://example.invalid/a.pdf"}},
        ])
    );
}

/// A parameter name Anthropic rejects (`^[a-zA-Z0-9_.-]{1,64}$`) goes out renamed; the model's
/// call comes back under the tool's own name, and goes out renamed again when replayed.
#[tokio::test]
async fn parameter_names_anthropic_rejects_are_renamed_and_mapped_back() {
    let mut params = actuator_tool_core::ToolParams::default();
    params
        .properties
        .insert("filter[id]".into(), json!({"type": "string"}));
    params.required.push("filter[id]".into());
    let tool = Arc::new(ToolInfo::new("list_apps", "List apps.", params));
    let wire = actuator_dialect::anthropic(&tool).tool["input_schema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    assert_ne!(wire, "filter[id]");
    let body = anthropic_message(
        json!([{"type": "tool_use", "id": "toolu_1", "name": "list_apps", "input": {wire.clone(): "42"}}]),
        "tool_use",
    );
    let server = stub(anthropic_ok(body)).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let tools = [tool];
    let out = generate(
        &*model,
        &[ChatMessage::user("List app 42.")],
        &tools,
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let message = out.message().unwrap().clone();
    assert_eq!(
        message.calls()[0].arguments.to_value().unwrap(),
        json!({"filter[id]": "42"})
    );
    let history = [
        ChatMessage::user("List app 42."),
        ChatMessage::Assistant(Box::new(message)),
        ChatMessage::tool("[]", "toolu_1", "list_apps", None),
    ];
    generate(
        &*model,
        &history,
        &tools,
        &ToolChoice::Auto,
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    let requests = anthropic_requests(&server).await;
    assert_eq!(
        requests[0]["tools"][0]["input_schema"]["required"],
        json!([wire.clone()])
    );
    assert_eq!(
        requests[1]["messages"][1]["content"][0]["input"],
        json!({wire: "42"})
    );
}
