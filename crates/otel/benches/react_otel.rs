//! W5 with the OTLP exporter on: the react agent of `crates/agent/benches/react.rs` (50 `add`
//! calls, then `submit`: 51 model turns over a scripted model that reports usage) run with no
//! event sink and with an [`OtelSink`] exporting in batches over OTLP/HTTP to a receiver on
//! loopback, alternately in one process so that the machine's drifting speed does not skew the
//! ratio (as `react --interleave` measures events counted against events off).
//!
//! Reported: both sets of turn times (the gap between an agent's consecutive tool calls) and,
//! per run, OTLP on ÷ events off of the median turn (median over runs). Issue 37's target is
//! at most 1.5×. The receiver answers each export with `200 OK` and counts the bytes, so that
//! what the exporter sends is real protobuf over real HTTP; at the end the number of spans
//! exported is checked against the number of turns.
//!
//! `--exporter discard` replaces the OTLP exporter with one that drops each batch, which
//! separates what the sink costs a turn from what encoding and sending cost the machine.
//!
//! Usage: `react_otel --k 1 --runs 200 [--model yield] [--exporter discard]`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_agent::{RunContext, react};
use actuator_events::EventSink;
use actuator_model::{
    BoxFuture, ChatMessage, FunctionModel, GenerateRequest, Model, ModelError, ModelOutput,
    ModelUsage, ToolCall,
};
use actuator_otel::OtelSink;
use actuator_tool_core::ToolInfo;
use actuator_tool_macros::tool;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use serde_json::json;

const TOOL_TURNS: usize = 50;

struct Recorder {
    stamps: Mutex<Vec<Instant>>,
}

impl Recorder {
    /// Add two integers.
    ///
    /// # Arguments
    /// * `x` - First addend.
    /// * `y` - Second addend.
    #[tool]
    async fn add(&self, x: i64, y: i64) -> i64 {
        if let Ok(mut stamps) = self.stamps.lock() {
            stamps.push(Instant::now());
        }
        x + y
    }
}

/// W5's mock model: `add` until 50 tool results exist, then `submit`.
fn script(input: &[ChatMessage], tools: &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError> {
    let done = input.iter().filter(|m| m.as_tool().is_some()).count();
    let call = |id: String, function: &str, args| {
        ModelOutput::for_tool_calls("mockllm/model", "", vec![ToolCall::new(id, function, args)])
    };
    let out = if done < TOOL_TURNS {
        call(format!("call_{done}"), "add", json!({"x": done, "y": 1}))
    } else if tools.iter().any(|t| t.name == "submit") {
        call(
            "call_submit".into(),
            "submit",
            json!({"answer": done.to_string()}),
        )
    } else {
        ModelOutput::from_content("mockllm/model", done.to_string())
    };
    Ok(out.with_usage(ModelUsage::new(10, 10)))
}

/// A model that yields to the runtime once before each generation.
struct Yielding(FunctionModel);

impl Model for Yielding {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            self.0.generate(request).await
        })
    }
}

/// One agent's turn times.
async fn one_agent(model: Arc<dyn Model>, sink: Option<Arc<dyn EventSink>>) -> Vec<f64> {
    let recorder = Arc::new(Recorder {
        stamps: Mutex::new(Vec::with_capacity(TOOL_TURNS)),
    });
    let agent = react()
        .model(model)
        .tools([recorder.add_tool()])
        .build()
        .expect("the react agent");
    let cx = match sink {
        Some(sink) => RunContext::with_events(sink),
        None => RunContext::new(),
    };
    let run = cx
        .run(&agent, "Add numbers, then submit.", ())
        .await
        .expect("the agent run");
    assert!(run.state.output().completion().ends_with("50"));
    let stamps = recorder
        .stamps
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default();
    stamps
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64())
        .collect()
}

async fn run_k(k: usize, model: &Arc<dyn Model>, sink: Option<&Arc<dyn EventSink>>) -> Vec<f64> {
    let handles: Vec<_> = (0..k)
        .map(|_| tokio::spawn(one_agent(Arc::clone(model), sink.cloned())))
        .collect();
    let mut gaps = Vec::new();
    for h in handles {
        gaps.extend(h.await.expect("an agent task"));
    }
    gaps
}

/// A local OTLP/HTTP receiver: reads each request (headers, then `Content-Length` bytes) and
/// answers `200 OK` with an empty body, which the exporter takes as success. It keeps nothing
/// but a count of the body bytes. A fixture of this bench, not a collector.
fn receiver() -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let bytes = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&bytes);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("a stream"));
                let mut stream = stream;
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = line.to_ascii_lowercase();
                        if let Some(v) = header.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    counted.fetch_add(length as u64, Ordering::Relaxed);
                    let ok = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(ok).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, bytes)
}

/// An exporter that drops what it is given.
#[derive(Debug)]
struct Discard;

impl SpanExporter for Discard {
    async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
        Ok(())
    }
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn emit(case: &str, samples: &mut [f64]) {
    samples.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let r = ((q / 100.0 * samples.len() as f64) + 0.4999999).round() as usize;
        samples[r.clamp(1, samples.len()) - 1]
    };
    let row = json!({
        "workload": "W5",
        "case": case,
        "median": rank(50.0) * 1e6,
        "p90": rank(90.0) * 1e6,
        "min": samples[0] * 1e6,
        "runs": samples.len(),
        "unit": "us",
    });
    println!("RESULT {row}");
}

fn main() {
    let (mut k, mut runs, mut yielding, mut discard) = (1usize, 200usize, false, false);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--k" => k = it.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            "--runs" => runs = it.next().and_then(|v| v.parse().ok()).unwrap_or(200),
            "--model" => yielding = it.next().as_deref() == Some("yield"),
            "--exporter" => discard = it.next().as_deref() == Some("discard"),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let base = FunctionModel::new("mockllm/model", script);
    let model: Arc<dyn Model> = if yielding {
        Arc::new(Yielding(base))
    } else {
        Arc::new(base)
    };
    let (port, received) = receiver();
    let builder = OtelSink::builder().endpoint(format!("http://127.0.0.1:{port}/v1/traces"));
    let otel = Arc::new(if discard {
        builder.build_with_exporter(Discard).expect("the sink")
    } else {
        builder.build().expect("the OTLP exporter")
    });
    let sink: Arc<dyn EventSink> = otel.clone();

    rt.block_on(run_k(1, &model, Some(&sink)));
    let (mut off, mut on, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs.max(1) {
        let mut medians = [0.0; 2];
        // Alternate which goes first, so neither always follows the other.
        for i in 0..2 {
            let with_otel = (run + i) % 2 == 1;
            let mut gaps = rt.block_on(run_k(k, &model, with_otel.then_some(&sink)));
            medians[usize::from(with_otel)] = median(&mut gaps);
            if with_otel { &mut on } else { &mut off }.extend(gaps);
        }
        ratios.push(medians[1] / medians[0]);
    }
    otel.shutdown().expect("the exporter shut down");
    let label = format!(
        "react K={k}{}{}, interleaved",
        if yielding { ", yielding model" } else { "" },
        if discard { ", exporter discarding" } else { "" }
    );
    emit(
        &format!("{label}, events off: time per turn (gap between tool calls)"),
        &mut off,
    );
    emit(
        &format!("{label}, OTLP exporter: time per turn (gap between tool calls)"),
        &mut on,
    );
    ratios.sort_by(f64::total_cmp);
    let row = json!({
        "workload": "W5",
        "case": format!("{label}: OTLP exporter on / events off, time per turn (median of per-run ratios)"),
        "median": ratios[ratios.len() / 2],
        "p90": ratios[ratios.len() * 9 / 10],
        "min": ratios[0],
        "runs": ratios.len(),
        "unit": "x",
    });
    println!("RESULT {row}");
    let bytes = received.load(Ordering::Relaxed);
    assert!(discard || bytes > 0, "the receiver got no export");
    println!("# {bytes} bytes of OTLP received");
    rt.shutdown_timeout(Duration::from_secs(5));
}
