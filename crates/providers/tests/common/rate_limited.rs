//! A loopback Chat Completions server that enforces a concurrency limit the way a provider's
//! rate limiter does: beyond `limit` requests in flight it answers 429 at once, with
//! `retry-after-ms` and OpenAI's error body; within it, a valid completion after `latency`.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// The request bodies kept for checking against the spec (the first few are enough: every
/// request of a test is made the same way, and checking hundreds costs the CPU the
/// throughput figure measures).
const KEPT_BODIES: usize = 8;

#[derive(Default)]
pub struct Counts {
    in_flight: AtomicUsize,
    /// Requests that arrived, in order (the n-th arrival is number n).
    arrivals: AtomicUsize,
    /// Requests answered 200.
    pub ok: AtomicUsize,
    /// Requests answered 429.
    pub refused: AtomicUsize,
    /// The arrival number of the last refused request.
    pub last_refused_arrival: AtomicUsize,
    /// The most requests in flight at once (accepted ones: never above the limit).
    pub peak: AtomicUsize,
    bodies: Mutex<Vec<Value>>,
}

impl Counts {
    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

pub struct RateLimited {
    pub url: String,
    pub counts: Arc<Counts>,
}

/// The completion every accepted request gets (`tests/adaptive_concurrency.rs` checks it
/// against the spec; this file is also the `rate_limit` bench's server, which has no spec).
pub fn completion_json() -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": "ok", "refusal": null},
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// OpenAI's error body for a rate limit (`ErrorResponse`: `code`, `message`, `param` and
/// `type` are all required there).
fn refusal() -> Bytes {
    Bytes::from(
        json!({"error": {
            "message": "Rate limit reached for requests",
            "type": "requests",
            "param": null,
            "code": "rate_limit_exceeded",
        }})
        .to_string(),
    )
}

/// Starts the server: at most `limit` requests in flight, each taking `latency`; a refusal
/// asks for `retry_after`.
pub async fn serve(limit: usize, latency: Duration, retry_after: Duration) -> RateLimited {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let counts = Arc::new(Counts::default());
    let (ok_body, refused_body) = (Bytes::from(completion_json().to_string()), refusal());
    let shared = counts.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let counts = shared.clone();
            let (ok_body, refused_body) = (ok_body.clone(), refused_body.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let counts = counts.clone();
                    let (ok_body, refused_body) = (ok_body.clone(), refused_body.clone());
                    async move {
                        let arrival = counts.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
                        let body = request.into_body().collect().await.map(|b| b.to_bytes());
                        if let Ok(body) = body
                            && let Ok(json) = serde_json::from_slice::<Value>(&body)
                        {
                            let mut kept = counts.bodies.lock().unwrap();
                            if kept.len() < KEPT_BODIES {
                                kept.push(json);
                            }
                        }
                        let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        let response =
                            hyper::Response::builder().header("content-type", "application/json");
                        if now > limit {
                            counts.in_flight.fetch_sub(1, Ordering::SeqCst);
                            counts.refused.fetch_add(1, Ordering::SeqCst);
                            counts
                                .last_refused_arrival
                                .fetch_max(arrival, Ordering::SeqCst);
                            let millis = retry_after.as_millis().to_string();
                            return Ok::<_, Infallible>(
                                response
                                    .status(429)
                                    .header("retry-after-ms", millis)
                                    .body(Full::new(refused_body))
                                    .unwrap(),
                            );
                        }
                        counts.peak.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(latency).await;
                        // Out of the count before the answer leaves: the client can never
                        // see a slot free that the server still counts.
                        counts.in_flight.fetch_sub(1, Ordering::SeqCst);
                        counts.ok.fetch_add(1, Ordering::SeqCst);
                        Ok(response.status(200).body(Full::new(ok_body)).unwrap())
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    RateLimited { url, counts }
}
