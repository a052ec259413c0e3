//! [`OtelSink`]: the event sink that exports a run's spans, and its builder.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use actuator_events::{Event, EventSink};
use actuator_tool_core::TraceContext;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanExporter, SpanProcessor,
};

use crate::OtelError;
use crate::metrics::Metrics;
use crate::spans::Tracker;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;

/// An [`EventSink`] that turns a run's events into OpenTelemetry spans with the GenAI
/// semantic conventions and exports them in batches (OTLP/HTTP with [`OtelSink::builder`]).
///
/// Each agent run is an `invoke_agent {name}` span, each generation a `chat {model}` span, each
/// tool call an `execute_tool {name}` span, parented as the run nested them (an agent that a
/// tool call runs is that call's child), one trace per run. Spans carry the times the events
/// recorded and are made when their work ends.
///
/// `emit` never blocks and never waits for the collector: finished spans go into a bounded
/// queue ([`OtelSinkBuilder::max_queue_size`]) that a background thread exports in batches;
/// when the queue is full (a slow or dead collector) new spans are dropped. Call
/// [`OtelSink::shutdown`] at the end to export what is still queued.
///
/// ```
/// use std::sync::Arc;
/// use actuator_otel::OtelSink;
///
/// let sink = OtelSink::builder()
///     .endpoint("http://127.0.0.1:4318/v1/traces")
///     .service_name("my-agent")
///     .build()?;
/// let sink = Arc::new(sink);
/// // RunOptions::default().events(sink.clone()) sends a run's spans to it.
/// sink.shutdown()?;
/// # Ok::<(), actuator_otel::OtelError>(())
/// ```
pub struct OtelSink {
    tracker: Mutex<Tracker>,
    processor: BatchSpanProcessor,
    metrics: Option<Metrics>,
}

impl std::fmt::Debug for OtelSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelSink").finish_non_exhaustive()
    }
}

impl OtelSink {
    /// A builder with the defaults: the OTLP endpoint of the environment
    /// (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`) or
    /// `http://localhost:4318/v1/traces`, service `actuator`, no message contents.
    ///
    /// ```
    /// let builder = actuator_otel::OtelSink::builder().capture_content(true);
    /// # let _ = builder;
    /// ```
    pub fn builder() -> OtelSinkBuilder {
        OtelSinkBuilder::default()
    }

    /// Exports every span finished so far and waits until the exporter is done with them
    /// (bounded by the export timeout). Blocks the calling thread.
    ///
    /// ```
    /// # let sink = actuator_otel::OtelSink::builder().build()?;
    /// sink.force_flush()?; // nothing queued: returns at once
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn force_flush(&self) -> Result<(), OtelError> {
        let spans = self.processor.force_flush();
        if let Some(metrics) = &self.metrics {
            metrics.force_flush().map_err(OtelError::Export)?;
        }
        spans.map_err(OtelError::Export)
    }

    /// Exports what is queued and stops the exporter; later spans are dropped. Blocks the
    /// calling thread (bounded by the export timeout).
    ///
    /// ```
    /// # let sink = actuator_otel::OtelSink::builder().build()?;
    /// sink.shutdown()?;
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn shutdown(&self) -> Result<(), OtelError> {
        let spans = self.processor.shutdown();
        if let Some(metrics) = &self.metrics {
            metrics.shutdown().map_err(OtelError::Export)?;
        }
        spans.map_err(OtelError::Export)
    }

    /// Turns the event into spans: `in_span` is the Actuator span it was emitted in, when the
    /// emitter knows it (otherwise the span that began last and is still open).
    fn record(&self, event: &Event, in_span: Option<&str>) {
        let (span, names) = {
            let mut tracker = self.tracker.lock().unwrap_or_else(PoisonError::into_inner);
            let span = tracker.record(event, in_span);
            let names = match event {
                Event::Model(_) if self.metrics.is_some() => tracker.model_names(),
                _ => None,
            };
            (span, names)
        };
        if let Some(span) = span {
            self.processor.on_end(span);
        }
        if let (Event::Model(model), Some(metrics), Some((provider, request))) =
            (event, &self.metrics, names)
        {
            metrics.record(model, provider.as_ref(), &request);
        }
    }
}

impl EventSink for OtelSink {
    fn emit(&self, event: Event) {
        self.record(&event, None);
    }
}

/// Settings of an [`OtelSink`], each valid alone; [`OtelSinkBuilder::build`] makes the OTLP
/// exporter.
///
/// ```
/// use std::time::Duration;
/// let sink = actuator_otel::OtelSink::builder()
///     .endpoint("http://127.0.0.1:6006/v1/traces")
///     .header("authorization", "Bearer my-token")
///     .max_queue_size(1024)
///     .scheduled_delay(Duration::from_millis(500))
///     .build()?;
/// # Ok::<(), actuator_otel::OtelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OtelSinkBuilder {
    endpoint: Option<String>,
    headers: HashMap<String, String>,
    service_name: String,
    capture_content: bool,
    max_content_bytes: usize,
    max_queue_size: usize,
    max_export_batch_size: usize,
    scheduled_delay: Duration,
    export_timeout: Duration,
    parent: Option<TraceContext>,
    metrics: bool,
    metrics_endpoint: Option<String>,
    metrics_interval: Duration,
}

/// The default longest content attribute (16 KiB).
pub const DEFAULT_MAX_CONTENT_BYTES: usize = 16 * 1024;

impl Default for OtelSinkBuilder {
    fn default() -> Self {
        OtelSinkBuilder {
            endpoint: None,
            headers: HashMap::new(),
            service_name: "actuator".to_owned(),
            capture_content: false,
            max_content_bytes: DEFAULT_MAX_CONTENT_BYTES,
            max_queue_size: 2048,
            max_export_batch_size: 512,
            scheduled_delay: Duration::from_secs(1),
            export_timeout: Duration::from_secs(10),
            parent: None,
            metrics: false,
            metrics_endpoint: None,
            metrics_interval: Duration::from_secs(60),
        }
    }
}

impl OtelSinkBuilder {
    /// The OTLP/HTTP traces endpoint, the full URL (`http://host:4318/v1/traces`).
    #[must_use]
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// A header sent with every export (a collector's credentials).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// The `service.name` of the spans' resource (default `actuator`).
    #[must_use]
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = name.into();
        self
    }

    /// Whether spans carry message contents: a generation's input and output messages
    /// (`gen_ai.input.messages`, `gen_ai.output.messages`), a tool call's arguments and result.
    /// Off by default, as the conventions advise: they may hold what the run's user would not
    /// send to a collector.
    #[must_use]
    pub fn capture_content(mut self, on: bool) -> Self {
        self.capture_content = on;
        self
    }

    /// The longest content attribute in bytes; longer ones are cut (default
    /// [`DEFAULT_MAX_CONTENT_BYTES`]).
    #[must_use]
    pub fn max_content_bytes(mut self, bytes: usize) -> Self {
        self.max_content_bytes = bytes;
        self
    }

    /// How many finished spans may wait for export (default 2048); past it, new spans are
    /// dropped, so a slow or dead collector never grows memory or slows the run.
    #[must_use]
    pub fn max_queue_size(mut self, spans: usize) -> Self {
        self.max_queue_size = spans.max(1);
        self
    }

    /// The most spans in one export (default 512).
    #[must_use]
    pub fn max_export_batch_size(mut self, spans: usize) -> Self {
        self.max_export_batch_size = spans.max(1);
        self
    }

    /// How long spans wait to be exported together (default 1 s).
    #[must_use]
    pub fn scheduled_delay(mut self, delay: Duration) -> Self {
        self.scheduled_delay = delay;
        self
    }

    /// How long one OTLP export may take before it is given up (default 10 s): the HTTP
    /// client's timeout, which also bounds [`OtelSink::force_flush`] and [`OtelSink::shutdown`].
    #[must_use]
    pub fn export_timeout(mut self, timeout: Duration) -> Self {
        self.export_timeout = timeout;
        self
    }

    /// The trace context the runs traced here belong to (a caller's request, a job's trace):
    /// each run's root span is a child of its span, in its trace. Put the same context in the
    /// run's resources (`RunOptions::resource`) and the run's MCP calls carry it in their
    /// `_meta`, so an MCP server's spans join the same trace.
    ///
    /// ```
    /// use actuator_tool_core::TraceContext;
    /// let caller = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?;
    /// let builder = actuator_otel::OtelSink::builder().parent(caller);
    /// # let _ = builder;
    /// # Ok::<(), actuator_tool_core::TraceContextError>(())
    /// ```
    #[must_use]
    pub fn parent(mut self, context: TraceContext) -> Self {
        self.parent = Some(context);
        self
    }

    /// Whether to export the conventions' client metrics too: `gen_ai.client.token.usage`
    /// (by `gen_ai.token.type`) and `gen_ai.client.operation.duration`, per provider and
    /// model. Off by default. Their endpoint is [`OtelSinkBuilder::metrics_endpoint`], or the
    /// traces endpoint with `/v1/metrics` for `/v1/traces`.
    ///
    /// ```
    /// let sink = actuator_otel::OtelSink::builder()
    ///     .endpoint("http://127.0.0.1:4318/v1/traces")
    ///     .metrics(true)
    ///     .build()?;
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    #[must_use]
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// The OTLP/HTTP metrics endpoint, the full URL (`http://host:4318/v1/metrics`).
    #[must_use]
    pub fn metrics_endpoint(mut self, url: impl Into<String>) -> Self {
        self.metrics_endpoint = Some(url.into());
        self
    }

    /// How often metrics are exported (default 60 s; also at a flush and the shutdown).
    #[must_use]
    pub fn metrics_interval(mut self, interval: Duration) -> Self {
        self.metrics_interval = interval;
        self
    }

    /// The sink, exporting over OTLP/HTTP (protobuf).
    ///
    /// # Errors
    ///
    /// [`OtelError::Exporter`] when the exporter cannot be made (its HTTP client).
    pub fn build(self) -> Result<OtelSink, OtelError> {
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_timeout(self.export_timeout)
            .with_headers(self.headers.clone());
        if let Some(endpoint) = &self.endpoint {
            exporter = exporter.with_endpoint(endpoint.clone());
        }
        let exporter = exporter.build().map_err(OtelError::Exporter)?;
        if !self.metrics {
            return Ok(self.build_with_exporter(exporter));
        }
        let endpoint = self.metrics_endpoint.clone().or_else(|| {
            let traces = self.endpoint.as_deref()?;
            Some(match traces.strip_suffix("/v1/traces") {
                Some(base) => format!("{base}/v1/metrics"),
                None => traces.to_owned(),
            })
        });
        let mut metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_timeout(self.export_timeout)
            .with_headers(self.headers.clone());
        if let Some(endpoint) = endpoint {
            metrics = metrics.with_endpoint(endpoint);
        }
        let metrics = metrics.build().map_err(OtelError::Exporter)?;
        Ok(self.build_with_exporters(exporter, metrics))
    }

    /// The sink, exporting spans with `spans` and the client metrics with `metrics` (whatever
    /// [`OtelSinkBuilder::metrics`] says).
    ///
    /// ```
    /// use opentelemetry_sdk::metrics::InMemoryMetricExporter;
    /// use opentelemetry_sdk::trace::InMemorySpanExporter;
    /// let sink = actuator_otel::OtelSink::builder()
    ///     .build_with_exporters(InMemorySpanExporter::default(), InMemoryMetricExporter::default());
    /// sink.shutdown()?;
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn build_with_exporters(
        self,
        spans: impl SpanExporter + 'static,
        metrics: impl PushMetricExporter,
    ) -> OtelSink {
        let resource = self.resource();
        let interval = self.metrics_interval;
        let mut sink = self.build_with_exporter(spans);
        sink.metrics = Some(Metrics::new(metrics, interval, resource));
        sink
    }

    fn resource(&self) -> Resource {
        Resource::builder_empty()
            .with_service_name(self.service_name.clone())
            .build()
    }

    /// The sink, exporting with `exporter` (another protocol, or an in-memory exporter in
    /// tests), batched with these settings.
    ///
    /// ```
    /// use opentelemetry_sdk::trace::InMemorySpanExporter;
    /// let exporter = InMemorySpanExporter::default();
    /// let sink = actuator_otel::OtelSink::builder().build_with_exporter(exporter.clone());
    /// sink.force_flush()?;
    /// assert!(exporter.get_finished_spans().unwrap().is_empty());
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn build_with_exporter(self, exporter: impl SpanExporter + 'static) -> OtelSink {
        let config = BatchConfigBuilder::default()
            .with_max_queue_size(self.max_queue_size)
            .with_max_export_batch_size(self.max_export_batch_size.min(self.max_queue_size))
            .with_scheduled_delay(self.scheduled_delay)
            .build();
        let mut processor = BatchSpanProcessor::new(exporter, config);
        processor.set_resource(&self.resource());
        OtelSink {
            tracker: Mutex::new(Tracker::new(
                self.capture_content,
                self.max_content_bytes,
                self.parent.as_ref(),
            )),
            processor,
            metrics: None,
        }
    }
}
