//! Adaptive concurrency against a server that enforces a concurrency limit with 429 and
//! `retry-after-ms` (`common/rate_limited.rs`): the endpoint's limit is shared by every model
//! object that reaches it, backs off under the server's limit after the first refusals and
//! then keeps the server busy; slot waits are waiting, not working time.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actuator_agent::RunContext;
use actuator_agent::limits::working_limit;
use actuator_events::{Event, EventLog};
use actuator_model::concurrency::{
    AdaptiveConcurrency, ConnectionLimit, LimitChangeReason, connection_controllers,
};
use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::ModelOptions;
use common::openai::{fast_retries, model_at};
use common::rate_limited::serve;

/// `requests` generations by `workers` tasks, spread over `models` model objects of one
/// endpoint; how long they took.
async fn run(models: &[Arc<dyn Model>], workers: usize, requests: usize) -> Duration {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let model = models[w % models.len()].clone();
            let next = next.clone();
            tokio::spawn(async move {
                let input = [ChatMessage::user("hi")];
                while next.fetch_add(1, Ordering::SeqCst) < requests {
                    let out = model.generate(GenerateRequest::new(&input)).await.unwrap();
                    assert_eq!(out.completion(), "ok");
                }
            })
        })
        .collect();
    for task in tasks {
        // Bounded: a hang fails the test instead of holding CI.
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .unwrap()
            .unwrap();
    }
    started.elapsed()
}

fn models(url: &str, n: usize, limit: &ConnectionLimit) -> Vec<Arc<dyn Model>> {
    (0..n)
        .map(|_| {
            model_at(
                url,
                ModelOptions::new()
                    .retry(fast_retries(10))
                    .connections(limit.clone()),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_limit_backs_off_once_and_then_holds_the_servers_limit() {
    // The server takes 16 at once, 100 ms each: 160 requests/s at most. The reference's
    // defaults start at 20, so the first burst overshoots by 4.
    const LIMIT: usize = 16;
    const LATENCY: Duration = Duration::from_millis(100);
    const REQUESTS: usize = 400;
    let server = serve(LIMIT, LATENCY, Duration::from_millis(100)).await;
    // Four model objects of one endpoint, as an evaluation's samples would each hold one.
    let models = models(&server.url, 4, &ConnectionLimit::default());
    let elapsed = run(&models, 40, REQUESTS).await;

    let counts = &server.counts;
    let (ok, refused) = (
        counts.ok.load(Ordering::SeqCst),
        counts.refused.load(Ordering::SeqCst),
    );
    assert_eq!(ok, REQUESTS);
    // One back-off: the refusals are the first burst's overshoot, nothing after it. Every
    // request that arrived after the first 20 was within the limit.
    assert!((1..=20 - LIMIT).contains(&refused), "refused {refused}");
    assert!(
        counts.last_refused_arrival.load(Ordering::SeqCst) <= 20,
        "a request beyond the limit after the back-off (arrival {})",
        counts.last_refused_arrival.load(Ordering::SeqCst)
    );
    assert!(counts.peak.load(Ordering::SeqCst) <= LIMIT);

    // Throughput over the whole run, back-off included: within 20 % of the limit.
    let achieved = ok as f64 / elapsed.as_secs_f64();
    let ceiling = LIMIT as f64 / LATENCY.as_secs_f64();
    eprintln!(
        "adaptive concurrency: {achieved:.1} requests/s of a {ceiling:.0} requests/s limit \
         ({:.0} %), {refused} refused, {ok} in {elapsed:.2?}",
        100.0 * achieved / ceiling
    );
    assert!(
        achieved >= 0.8 * ceiling,
        "{achieved:.1} requests/s of {ceiling:.0}"
    );

    // One controller for the four models, cut once by the reference's rule (20 → 15).
    let controller = controller_of(&server.url);
    let history = controller.history();
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0].reason, LimitChangeReason::RateLimit);
    assert_eq!((history[0].old_limit, history[0].new_limit), (20, 15));
    let stats = controller.stats();
    assert_eq!(stats.requests, REQUESTS as u64);
    assert_eq!(stats.rate_limits, refused as u64);
    assert_eq!(stats.model, "openai/gpt-test");

    // What the stub sent and received is what the official spec says.
    common::spec::assert_valid(
        &common::spec::openai().chat_response,
        &common::rate_limited::completion_json(),
        "CreateChatCompletionResponse",
    );
    let bodies = counts.bodies();
    assert!(!bodies.is_empty());
    for body in bodies {
        common::spec::check_openai_request(&body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_keeps_up_is_given_more_up_to_the_ceiling() {
    let server = serve(1000, Duration::from_millis(5), Duration::ZERO).await;
    let adaptive = AdaptiveConcurrency::new(1, 2, 8).unwrap();
    let models = models(&server.url, 2, &ConnectionLimit::Adaptive(adaptive));
    run(&models, 20, 200).await;
    // Slow start: 2 → 4 → 8, and never past the ceiling.
    assert_eq!(server.counts.peak.load(Ordering::SeqCst), 8);
    assert_eq!(server.counts.refused.load(Ordering::SeqCst), 0);
    let controller = controller_of(&server.url);
    let reasons: Vec<_> = controller.history().iter().map(|h| h.reason).collect();
    assert_eq!(reasons, [LimitChangeReason::SlowStart; 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_limit_is_kept_and_waiting_for_a_slot_is_not_working_time() {
    let server = serve(1000, Duration::from_millis(300), Duration::ZERO).await;
    let model = models(&server.url, 1, &ConnectionLimit::Fixed(1)).remove(0);
    let holder = {
        let model = model.clone();
        tokio::spawn(async move {
            model
                .generate(GenerateRequest::new(&[ChatMessage::user("first")]))
                .await
                .unwrap()
        })
    };
    // The first request holds the only slot for 300 ms.
    while server.counts.peak.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let log = EventLog::new();
    // 300 ms in the queue and 300 ms at the server: only the latter is working time, and a
    // 450 ms working limit is not reached.
    let cx =
        RunContext::with_events(log.clone()).scoped(&[working_limit(Duration::from_millis(450))]);
    let out = cx
        .generate(
            &*model,
            GenerateRequest::new(&[ChatMessage::user("second")]),
        )
        .await
        .unwrap();
    assert_eq!(out.completion(), "ok");
    holder.await.unwrap();
    assert_eq!(server.counts.peak.load(Ordering::SeqCst), 1);
    let model_event = log
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::Model(m) => Some(m),
            _ => None,
        })
        .unwrap();
    assert!(model_event.completed_at - model_event.started_at >= 0.55);
    assert!(
        model_event.working_time < 0.45,
        "{}",
        model_event.working_time
    );
}

/// A server answering `status` with `body` once, then `ok`; its URL.
async fn failing_once(
    status: u16,
    body: serde_json::Value,
    ok: wiremock::ResponseTemplate,
) -> wiremock::MockServer {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ok)
        .mount(&server)
        .await;
    server
}

fn controller_of(url: &str) -> Arc<actuator_model::concurrency::ConcurrencyController> {
    connection_controllers()
        .into_iter()
        .find(|c| c.key().contains(url))
        .unwrap()
}

#[tokio::test]
async fn anthropics_529_and_a_429_of_openai_or_gemini_cut_the_limit_a_503_does_not() {
    use serde_json::json;
    let anthropic_ok = common::anthropic_ok(common::anthropic_message(
        json!([{"type": "text", "text": "ok"}]),
        "end_turn",
    ));
    let openai_ok = common::openai_ok(common::chat_completion(
        json!({"role": "assistant", "content": "ok"}),
        "stop",
    ));
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let rate_limited = json!({"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}});
    let unavailable = json!({"error": {"message": "Service unavailable", "type": "server_error", "param": null, "code": null}});
    let gemini_ok = wiremock::ResponseTemplate::new(200).set_body_json(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
    }));
    let exhausted = json!({"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}});
    let cases = [
        (
            failing_once(529, overloaded, anthropic_ok).await,
            "anthropic",
            1,
            0,
        ),
        (
            failing_once(429, exhausted, gemini_ok).await,
            "google",
            1,
            0,
        ),
        (
            failing_once(429, rate_limited, openai_ok.clone()).await,
            "openai",
            1,
            0,
        ),
        (
            failing_once(503, unavailable, openai_ok).await,
            "openai",
            0,
            1,
        ),
    ];
    for (server, provider, back_offs, retries) in cases {
        let options = ModelOptions::new().retry(fast_retries(3));
        let model = match provider {
            "anthropic" => options
                .api_key("sk-ant-test")
                .base_url(server.uri())
                .env(|_| None)
                .build("anthropic/claude-test")
                .unwrap(),
            "google" => options
                .api_key("goog-test")
                .base_url(format!("{}/v1beta", server.uri()))
                .env(|_| None)
                .build("google/gemini-test")
                .unwrap(),
            _ => model_at(&server.uri(), options),
        };
        let out = model
            .generate(GenerateRequest::new(&[ChatMessage::user("hi")]))
            .await
            .unwrap();
        assert_eq!(out.completion(), "ok");
        let controller = controller_of(&server.uri());
        let stats = controller.stats();
        assert_eq!(
            (stats.rate_limits, stats.retries, stats.requests),
            (back_offs, retries, 1),
            "{}",
            server.uri()
        );
        // A back-off cuts the default 20 to 15; a 503 leaves it.
        let expected = if back_offs > 0 { 15 } else { 20 };
        assert_eq!(controller.concurrency(), expected);
    }
}
