//! OtelSink without a collector: which spans events make, contents only when asked, and the
//! bounds that keep a slow or dead collector from blocking a run or growing its memory.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actuator_events::{
    Event, EventSink, ModelEvent, PendingToolEvent, SharedMessages, SpanBeginEvent, SpanEndEvent,
    ToolEvent,
};
use actuator_model::{GenerateConfig, ModelOutput, ModelUsage, ToolCallError};
use actuator_otel::{MAX_OPEN_SPANS, OtelSink};
use actuator_tool_core::ToolChoice;
use actuator_tool_core::{ToolErrorKind, TraceContext};
use opentelemetry::trace::Status;
use opentelemetry::{Key, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::InMemoryMetricExporter;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SpanData, SpanExporter};
use serde_json::json;

fn begin(id: &str, parent: Option<&str>, name: &str) -> Event {
    Event::SpanBegin(Box::new(SpanBeginEvent {
        id: id.into(),
        parent_id: parent.map(Into::into),
        kind: "agent".into(),
        name: name.into(),
        tool_call_id: None,
    }))
}

fn end(id: &str) -> Event {
    Event::SpanEnd(SpanEndEvent { id: id.into() })
}

fn pending(call: &str, function: &str, span: &str) -> Event {
    let mut p = PendingToolEvent::new(call, function, json!({"text": "hello"}), 10.0);
    p.span_id = Some(span.into());
    Event::ToolPending(p)
}

fn completed(call: &str, function: &str, span: &str, result: &str) -> ToolEvent {
    let mut t = ToolEvent::pending(call, function, json!({"text": "hello"}), 10.0);
    t.pending = None;
    t.completed_at = Some(10.5);
    t.working_time = Some(0.5);
    t.span_id = Some(span.into());
    t.result = result.into();
    t
}

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| &kv.value)
}

fn spans_of(events: Vec<Event>, capture: bool, max_content: usize) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .capture_content(capture)
        .max_content_bytes(max_content)
        // Room for every event of the test at once: none is dropped however the threads run.
        .max_queue_size(2 * MAX_OPEN_SPANS + 16)
        .build_with_exporter(exporter.clone())
        .unwrap();
    for event in events {
        sink.emit(event);
    }
    sink.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

#[test]
fn a_tool_span_has_the_call_its_times_and_its_agent_as_parent() {
    let mut failed = completed("c2", "read", "a", "");
    failed.error = Some(ToolCallError {
        kind: ToolErrorKind::FileNotFound,
        message: "no such file".into(),
    });
    let spans = spans_of(
        vec![
            begin("a", None, "coder"),
            pending("c1", "echo", "a"),
            Event::Tool(Box::new(completed("c1", "echo", "a", "hello"))),
            Event::Tool(Box::new(failed)),
            end("a"),
        ],
        false,
        1024,
    );
    let names: Vec<&str> = spans.iter().map(|s| &*s.name).collect();
    assert_eq!(
        names,
        [
            "execute_tool echo",
            "execute_tool read",
            "invoke_agent coder"
        ]
    );
    let agent = &spans[2];
    for tool in &spans[..2] {
        assert_eq!(tool.parent_span_id, agent.span_context.span_id());
        assert_eq!(tool.span_context.trace_id(), agent.span_context.trace_id());
        let took = tool.end_time.duration_since(tool.start_time).unwrap();
        assert_eq!(took, Duration::from_millis(500));
    }
    assert_eq!(attr(&spans[0], "gen_ai.tool.call.id"), Some(&"c1".into()));
    assert_eq!(attr(&spans[0], "gen_ai.tool.name"), Some(&"echo".into()));
    assert_eq!(spans[0].status, Status::Unset);
    assert_eq!(
        attr(&spans[1], "error.type"),
        Some(&"file_not_found".into())
    );
    assert_eq!(spans[1].status, Status::error("no such file"));
    // Contents are off by default.
    assert_eq!(attr(&spans[0], "gen_ai.tool.call.arguments"), None);
    assert_eq!(attr(&spans[0], "gen_ai.tool.call.result"), None);
}

#[test]
fn contents_only_when_asked_and_cut_on_a_character_boundary() {
    let long = "é".repeat(100); // 200 bytes
    let spans = spans_of(
        vec![
            begin("a", None, "coder"),
            Event::Tool(Box::new(completed("c1", "echo", "a", &long))),
            end("a"),
        ],
        true,
        51,
    );
    let result = attr(&spans[0], "gen_ai.tool.call.result").unwrap().as_str();
    assert_eq!(
        result,
        "é".repeat(25),
        "cut to 50 bytes, not inside a character"
    );
    assert_eq!(
        attr(&spans[0], "gen_ai.tool.call.arguments")
            .unwrap()
            .as_str(),
        r#"{"text":"hello"}"#
    );
}

#[test]
fn an_agent_run_by_a_tool_call_is_that_calls_child() {
    let spans = spans_of(
        vec![
            begin("outer", None, "supervisor"),
            pending("s1", "calculator", "outer"),
            begin("inner", Some("outer"), "calculator"),
            end("inner"),
            Event::Tool(Box::new(completed("s1", "calculator", "outer", "4"))),
            // Two calls at once: which one ran the agent is not known from the events.
            pending("s2", "calculator", "outer"),
            pending("s3", "calculator", "outer"),
            begin("inner2", Some("outer"), "calculator"),
            end("inner2"),
            end("outer"),
        ],
        false,
        1024,
    );
    let by_name = |n: &str| spans.iter().filter(|s| s.name == n).collect::<Vec<_>>();
    let outer = by_name("invoke_agent supervisor")[0];
    let call = by_name("execute_tool calculator")[0];
    let inner = by_name("invoke_agent calculator");
    assert_eq!(call.parent_span_id, outer.span_context.span_id());
    assert_eq!(inner[0].parent_span_id, call.span_context.span_id());
    assert_eq!(inner[1].parent_span_id, outer.span_context.span_id());
    // Two runs, two traces.
    let again = spans_of(vec![begin("x", None, "supervisor"), end("x")], false, 1);
    assert_ne!(
        again[0].span_context.trace_id(),
        outer.span_context.trace_id()
    );
}

#[test]
fn an_agent_that_names_its_call_is_that_calls_child_among_several() {
    let mut named = begin("inner", Some("outer"), "calculator");
    if let Event::SpanBegin(b) = &mut named {
        b.tool_call_id = Some("s3".into());
    }
    let spans = spans_of(
        vec![
            begin("outer", None, "supervisor"),
            pending("s2", "calculator", "outer"),
            pending("s3", "calculator", "outer"),
            named,
            end("inner"),
            Event::Tool(Box::new(completed("s2", "calculator", "outer", "1"))),
            Event::Tool(Box::new(completed("s3", "calculator", "outer", "2"))),
            end("outer"),
        ],
        false,
        1024,
    );
    let call = |id: &'static str| {
        spans
            .iter()
            .find(|s| attr(s, "gen_ai.tool.call.id") == Some(&Value::from(id)))
            .unwrap()
    };
    let inner = spans
        .iter()
        .find(|s| s.name == "invoke_agent calculator")
        .unwrap();
    assert_eq!(inner.parent_span_id, call("s3").span_context.span_id());
    assert_ne!(inner.parent_span_id, call("s2").span_context.span_id());
}

#[test]
fn a_generation_is_placed_in_the_span_it_was_emitted_in() {
    // Two sub-agents side by side: the generation of the first arrives after the second
    // began, and says where it was emitted.
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .build_with_exporter(exporter.clone())
        .unwrap();
    sink.emit(begin("root", None, "supervisor"));
    sink.emit(begin("a", Some("root"), "left"));
    sink.emit(begin("b", Some("root"), "right"));
    sink.emit_in(Some("a"), generation("openai/gpt-4.1", (10, 1), 0.1));
    for id in ["b", "a", "root"] {
        sink.emit(end(id));
    }
    sink.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let named = |n: &str| spans.iter().find(|s| s.name == n).unwrap();
    let chat = spans.iter().find(|s| s.name.starts_with("chat")).unwrap();
    assert_eq!(
        chat.parent_span_id,
        named("invoke_agent left").span_context.span_id()
    );
}

#[test]
fn open_spans_past_the_bound_are_not_tracked() {
    let mut events: Vec<Event> = (0..=MAX_OPEN_SPANS)
        .map(|i| begin(&format!("s{i}"), None, &format!("agent{i}")))
        .collect();
    events.push(end(&format!("s{MAX_OPEN_SPANS}")));
    events.push(end("s0"));
    let spans = spans_of(events, false, 1);
    let names: Vec<&str> = spans.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["invoke_agent agent0"]);
}

/// An exporter that does not return until the gate opens, as a collector that never answers.
#[derive(Debug, Clone, Default)]
struct Stuck {
    open: Arc<AtomicBool>,
    exported: Arc<AtomicUsize>,
}

impl SpanExporter for Stuck {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        while !self.open.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.exported.fetch_add(batch.len(), Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn a_stuck_collector_neither_blocks_emit_nor_queues_without_bound() {
    let stuck = Stuck::default();
    let sink = OtelSink::builder()
        .max_queue_size(64)
        .max_export_batch_size(16)
        .scheduled_delay(Duration::from_millis(1))
        .build_with_exporter(stuck.clone())
        .unwrap();
    let started = Instant::now();
    for i in 0..20_000 {
        let id = format!("s{i}");
        sink.emit(begin(&id, None, "agent"));
        sink.emit(end(&id));
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "emit waited for the exporter: {:?}",
        started.elapsed()
    );
    stuck.open.store(true, Ordering::SeqCst);
    sink.force_flush().unwrap();
    let exported = stuck.exported.load(Ordering::SeqCst);
    // The events waiting (64, at most one span each), the spans waiting (64) and the batch in
    // flight (16), nothing more: the rest of the 20 000 was dropped.
    assert!(
        (1..=64 + 64 + 16).contains(&exported),
        "{exported} spans were kept"
    );
}

#[test]
fn a_collector_that_redirects_never_gets_its_credentials_sent_elsewhere() {
    use std::io::{Read, Write};
    // `elsewhere` counts what reaches it; the collector redirects every export there.
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_port = elsewhere.local_addr().unwrap().port();
    elsewhere.set_nonblocking(true).unwrap();
    let collector = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = collector.local_addr().unwrap().port();
    let redirecting = std::thread::spawn(move || {
        let mut served = 0;
        collector.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            let Ok((mut stream, _)) = collector.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(1)))
                .unwrap();
            let mut request = [0u8; 65536];
            let _ = stream.read(&mut request);
            let answer = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{elsewhere_port}/v1/traces\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
            served += 1;
            break;
        }
        served
    });
    let sink = OtelSink::builder()
        .endpoint(format!("http://127.0.0.1:{port}/v1/traces"))
        .header("x-api-key", "collector-secret")
        .export_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    sink.emit(begin("s1", None, "agent"));
    sink.emit(end("s1"));
    let _ = sink.force_flush();
    let _ = sink.shutdown();
    assert_eq!(
        redirecting.join().unwrap(),
        1,
        "the collector saw the export"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        elsewhere.accept().is_err(),
        "the export followed the redirect to another origin, with its key"
    );
}

#[test]
fn a_dead_otlp_collector_costs_a_bounded_wait_at_shutdown_only() {
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sink = OtelSink::builder()
        .endpoint(format!("http://127.0.0.1:{port}/v1/traces"))
        .export_timeout(Duration::from_millis(300))
        .scheduled_delay(Duration::from_millis(10))
        .max_queue_size(128)
        .build()
        .unwrap();
    let started = Instant::now();
    for i in 0..5_000 {
        let id = format!("s{i}");
        sink.emit(begin(&id, None, "agent"));
        sink.emit(end(&id));
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let started = Instant::now();
    // The exporter reports the failed exports to OpenTelemetry's internal log, not here.
    let _ = sink.shutdown();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "shutdown waited {:?}",
        started.elapsed()
    );
    drop(listener);
}

#[test]
fn runs_join_the_callers_trace_when_given_one() {
    let caller =
        TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .parent(caller)
        .build_with_exporter(exporter.clone())
        .unwrap();
    for event in [
        begin("a", None, "coder"),
        Event::Tool(Box::new(completed("c1", "echo", "a", "hello"))),
        end("a"),
    ] {
        sink.emit(event);
    }
    sink.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let agent = spans
        .iter()
        .find(|s| s.name == "invoke_agent coder")
        .unwrap();
    assert_eq!(
        agent.span_context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(agent.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(
        spans
            .iter()
            .all(|s| s.span_context.trace_id() == agent.span_context.trace_id())
    );
}

fn generation(model: &str, tokens: (u64, u64), seconds: f64) -> Event {
    let output = ModelOutput::from_content("scripted", "done")
        .with_usage(ModelUsage::new(tokens.0, tokens.1));
    Event::Model(Box::new(ModelEvent {
        model: model.into(),
        input: SharedMessages::default(),
        tools: Arc::from(Vec::new()),
        tool_choice: ToolChoice::default(),
        config: GenerateConfig::default(),
        output: Some(Arc::new(output)),
        error: None,
        started_at: 100.0,
        completed_at: 100.0 + seconds,
        working_time: seconds,
        retries: 0,
        generation: None,
    }))
}

#[test]
fn chat_spans_and_the_client_metrics_carry_provider_model_and_tokens() {
    let spans = InMemorySpanExporter::default();
    let metrics = InMemoryMetricExporter::default();
    let sink = OtelSink::builder()
        .build_with_exporters(spans.clone(), metrics.clone())
        .unwrap();
    sink.emit(begin("a", None, "coder"));
    sink.emit(generation("openai/gpt-4.1", (100, 10), 0.5));
    sink.emit(generation("openai/gpt-4.1", (200, 20), 1.5));
    sink.emit(end("a"));
    sink.force_flush().unwrap();

    let spans = spans.get_finished_spans().unwrap();
    let chat = &spans[0];
    assert_eq!(chat.name, "chat gpt-4.1");
    assert_eq!(attr(chat, "gen_ai.provider.name"), Some(&"openai".into()));
    assert_eq!(attr(chat, "gen_ai.request.model"), Some(&"gpt-4.1".into()));
    assert_eq!(
        attr(chat, "gen_ai.response.model"),
        Some(&"scripted".into())
    );
    assert_eq!(
        attr(chat, "gen_ai.usage.input_tokens"),
        Some(&Value::I64(100))
    );
    assert_eq!(
        attr(chat, "gen_ai.usage.output_tokens"),
        Some(&Value::I64(10))
    );
    assert_eq!(chat.parent_span_id, spans[2].span_context.span_id());

    let exported = metrics.get_finished_metrics().unwrap();
    let mut tokens = Vec::new();
    let mut durations = Vec::new();
    for metric in exported
        .iter()
        .flat_map(|r| r.scope_metrics())
        .flat_map(|s| s.metrics())
    {
        match (metric.name(), metric.data()) {
            ("gen_ai.client.token.usage", AggregatedMetrics::U64(MetricData::Histogram(h))) => {
                for point in h.data_points() {
                    let kind = point
                        .attributes()
                        .find(|kv| kv.key.as_str() == "gen_ai.token.type")
                        .map(|kv| kv.value.to_string());
                    let provider = point
                        .attributes()
                        .find(|kv| kv.key.as_str() == "gen_ai.provider.name")
                        .map(|kv| kv.value.to_string());
                    assert_eq!(provider.as_deref(), Some("openai"));
                    tokens.push((kind.unwrap(), point.count(), point.sum()));
                }
            }
            (
                "gen_ai.client.operation.duration",
                AggregatedMetrics::F64(MetricData::Histogram(h)),
            ) => durations.extend(h.data_points().map(|p| (p.count(), p.sum()))),
            _ => {}
        }
    }
    tokens.sort();
    assert_eq!(
        tokens,
        [("input".to_owned(), 2, 300), ("output".to_owned(), 2, 30)]
    );
    assert_eq!(durations, [(2, 2.0)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_otlp_sink_is_built_and_shut_down_inside_an_async_runtime() {
    // The exporter's client is reqwest's blocking one, which must not run on a runtime's
    // thread: the sink builds it on a thread of its own and exports from the SDK's.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sink = OtelSink::builder()
        .endpoint(format!("http://127.0.0.1:{port}/v1/traces"))
        .export_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    sink.emit(begin("a", None, "coder"));
    sink.emit(end("a"));
    let _ = tokio::task::spawn_blocking(move || sink.shutdown())
        .await
        .unwrap();
}

#[test]
fn an_idle_sink_wakes_for_the_next_event_without_a_flush() {
    let exporter = InMemorySpanExporter::default();
    let sink = OtelSink::builder()
        .scheduled_delay(Duration::from_millis(1))
        .build_with_exporter(exporter.clone())
        .unwrap();
    let wait_for = |names: usize| {
        let started = Instant::now();
        while exporter.get_finished_spans().unwrap().len() < names {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the sink's thread was not woken"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    sink.emit(begin("a", None, "first"));
    sink.emit(end("a"));
    wait_for(1);
    // Long enough for the sink's thread to go from dozing to asleep.
    std::thread::sleep(Duration::from_millis(100));
    sink.emit(begin("b", None, "second"));
    sink.emit(end("b"));
    wait_for(2);
}
