//! Credentials stay on their origin: a provider that answers with a redirect to another origin
//! (another port of 127.0.0.1 is another origin) gets a typed error back, and the second
//! server, which records every request, never sees a request, let alone a key. A redirect on
//! the same origin is still followed.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{ChatMessage, GenerateRequest, Model, ModelError};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use common::{anthropic_message, anthropic_ok, chat_completion, openai_ok};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-SECRET-key-0123456789";
const CUSTOM: &str = "custom-SECRET-value-42";
const AZURE: &str = "azure-SECRET-value-43";

/// Every header value the second origin received, `name: value`.
async fn seen(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .flat_map(|r| {
            r.headers
                .iter()
                .map(|(n, v)| format!("{n}: {}", String::from_utf8_lossy(v.as_bytes())))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A server answering every POST with `status` and `Location: {to}{path}`.
async fn redirector(status: u16, to: &str) -> MockServer {
    let server = MockServer::start().await;
    let to = to.to_owned();
    Mock::given(method("POST"))
        .respond_with(move |req: &wiremock::Request| {
            ResponseTemplate::new(status)
                .insert_header("location", format!("{to}{}", req.url.path()))
        })
        .mount(&server)
        .await;
    server
}

fn model(kind: &str, base: &str, stream: bool) -> Arc<dyn Model> {
    let (name, base) = match kind {
        "anthropic" => ("anthropic/claude-test", base.to_owned()),
        _ => ("openai/gpt-test", format!("{base}/v1")),
    };
    ModelOptions::new()
        .api_key(KEY)
        .base_url(base)
        .header("x-custom-token", CUSTOM)
        .header("api-key", AZURE)
        .env(|_| None)
        .stream(stream)
        .retry(RetryPolicy::default().max_attempts(1))
        .build(name)
        .unwrap()
}

async fn ask(model: &dyn Model) -> Result<String, ModelError> {
    let out = model
        .generate(GenerateRequest::new(&[ChatMessage::user("hi")]))
        .await?;
    Ok(out.completion())
}

#[tokio::test]
async fn no_credential_follows_a_redirect_to_another_origin() {
    for kind in ["anthropic", "openai"] {
        for status in [301, 302, 303, 307, 308] {
            for stream in [false, true] {
                let elsewhere = MockServer::start().await;
                let first = redirector(status, &elsewhere.uri()).await;
                let err = ask(&*model(kind, &first.uri(), stream)).await.unwrap_err();
                let headers = seen(&elsewhere).await;
                for secret in [KEY, CUSTOM, AZURE] {
                    assert!(
                        !headers.iter().any(|h| h.contains(secret)),
                        "{kind} {status} stream={stream}: the second origin saw {secret}: {headers:#?}"
                    );
                }
                assert!(
                    headers.is_empty(),
                    "{kind} {status}: the redirect was followed"
                );
                let provider = err.downcast_ref::<ProviderError>().unwrap();
                let ProviderError::RedirectRefused { from, to, .. } = provider else {
                    panic!("{kind} {status}: not RedirectRefused: {provider:?}");
                };
                assert!(from.starts_with(&first.uri()), "{from}");
                assert!(to.starts_with(&elsewhere.uri()), "{to}");
                let text = err.to_string();
                assert!(
                    text.contains("another origin") && text.contains("ModelOptions::base_url"),
                    "{text}"
                );
                assert!(!err.is_retryable());
            }
        }
    }
}

#[tokio::test]
async fn a_redirect_on_the_same_origin_is_followed() {
    for kind in ["anthropic", "openai"] {
        let server = MockServer::start().await;
        let (old, new, answer) = match kind {
            "anthropic" => (
                "/v1/messages",
                "/moved/v1/messages",
                anthropic_ok(anthropic_message(
                    json!([{"type": "text", "text": "moved"}]),
                    "end_turn",
                )),
            ),
            _ => (
                "/v1/chat/completions",
                "/moved/v1/chat/completions",
                openai_ok(chat_completion(
                    json!({"role": "assistant", "content": "moved"}),
                    "stop",
                )),
            ),
        };
        let location = format!("{}{new}", server.uri());
        Mock::given(method("POST"))
            .and(path(old))
            .respond_with(ResponseTemplate::new(307).insert_header("location", location.as_str()))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(new))
            .respond_with(answer)
            .mount(&server)
            .await;
        assert_eq!(
            ask(&*model(kind, &server.uri(), false)).await.unwrap(),
            "moved"
        );
    }
}
