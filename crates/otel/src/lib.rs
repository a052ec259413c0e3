//! OpenTelemetry for Actuator runs: an [`EventSink`](actuator_events::EventSink) that turns a
//! run's events into spans named and attributed as the
//! [GenAI semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/) say, and
//! exports them over OTLP/HTTP to the collector (Jaeger, Phoenix, Langfuse, an OpenTelemetry
//! Collector, …) the user names.
//!
//! | span | from | attributes |
//! |---|---|---|
//! | `invoke_agent {name}` | an agent run's span (begin/end) | `gen_ai.operation.name`, `gen_ai.agent.name` |
//! | `chat {model}` | a model event | `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons` |
//! | `execute_tool {name}` | a tool event | `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type` |
//! | `{kind} {name}` | other spans (handoff, compaction; an evaluation's `sample`, `solvers`, `scorers`, `scorer`) | `actuator.span.type` |
//!
//! An evaluation's scores (`EvalOptions::events` in `actuator-eval` sends its samples' events
//! here) are the conventions' evaluation results: a `gen_ai.evaluation.result` event on the
//! scorer's span, in the sample's trace, with `gen_ai.evaluation.name` (the scorer),
//! `gen_ai.evaluation.score.value` (the number the evaluation's metrics count) and
//! `gen_ai.evaluation.score.label` (`C`, `I`, … for a value that is not a number); a scorer's
//! map of values gives one result per entry (`{scorer}/{key}`). The explanation
//! (`gen_ai.evaluation.explanation`), which often quotes the model's answer, is content: only
//! with [`OtelSinkBuilder::capture_content`].
//!
//! With [`OtelSinkBuilder::metrics`], the conventions' client metrics too:
//! `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`.
//!
//! Message contents (`gen_ai.input.messages`, `gen_ai.output.messages`, tool arguments and
//! results) only with [`OtelSinkBuilder::capture_content`]; off by default.
//!
//! ```
//! use std::sync::Arc;
//! use actuator_events::{Event, EventSink, SpanBeginEvent, SpanEndEvent};
//! use opentelemetry_sdk::trace::InMemorySpanExporter;
//!
//! let exporter = InMemorySpanExporter::default();
//! let sink = actuator_otel::OtelSink::builder().build_with_exporter(exporter.clone())?;
//! // What an agent run emits; `run(agent, input, RunOptions::default().events(sink))` does it.
//! sink.emit(Event::SpanBegin(Box::new(SpanBeginEvent {
//!     id: "s1".into(),
//!     parent_id: None,
//!     kind: "agent".into(),
//!     name: "researcher".into(),
//!     tool_call_id: None,
//! })));
//! sink.emit(Event::SpanEnd(SpanEndEvent { id: "s1".into() }));
//! sink.force_flush()?;
//! let spans = exporter.get_finished_spans().unwrap();
//! assert_eq!(spans[0].name, "invoke_agent researcher");
//! # Ok::<(), actuator_otel::OtelError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod attrs;
mod builder;
mod evaluation;
mod inbox;
mod metrics;
mod sink;
mod spans;

pub use builder::{DEFAULT_MAX_CONTENT_BYTES, OtelSinkBuilder};
pub use sink::OtelSink;
pub use spans::MAX_OPEN_SPANS;

/// What can go wrong making or driving the exporter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The OTLP exporter could not be made.
    #[error("could not make the OTLP exporter; check the endpoint")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// Exporting (a flush or the shutdown) failed or timed out.
    #[error("exporting spans failed; is the collector reachable?")]
    Export(#[source] opentelemetry_sdk::error::OTelSdkError),
    /// The TLS settings of the exporter's HTTP client could not be built.
    #[error("the TLS settings of the exporter's HTTP client cannot be built")]
    Tls(#[source] actuator_model::tls::TlsError),
    /// The exporter's HTTP client could not be built.
    #[error("the exporter's HTTP client cannot be built")]
    HttpClient(#[source] reqwest::Error),
    /// The thread that turns events into spans could not start.
    #[error("could not start the thread that turns events into spans")]
    Thread(#[source] std::io::Error),
    /// The events emitted before a flush were not all turned into spans in time.
    #[error("the events emitted so far were not turned into spans within {0:?}")]
    Timeout(std::time::Duration),
}
