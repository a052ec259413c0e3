//! OpenAI Chat Completions faults against a stub server: context-window and other 4xx errors,
//! rate limits with `Retry-After`, 5xx retries, malformed bodies, timeouts, and the retry log.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_agent::{RunContext, limits::working_limit};
use actuator_events::{Event, EventLog};
use actuator_model::{
    ChatMessage, GenerateObserver, GenerateRequest, Model, RetryReport, StopReason,
};
use actuator_providers::{ModelOptions, ProviderError};
use common::openai::{ask, fast_retries, model_at, provider_error, stub};
use common::{Captured, chat_completion, openai_ok, openai_requests};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

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

/// A server that answers 429 once, saying how long to wait in `header`, then "ok".
async fn rate_limited_once(header: &str, wait: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header(header, wait)
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
    server
}

#[tokio::test]
async fn rate_limits_wait_as_long_as_retry_after_says() {
    let server = rate_limited_once("retry-after", "1").await;
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

#[tokio::test(flavor = "current_thread")]
async fn each_retry_is_logged() {
    let logs = Captured::default();
    let _guard = logs.install(tracing::Level::INFO);
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
    let text = logs.text();
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
async fn a_retry_is_a_run_event_and_its_wait_is_not_working_time() {
    let server = rate_limited_once("retry-after-ms", "300").await;
    let model = model_at(&server.uri(), ModelOptions::new().retry(fast_retries(3)));
    let log = EventLog::new();
    // 300 ms of waiting inside a 200 ms working limit: only the work counts.
    let cx =
        RunContext::with_events(log.clone()).scoped(&[working_limit(Duration::from_millis(200))]);
    let out = cx
        .generate(&*model, GenerateRequest::new(&[ChatMessage::user("hi")]))
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    let events = log.events();
    let retries: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelRetry(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 1, "{events:?}");
    assert_eq!(retries[0].retry, 1);
    assert_eq!(retries[0].status, Some(429));
    assert!((retries[0].wait - 0.3).abs() < 1e-9, "{}", retries[0].wait);
    assert!(
        retries[0].error.contains("Rate limit reached"),
        "{}",
        retries[0].error
    );
    let model_event = events
        .iter()
        .find_map(|e| match e {
            Event::Model(m) => Some(m),
            _ => None,
        })
        .unwrap();
    assert_eq!(model_event.retries, 1);
    assert!(model_event.completed_at - model_event.started_at >= 0.3);
    assert!(
        model_event.working_time < 0.2,
        "{}",
        model_event.working_time
    );
    let usage = cx.usage();
    assert!(
        usage.time - usage.working_time >= Duration::from_millis(290),
        "{usage:?}"
    );
}

/// Remembers the retries it hears and how long each wait lasted.
#[derive(Default)]
struct Heard {
    retries: Mutex<Vec<RetryReport>>,
    waits: Mutex<Vec<Duration>>,
}

impl GenerateObserver for Heard {
    fn retrying(&self, report: &RetryReport) {
        self.retries.lock().unwrap().push(report.clone());
    }
    fn waited(&self, _: &RetryReport, waited: Duration) {
        self.waits.lock().unwrap().push(waited);
    }
}

#[tokio::test]
async fn a_retry_reaches_the_observer_the_request_carries_through_wrapper_models() {
    // No run context: the provider reports to whatever observer the request carries, here
    // through an `Arc<dyn Model>` inside a `Box<dyn Model>`.
    let server = rate_limited_once("retry-after-ms", "20").await;
    let model: Arc<dyn Model> = model_at(&server.uri(), ModelOptions::new().retry(fast_retries(3)));
    let wrapped: Box<dyn Model> = Box::new(model);
    let heard = Heard::default();
    let input = [ChatMessage::user("hi")];
    let out = wrapped
        .generate(GenerateRequest::new(&input).observer(&heard))
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    let retries = heard.retries.lock().unwrap();
    assert_eq!(retries.len(), 1);
    assert_eq!(
        (retries[0].retry, retries[0].status, retries[0].wait),
        (1, Some(429), Duration::from_millis(20))
    );
    assert!(
        retries[0].error.contains("Rate limit reached"),
        "{retries:?}"
    );
    let waits = heard.waits.lock().unwrap();
    assert_eq!(waits.len(), 1);
    assert!(waits[0] >= Duration::from_millis(20), "{waits:?}");
}
