//! [`OtelSinkBuilder`]: the settings of an [`OtelSink`] and the exporters it makes.

use std::collections::HashMap;
use std::time::Duration;

use actuator_tool_core::TraceContext;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanExporter, SpanProcessor,
};

use crate::OtelError;
use crate::metrics::Metrics;
use crate::sink::{OtelSink, Outlet};
use crate::spans::Tracker;

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

    /// How many events may wait to be turned into spans, and how many finished spans may wait
    /// for export (default 2048 each); past either, new ones are dropped, so a slow or dead
    /// collector never grows memory or slows the run.
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
    /// [`OtelError::Exporter`] when the exporter cannot be made (its HTTP client),
    /// [`OtelError::Thread`] when the thread that turns events into spans cannot start.
    pub fn build(self) -> Result<OtelSink, OtelError> {
        // A plain `http://` endpoint needs no roots; one from the environment may be either.
        let https = self
            .endpoint
            .as_deref()
            .is_none_or(|e| e.starts_with("https:"));
        let client = http_client(https, self.export_timeout)?;
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_timeout(self.export_timeout)
            .with_headers(self.headers.clone());
        if let Some(endpoint) = &self.endpoint {
            exporter = exporter.with_endpoint(endpoint.clone());
        }
        let exporter = exporter.build().map_err(OtelError::Exporter)?;
        if !self.metrics {
            return self.build_with_exporter(exporter);
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
            .with_http_client(client)
            .with_timeout(self.export_timeout)
            .with_headers(self.headers.clone());
        if let Some(endpoint) = endpoint {
            metrics = metrics.with_endpoint(endpoint);
        }
        let metrics = metrics.build().map_err(OtelError::Exporter)?;
        self.build_with_exporters(exporter, metrics)
    }

    /// The sink, exporting spans with `spans` and the client metrics with `metrics` (whatever
    /// [`OtelSinkBuilder::metrics`] says).
    ///
    /// # Errors
    ///
    /// [`OtelError::Thread`] when the thread that turns events into spans cannot start.
    ///
    /// ```
    /// use opentelemetry_sdk::metrics::InMemoryMetricExporter;
    /// use opentelemetry_sdk::trace::InMemorySpanExporter;
    /// let sink = actuator_otel::OtelSink::builder()
    ///     .build_with_exporters(InMemorySpanExporter::default(), InMemoryMetricExporter::default())?;
    /// sink.shutdown()?;
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn build_with_exporters(
        self,
        spans: impl SpanExporter + 'static,
        metrics: impl PushMetricExporter,
    ) -> Result<OtelSink, OtelError> {
        let metrics = Metrics::new(metrics, self.metrics_interval, self.resource());
        self.assemble(spans, Some(metrics))
    }

    fn resource(&self) -> Resource {
        Resource::builder_empty()
            .with_service_name(self.service_name.clone())
            .build()
    }

    /// The sink, exporting with `exporter` (another protocol, or an in-memory exporter in
    /// tests), batched with these settings.
    ///
    /// # Errors
    ///
    /// [`OtelError::Thread`] when the thread that turns events into spans cannot start.
    ///
    /// ```
    /// use opentelemetry_sdk::trace::InMemorySpanExporter;
    /// let exporter = InMemorySpanExporter::default();
    /// let sink = actuator_otel::OtelSink::builder().build_with_exporter(exporter.clone())?;
    /// sink.force_flush()?;
    /// assert!(exporter.get_finished_spans().unwrap().is_empty());
    /// # Ok::<(), actuator_otel::OtelError>(())
    /// ```
    pub fn build_with_exporter(
        self,
        exporter: impl SpanExporter + 'static,
    ) -> Result<OtelSink, OtelError> {
        self.assemble(exporter, None)
    }

    fn assemble(
        self,
        exporter: impl SpanExporter + 'static,
        metrics: Option<Metrics>,
    ) -> Result<OtelSink, OtelError> {
        let config = BatchConfigBuilder::default()
            .with_max_queue_size(self.max_queue_size)
            .with_max_export_batch_size(self.max_export_batch_size.min(self.max_queue_size))
            .with_scheduled_delay(self.scheduled_delay)
            .build();
        let mut processor = BatchSpanProcessor::new(exporter, config);
        processor.set_resource(&self.resource());
        let tracker = Tracker::new(
            self.capture_content,
            self.max_content_bytes,
            self.parent.as_ref(),
        );
        OtelSink::start(
            tracker,
            Outlet { processor, metrics },
            self.max_queue_size,
            self.export_timeout,
        )
    }
}

/// The exporters' HTTP client: reqwest's blocking client (the SDK exports from threads of its
/// own, without an async runtime), with the TLS set-up of the providers' and MCP clients
/// (rustls on `ring`, handed to the client, the platform's roots for `https`), so that it
/// works whichever other crates' reqwest features a program has. Built on a thread of its own:
/// reqwest refuses to build a blocking client inside an async runtime.
fn http_client(https: bool, timeout: Duration) -> Result<reqwest::blocking::Client, OtelError> {
    let tls = actuator_model::tls::client_config(https, Vec::new()).map_err(OtelError::Tls)?;
    std::thread::Builder::new()
        .name("actuator-otel-client".to_owned())
        .spawn(move || {
            reqwest::blocking::Client::builder()
                .tls_backend_preconfigured(tls)
                .timeout(timeout)
                // A collector has no reason to redirect, and reqwest keeps custom headers (a
                // collector's key in `x-api-key`, say) across origins: a redirect is an
                // export error, never a request elsewhere with the credentials.
                .redirect(reqwest::redirect::Policy::none())
                .build()
        })
        .map_err(OtelError::Thread)?
        .join()
        .map_err(|_| OtelError::Thread(std::io::Error::other("building the HTTP client panicked")))?
        .map_err(OtelError::HttpClient)
}
