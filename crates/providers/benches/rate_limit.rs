//! Adaptive concurrency against a rate-limited server: the loopback server of
//! `tests/common/rate_limited.rs` takes 16 requests at once, 100 ms each (160 requests/s at
//! most), and answers 429 with `retry-after-ms: 100` beyond that; 40 tasks send 400 requests
//! through four model objects of one endpoint, with the default `ConnectionLimit` (the
//! reference's adaptive connections, start 20). The figure is the throughput achieved over the
//! whole run, back-off included, as a fraction of the server's limit.
//!
//! `rate_limit [--runs N]` (default 3, a fresh server and endpoint each). Medians printed as
//! `RESULT {json}` lines.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "../tests/common/rate_limited.rs"]
#[allow(dead_code)]
mod rate_limited;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::ModelOptions;
use serde_json::json;

const LIMIT: usize = 16;
const LATENCY: Duration = Duration::from_millis(100);
const REQUESTS: usize = 400;
const WORKERS: usize = 40;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut runs = 3usize;
    while let Some(arg) = args.next() {
        // Anything else (`cargo bench` passes `--bench`) is ignored.
        if arg == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut fractions = Vec::new();
    for _ in 0..runs.max(1) {
        let (fraction, refused) = runtime.block_on(once());
        eprintln!("{:.1} % of the limit, {refused} refused", fraction * 100.0);
        fractions.push(fraction);
    }
    fractions.sort_by(f64::total_cmp);
    let fields = json!({
        "workload": "rate limit",
        "case": "throughput / the server's limit",
        "median": fractions[fractions.len() / 2],
        "min": fractions[0],
        "runs": fractions.len(),
        "unit": "x",
    });
    println!("RESULT {fields}");
}

/// One run: the throughput as a fraction of the limit, and the requests refused.
async fn once() -> (f64, usize) {
    let server = rate_limited::serve(LIMIT, LATENCY, Duration::from_millis(100)).await;
    let models: Vec<Arc<dyn Model>> = (0..4)
        .map(|_| {
            ModelOptions::new()
                .api_key("sk-bench")
                .base_url(format!("{}/v1", server.url))
                .env(|_| None)
                .build("openai/gpt-test")
                .unwrap()
        })
        .collect();
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..WORKERS)
        .map(|w| {
            let model = models[w % models.len()].clone();
            let next = next.clone();
            tokio::spawn(async move {
                let input = [ChatMessage::user("hi")];
                while next.fetch_add(1, Ordering::SeqCst) < REQUESTS {
                    model.generate(GenerateRequest::new(&input)).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let achieved = REQUESTS as f64 / started.elapsed().as_secs_f64();
    let ceiling = LIMIT as f64 / LATENCY.as_secs_f64();
    (
        achieved / ceiling,
        server.counts.refused.load(Ordering::SeqCst),
    )
}
