//! Structured output (`GenerateConfig::response_schema`, `generate_structured`): Chat
//! Completions sends `response_format: json_schema`, the Responses API `text.format` and
//! Anthropic `output_config.format`, each request checked against its provider's
//! specification, and the answer comes back as a typed value or an error with the text; llama.cpp's server (llama-cpp-python with SmolLM2)
//! constrains a real model's answer to the schema. (Issue 38 §1.)

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod common;

use std::time::Duration;

use actuator_model::{
    ChatMessage, GenerateConfig, ResponseSchema, StructuredOutputError, generate_structured,
};
use actuator_providers::{ModelOptions, RetryPolicy};
use common::openai::{model_at, stub};
use common::responses::response;
use common::{
    anthropic_message, anthropic_ok, anthropic_requests, chat_completion, openai_ok,
    openai_requests, spec,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The answer's shape.
#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Sum {
    /// The total.
    total: i64,
}

fn answer(text: &str) -> ResponseTemplate {
    openai_ok(chat_completion(
        json!({"role": "assistant", "content": text}),
        "stop",
    ))
}

#[tokio::test]
async fn chat_completions_sends_the_schema_and_returns_the_typed_answer() {
    let server = stub(answer(r#"{"total": 7}"#)).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let input = [ChatMessage::user("What is 3 + 4?")];
    let config = GenerateConfig::default().response_schema(
        ResponseSchema::of::<Sum>()
            .description("The sum.")
            .strict(true),
    );
    let sum: Sum = generate_structured(model.as_ref(), &input, &config)
        .await
        .unwrap();
    assert_eq!(sum, Sum { total: 7 });
    let sent = openai_requests(&server).await;
    let format = &sent[0]["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Sum");
    assert_eq!(format["json_schema"]["description"], "The sum.");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["total"])
    );
}

#[tokio::test]
async fn an_answer_that_breaks_the_schema_is_an_error_with_its_text() {
    for (text, expected) in [
        (r#"{"total": "seven"}"#, "does not follow the schema 'Sum'"),
        ("seven", "is not JSON"),
    ] {
        let server = stub(answer(text)).await;
        let model = model_at(&server.uri(), ModelOptions::new());
        let err = generate_structured::<Sum>(
            model.as_ref(),
            &[ChatMessage::user("3 + 4?")],
            &GenerateConfig::default(),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                StructuredOutputError::Invalid { .. } | StructuredOutputError::NotJson { .. }
            ),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains(expected), "{message}");
        assert!(message.contains(text), "{message}");
        // The schema went out even though the caller's config had none.
        assert_eq!(
            openai_requests(&server).await[0]["response_format"]["json_schema"]["name"],
            "Sum"
        );
    }
}

/// A stub answering `route` with `answer` (a sum of 7), asked for a `Sum` by the model
/// `name`: the typed answer is checked, and the stub returned for its requests.
async fn served_sum(
    route: &str,
    answer: ResponseTemplate,
    name: &str,
    key: &str,
    base_path: &str,
) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(answer)
        .mount(&server)
        .await;
    let model = ModelOptions::new()
        .api_key(key)
        .base_url(format!("{}{base_path}", server.uri()))
        .env(|_| None)
        .build(name)
        .unwrap();
    let sum: Sum = generate_structured(
        model.as_ref(),
        &[ChatMessage::user("3 + 4?")],
        &GenerateConfig::default(),
    )
    .await
    .unwrap();
    assert_eq!(sum.total, 7);
    server
}

#[tokio::test]
async fn the_responses_api_sends_text_format() {
    let output = json!([{
        "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": "{\"total\": 7}", "annotations": [], "logprobs": []}]
    }]);
    let body = response(output, "completed", Value::Null);
    spec::assert_valid(&spec::openai().response, &body, "Response");
    let server = served_sum(
        "/v1/responses",
        ResponseTemplate::new(200).set_body_json(body),
        "openai/o4-mini",
        "sk-test",
        "/v1",
    )
    .await;
    let sent = common::bodies(&server).await;
    spec::assert_valid(&spec::openai().create_response, &sent[0], "CreateResponse");
    let format = &sent[0]["text"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["name"], "Sum");
    assert_eq!(format["schema"]["required"], json!(["total"]));
}

#[tokio::test]
async fn anthropic_sends_output_config_format() {
    let body = anthropic_message(
        json!([{"type": "text", "text": "{\"total\": 7}"}]),
        "end_turn",
    );
    let server = served_sum(
        "/v1/messages",
        anthropic_ok(body),
        "anthropic/claude-test",
        "sk-ant-test",
        "",
    )
    .await;
    let sent = anthropic_requests(&server).await;
    let format = &sent[0]["output_config"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["schema"]["required"], json!(["total"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_constrains_a_real_models_answer_to_the_schema() {
    let Some(llama) = common::servers::llama_server() else {
        return;
    };
    let model = ModelOptions::new()
        .base_url(format!("{}/v1", llama.url()))
        .env(|_| None)
        .config(GenerateConfig::default().max_tokens(40).temperature(0.0))
        .timeout(Duration::from_secs(120))
        .retry(RetryPolicy::none())
        .build("llama-cpp-python/smollm2")
        .unwrap();
    let sum: Sum = generate_structured(
        model.as_ref(),
        &[ChatMessage::user("What is 3 + 4? Answer with the total.")],
        &GenerateConfig::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // A 135M model's arithmetic is not the point: the shape is.
    eprintln!("SmolLM2 answered {sum:?}");
}

/// The answer's schema with an optional property that is not nullable.
fn report_schema() -> ResponseSchema {
    ResponseSchema::new(
        "Report",
        json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer", "description": "The total."},
                "note": {"type": "string", "description": "A remark, if any."}
            },
            "required": ["total"]
        }),
    )
}

#[tokio::test]
async fn openai_gets_the_schema_in_strict_form_and_the_answer_comes_back_without_its_nulls() {
    let server = stub(answer(r#"{"total": 7, "note": null}"#)).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let input = [ChatMessage::user("What is 3 + 4?")];
    let config = GenerateConfig::default().response_schema(report_schema());
    let out = model
        .generate(actuator_model::GenerateRequest::new(&input).config(&config))
        .await
        .unwrap();
    // The null strict mode made the model write for the optional note is gone, so the
    // answer follows the schema the caller gave.
    assert_eq!(
        serde_json::from_str::<Value>(&out.completion()).unwrap(),
        json!({"total": 7})
    );
    let sent = &openai_requests(&server).await[0]["response_format"]["json_schema"];
    assert_eq!(sent["strict"], true);
    assert_eq!(sent["schema"]["required"], json!(["total", "note"]));
    assert_eq!(sent["schema"]["additionalProperties"], false);
    assert_eq!(
        sent["schema"]["properties"]["note"]["type"],
        json!(["string", "null"])
    );
}

#[tokio::test]
async fn a_schema_strict_mode_cannot_take_goes_non_strict_and_compatible_servers_get_it_as_given() {
    // An open map: strict mode wants every object closed.
    let map = ResponseSchema::new(
        "Counts",
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
    )
    .strict(true);
    let server = stub(answer(r#"{"a": 1}"#)).await;
    let model = model_at(&server.uri(), ModelOptions::new());
    let input = [ChatMessage::user("Count.")];
    let config = GenerateConfig::default().response_schema(map.clone());
    model
        .generate(actuator_model::GenerateRequest::new(&input).config(&config))
        .await
        .unwrap();
    let sent = &openai_requests(&server).await[0]["response_format"]["json_schema"];
    assert_eq!(sent["strict"], false, "{sent}");
    assert_eq!(sent["schema"], map.json_schema);

    // A compatible server: the schema as the caller gave it.
    let server = stub(answer(r#"{"total": 7}"#)).await;
    let model = ModelOptions::new()
        .base_url(format!("{}/v1", server.uri()))
        .env(|_| None)
        .build("vllm/qwen")
        .unwrap();
    let config = GenerateConfig::default().response_schema(report_schema());
    model
        .generate(actuator_model::GenerateRequest::new(&input).config(&config))
        .await
        .unwrap();
    let sent = &openai_requests(&server).await[0]["response_format"]["json_schema"];
    assert!(sent.get("strict").is_none(), "{sent}");
    assert_eq!(sent["schema"], report_schema().json_schema);
}
