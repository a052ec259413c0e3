//! Reading one long server-sent-event line: a streamed Chat Completions answer whose single
//! text delta is 1, 2, 4 or 16 MiB, served by a loopback HTTP/1.1 server (hyper) in chunks of
//! 16 KiB (chunked transfer encoding, so the client's body stream yields at most 16 KiB at a
//! time, as a network connection does), read through the OpenAI provider
//! (`ModelOptions::stream(true)`). The time is the whole `generate` (HTTP, SSE parse, JSON
//! parse, aggregate).
//!
//! `sse [--sizes 1,2,4,16] [--runs N]`: sizes in MiB (default 1,2,4,16), runs per size
//! (default 5, after one warm-up run that is not reported). Medians printed as `RESULT {json}`
//! lines. A parser that re-scans its buffer shows as a time growing with the square of the
//! size; a linear one as a time proportional to it.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::ModelOptions;
use http_body_util::StreamBody;
use hyper::body::{Bytes, Frame};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::json;

const MIB: usize = 1 << 20;
const CHUNK: usize = 16 * 1024;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut sizes = vec![1, 2, 4, 16];
    let mut runs = 5;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|s| s.trim().parse().ok())
                    .collect();
            }
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    rt.block_on(async {
        for mib in sizes {
            bench(mib, runs).await;
        }
    });
}

/// One text delta of `mib` MiB in one `data:` line, then `[DONE]`.
fn body(mib: usize) -> String {
    let text = "x".repeat(mib * MIB);
    let chunk = json!({
        "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    });
    format!("data: {chunk}\n\ndata: [DONE]\n\n")
}

/// Serves `body` to every request, in chunks of [`CHUNK`]; the server's URL.
async fn serve(body: Bytes) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("the address"));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_req| {
                    let chunks: Vec<Result<Frame<Bytes>, Infallible>> = (0..body.len())
                        .step_by(CHUNK)
                        .map(|at| Ok(Frame::data(body.slice(at..(at + CHUNK).min(body.len())))))
                        .collect();
                    let response = hyper::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(StreamBody::new(futures_util::stream::iter(chunks)))
                        .expect("a response");
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    url
}

async fn bench(mib: usize, runs: usize) {
    let server = serve(Bytes::from(body(mib))).await;
    let mut options = ModelOptions::new()
        .api_key("sk-bench")
        .base_url(format!("{server}/v1"))
        .env(|_| None)
        .stream(true);
    if mib >= 16 {
        options = options.max_sse_event_bytes(64 * MIB);
    }
    let model: Arc<dyn Model> = options.build("openai/m").expect("the model");
    let mut samples = Vec::new();
    for run in 0..=runs {
        let started = Instant::now();
        let out = model
            .generate(GenerateRequest::new(&[ChatMessage::user("long")]))
            .await
            .expect("the answer");
        let took = started.elapsed().as_secs_f64();
        assert_eq!(out.completion().len(), mib * MIB);
        if run > 0 {
            samples.push(took);
        }
    }
    emit(&format!("one {mib} MiB SSE line"), &samples);
}

/// Prints one `RESULT` line: the median and minimum of `samples` seconds, in ms.
fn emit(case: &str, samples: &[f64]) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let fields = json!({
        "workload": "sse",
        "case": case,
        "median": sorted[sorted.len() / 2] * 1e3,
        "min": sorted[0] * 1e3,
        "runs": sorted.len(),
        "unit": "ms",
    });
    println!("RESULT {fields}");
}
