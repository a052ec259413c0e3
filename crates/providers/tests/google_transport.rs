//! The Gemini provider's transport against a stub (issue 38 §2): streams joined into the same
//! output and a stream cut short retried, errors mapped to `ProviderError` with the API's
//! message, a missing key named, Vertex AI's endpoint and bearer token, and a body that is no
//! answer refused. Every body is checked against the schemas generated from Google's SDK.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actuator_model::{ChatMessage, GenerateRequest, ModelOutput, StopReason};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::Content;
use common::gemini::{MODEL, model_at, ok, requests, stub};
use common::spec::{assert_valid, gemini};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn reasoning_first(out: &ModelOutput) -> Option<String> {
    match &out.message()?.content {
        actuator_model::MessageContent::Parts(parts) => match parts.first()? {
            Content::Reasoning { reasoning, .. } => Some(reasoning.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Answers a streamed request with `pieces` as server-sent events.
struct Streamed(Vec<Value>);

impl Respond for Streamed {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut body = String::new();
        for piece in &self.0 {
            assert_valid(
                &gemini().response,
                piece,
                "GenerateContentResponse (stream piece)",
            );
            body.push_str(&format!("data: {piece}\r\n\r\n"));
        }
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(body)
    }
}

#[tokio::test]
async fn a_stream_is_joined_into_the_same_output() {
    let server = MockServer::start().await;
    let piece = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        json!({"candidates": [candidate], "modelVersion": MODEL})
    };
    let mut last = piece(json!([{"text": "!"}]), Some("STOP"));
    last["usageMetadata"] =
        json!({"promptTokenCount": 8, "candidatesTokenCount": 3, "totalTokenCount": 11});
    Mock::given(method("POST"))
        .and(path(format!(
            "/v1beta/models/{MODEL}:streamGenerateContent"
        )))
        .respond_with(Streamed(vec![
            piece(json!([{"text": "Thinking", "thought": true}]), None),
            piece(json!([{"text": "Hel"}]), None),
            piece(json!([{"text": "lo"}]), None),
            last,
        ]))
        .mount(&server)
        .await;
    let model = model_at(&server, ModelOptions::new().stream(true));
    let input = [ChatMessage::user("Hi")];
    let out = model.generate(GenerateRequest::new(&input)).await.unwrap();
    assert_eq!(out.completion(), "Hello!");
    assert_eq!(out.stop_reason(), Some(StopReason::Stop));
    assert_eq!(out.usage.unwrap().total_tokens, 11);
    assert_eq!(reasoning_first(&out).as_deref(), Some("Thinking"));
    let received = server.received_requests().await.unwrap();
    assert_eq!(received[0].url.query(), Some("alt=sse"));
    requests(&server).await;
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_reason_is_retried_then_an_error() {
    let server = MockServer::start().await;
    let calls = Arc::new(AtomicUsize::new(0));
    struct Cut(Arc<AtomicUsize>);
    impl Respond for Cut {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            self.0.fetch_add(1, Ordering::SeqCst);
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(format!(
                    "data: {}\r\n\r\n",
                    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]})
                ))
        }
    }
    Mock::given(method("POST"))
        .and(path(format!(
            "/v1beta/models/{MODEL}:streamGenerateContent"
        )))
        .respond_with(Cut(calls.clone()))
        .mount(&server)
        .await;
    let model = model_at(&server, ModelOptions::new().stream(true));
    let input = [ChatMessage::user("Hi")];
    let err = model
        .generate(GenerateRequest::new(&input))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("ended before the response was complete"),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

fn error_body(code: u16, status: &str, message: &str) -> ResponseTemplate {
    let body = json!({"error": {"code": code, "message": message, "status": status}});
    assert_valid(&gemini().error, &body, "Gemini error");
    ResponseTemplate::new(code).set_body_json(body)
}

#[tokio::test]
async fn errors_map_to_provider_errors_with_the_apis_message() {
    let server = stub(error_body(
        400,
        "INVALID_ARGUMENT",
        "Invalid JSON payload received.",
    ))
    .await;
    let model = model_at(&server, ModelOptions::new());
    let input = [ChatMessage::user("Hi")];
    let err = model
        .generate(GenerateRequest::new(&input))
        .await
        .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::BadRequest { status: 400, message, .. }) if message == "Invalid JSON payload received."),
        "{err:?}"
    );

    // Rate limits are retried, then reported as such.
    let limited = stub(error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded.")).await;
    let model = model_at(&limited, ModelOptions::new());
    let err = model
        .generate(GenerateRequest::new(&input))
        .await
        .unwrap_err();
    assert_eq!(limited.received_requests().await.unwrap().len(), 3);
    assert!(err.to_string().contains("Quota exceeded."), "{err}");

    // A prompt over the context window is a model_length output, as the reference has it.
    let long = stub(error_body(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ))
    .await;
    let out = model_at(&long, ModelOptions::new())
        .generate(GenerateRequest::new(&input))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ModelLength));
}

#[tokio::test]
async fn a_missing_key_names_the_variable() {
    let Err(err) = ModelOptions::new()
        .env(|_| None)
        .build("google/gemini-2.5-flash")
    else {
        panic!("built without a key")
    };
    assert!(err.to_string().contains("GOOGLE_API_KEY"), "{err}");
    // GEMINI_API_KEY is read too.
    ModelOptions::new()
        .env(|var| (var == "GEMINI_API_KEY").then(|| "k".to_owned()))
        .build("google/gemini-2.5-flash")
        .unwrap();
}

#[tokio::test]
async fn vertex_ai_sends_the_access_token_as_a_bearer_token_to_the_projects_endpoint() {
    let server = MockServer::start().await;
    let base = "/v1/projects/proj/locations/europe-west4/publishers/google";
    Mock::given(method("POST"))
        .and(path(format!("{base}/models/{MODEL}:generateContent")))
        .and(header("authorization", "Bearer ya29.token"))
        .respond_with(ok(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
        })))
        .mount(&server)
        .await;
    let uri = server.uri();
    let model = ModelOptions::new()
        .env(move |var| {
            Some(match var {
                "GOOGLE_GENAI_USE_VERTEXAI" => "true".to_owned(),
                "GOOGLE_CLOUD_PROJECT" => "proj".to_owned(),
                "GOOGLE_CLOUD_LOCATION" => "europe-west4".to_owned(),
                "GOOGLE_CLOUD_ACCESS_TOKEN" => "ya29.token".to_owned(),
                "GOOGLE_BASE_URL" => format!("{uri}{base}"),
                _ => return None,
            })
        })
        .retry(RetryPolicy::none())
        .build(&format!("google/{MODEL}"))
        .unwrap();
    let out = model
        .generate(GenerateRequest::new(&[ChatMessage::user("Hi")]))
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    let received = server.received_requests().await.unwrap();
    assert!(received[0].headers.get("x-goog-api-key").is_none());
}

#[tokio::test]
async fn a_body_that_is_no_answer_is_an_error_not_an_empty_answer() {
    let server =
        stub(ResponseTemplate::new(200).set_body_json(json!({"echo": "hi", "content": 1}))).await;
    let err = model_at(&server, ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("Hi")]))
        .await
        .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::MalformedResponse { message, .. }) if message.contains("no candidate")),
        "{err:?}"
    );
}
