//! The key never leaks: both providers are made to fail in every way a server or a
//! configuration can make them fail (the server echoing the key in its error bodies, stream
//! events, broken bodies and redirect targets; timeouts; refused connections; bad base URLs
//! holding a password), and the errors (`Display`, `Debug` and the whole chain of causes that
//! logs and tool results show), the run's events and
//! everything logged at TRACE are searched for the key and the password.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use actuator_agent::{AgentErrorKind, RunContext};
use actuator_events::EventLog;
use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::ErrorChain;
use common::Captured;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-LEAKCHECK-7f3a9c2e51";
const PASSWORD: &str = "pw-LEAKCHECK-91b2d4";
const HEADER: &str = "hdr-LEAKCHECK-0c8e77";

fn options(base: &str, stream: bool) -> ModelOptions {
    ModelOptions::new()
        .api_key(KEY)
        .header("x-goog-api-key", HEADER)
        .base_url(base)
        .env(|_| None)
        .stream(stream)
        .timeout(Duration::from_millis(300))
        .max_sse_event_bytes(4096)
        .retry(
            RetryPolicy::default()
                .max_attempts(2)
                .backoff(Duration::from_millis(1), Duration::from_millis(2)),
        )
}

fn build(kind: &str, base: &str, stream: bool) -> Result<Arc<dyn Model>, ProviderError> {
    match kind {
        "anthropic" => options(base, stream).build("anthropic/claude-test"),
        "google" => options(base, stream).build("google/gemini-test"),
        _ => options(&format!("{base}/v1"), stream).build("openai/gpt-test"),
    }
}

async fn serving(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// Every response a hostile server answers with, each quoting the key it was sent.
fn hostile(kind: &str, elsewhere: &str) -> Vec<(bool, ResponseTemplate)> {
    let quoted = |kind: &str| json!({"error": {"message": format!("Incorrect API key provided: {KEY} / {HEADER}"), "type": kind, "code": KEY}});
    let error_event = match kind {
        "anthropic" => format!(
            "event: error\ndata: {}\n\n",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": format!("key {KEY}")}})
        ),
        "google" => format!(
            "data: {}\n\n",
            json!({"error": {"code": 503, "message": format!("key {KEY}"), "status": "UNAVAILABLE"}})
        ),
        _ => format!("data: {}\n\n", quoted("server_error")),
    };
    vec![
        (
            false,
            ResponseTemplate::new(401).set_body_json(quoted("authentication_error")),
        ),
        (
            false,
            ResponseTemplate::new(403).set_body_json(quoted("permission_error")),
        ),
        (
            false,
            ResponseTemplate::new(400).set_body_json(quoted("invalid_request_error")),
        ),
        (
            false,
            ResponseTemplate::new(429).set_body_json(quoted("rate_limit_error")),
        ),
        (
            false,
            ResponseTemplate::new(500).set_body_string(format!("crash, key {KEY}")),
        ),
        (
            false,
            ResponseTemplate::new(529).set_body_string(format!("busy {KEY}")),
        ),
        (
            false,
            ResponseTemplate::new(404).set_body_string(format!("no route, key {KEY}")),
        ),
        (
            false,
            ResponseTemplate::new(200).set_body_string(format!("not json {KEY}")),
        ),
        (
            false,
            ResponseTemplate::new(200)
                .set_body_json(json!({"echo": KEY, "choices": KEY, "content": KEY})),
        ),
        (true, sse(error_event)),
        (true, sse(format!("data: {{\"broken {KEY}\n\n"))),
        (true, sse(format!("data: {}\n\n", KEY.repeat(1000)))),
        (
            false,
            ResponseTemplate::new(200).set_delay(Duration::from_secs(2)),
        ),
        (
            false,
            ResponseTemplate::new(307)
                .insert_header("location", format!("{elsewhere}/{KEY}?h={HEADER}")),
        ),
    ]
}

#[tokio::test]
async fn no_failure_shows_the_key_in_errors_events_or_logs() {
    let logs = Captured::default();
    let _guard = logs.install(tracing::Level::TRACE);
    let events = EventLog::new();
    let cx = RunContext::with_events(events.clone());
    let mut seen = String::new();
    let mut kinds = BTreeSet::new();
    let elsewhere = MockServer::start().await;
    for kind in ["anthropic", "openai", "google"] {
        let mut attempts = Vec::new();
        for (stream, response) in hostile(kind, &elsewhere.uri()) {
            let server = serving(response).await;
            attempts.push((build(kind, &server.uri(), stream).unwrap(), Some(server)));
        }
        // Nothing listens on port 1; the base URL holds a password.
        let refused = format!("http://user:{PASSWORD}@127.0.0.1:1");
        attempts.push((build(kind, &refused, false).unwrap(), None));
        for (model, _server) in &attempts {
            let result = cx
                .generate(&**model, GenerateRequest::new(&[ChatMessage::user("hi")]))
                .await;
            let err = result.expect_err("every attempt fails");
            let AgentErrorKind::Model(model_error) = &err.kind else {
                panic!("not a model error: {err:?}");
            };
            let provider = model_error.downcast_ref::<ProviderError>().unwrap();
            let name = format!("{provider:?}");
            kinds.insert(name.split([' ', '{']).next().unwrap().to_owned());
            // The chain is what logs and tool results show (every cause's text).
            seen.push_str(&format!("{err}\n{err:?}\n{}\n", ErrorChain(&err)));
        }
        // Configurations that cannot be built, their URL holding the password.
        for base in [
            format!("ftp://user:{PASSWORD}@127.0.0.1"),
            format!("http://user:{PASSWORD}@[::1"),
        ] {
            let Err(err) = build(kind, &base, false) else {
                panic!("{base} was accepted");
            };
            kinds.insert("InvalidConfig".to_owned());
            seen.push_str(&format!("{err}\n{err:?}\n{}\n", ErrorChain(&err)));
        }
    }
    let log = logs.text();
    let events = serde_json::to_string(&events.events()).unwrap();
    // The run failed in all these ways (a test that caused none would prove nothing) …
    for kind in [
        "Authentication",
        "PermissionDenied",
        "BadRequest",
        "RateLimited",
        "Server",
        "Overloaded",
        "NotFound",
        "MalformedResponse",
        "EventTooLarge",
        "Timeout",
        "RedirectRefused",
        "Connection",
        "InvalidConfig",
    ] {
        assert!(
            kinds.contains(kind),
            "no {kind} error was caused: {kinds:?}"
        );
    }
    assert!(log.contains("retrying the request"), "{log}");
    assert!(events.contains("model_retry"), "{events}");
    // … the echoes were there, and were redacted …
    assert!(seen.contains("[REDACTED]"), "{seen}");
    // … and no text holds a secret.
    for (what, text) in [("errors", &seen), ("logs", &log), ("events", &events)] {
        for secret in [KEY, PASSWORD, HEADER] {
            if let Some(at) = text.find(secret) {
                let from = at.saturating_sub(300);
                panic!(
                    "{secret} is in the {what}: …{}…",
                    &text[from..(at + 100).min(text.len())]
                );
            }
        }
    }
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[test]
fn debug_output_of_options_names_credentials_without_their_values() {
    let options = options(&format!("http://user:{PASSWORD}@127.0.0.1:9"), false);
    let text = format!("{options:?}\n{options:#?}");
    for secret in [KEY, HEADER] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(text.contains("x-goog-api-key"), "{text}");
}
