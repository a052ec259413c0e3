//! The Gemini stub tests' shared pieces: a model at a stub, and valid responses and requests
//! checked against the schemas generated from Google's SDK (specs/gemini).

use std::sync::Arc;
use std::time::Duration;

use actuator_model::Model;
use actuator_providers::{ModelOptions, RetryPolicy};
use serde_json::Value;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::spec::{assert_valid, gemini};

pub const MODEL: &str = "gemini-2.5-flash";

pub fn model_at(server: &MockServer, options: ModelOptions) -> Arc<dyn Model> {
    options
        .base_url(format!("{}/v1beta", server.uri()))
        .env(|var| (var == "GOOGLE_API_KEY").then(|| "goog-test-key".to_owned()))
        .retry(
            RetryPolicy::default()
                .max_attempts(3)
                .backoff(Duration::from_millis(5), Duration::from_millis(20)),
        )
        .build(&format!("google/{MODEL}"))
        .unwrap()
}

/// A valid response (checked against the schema).
pub fn ok(body: Value) -> ResponseTemplate {
    assert_valid(&gemini().response, &body, "GenerateContentResponse");
    ResponseTemplate::new(200).set_body_json(body)
}

/// The request bodies the server received, each checked against the schema.
pub async fn requests(server: &MockServer) -> Vec<Value> {
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    for body in &bodies {
        assert_valid(&gemini().request, body, "generateContent request");
    }
    bodies
}

pub async fn stub(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/v1beta/models/{MODEL}:generateContent")))
        .and(header("x-goog-api-key", "goog-test-key"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}
