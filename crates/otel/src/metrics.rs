//! The GenAI conventions' client metrics: `gen_ai.client.token.usage` and
//! `gen_ai.client.operation.duration`, one record per generation, exported periodically.

use actuator_events::ModelEvent;
use opentelemetry::metrics::{Histogram, MeterProvider};
use opentelemetry::{KeyValue, StringValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

use crate::attrs::*;

/// The conventions' advised buckets for token counts.
const TOKEN_BUCKETS: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];
/// The conventions' advised buckets for durations (seconds).
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The meter provider and the two instruments. The SDK aggregates records in memory, per
/// set of attributes (at most 2000 sets per instrument, the SDK's cardinality limit, past
/// which they fold into one overflow set), and exports them from its own thread.
pub(crate) struct Metrics {
    provider: SdkMeterProvider,
    tokens: Histogram<u64>,
    duration: Histogram<f64>,
}

impl Metrics {
    pub(crate) fn new(
        exporter: impl PushMetricExporter,
        interval: std::time::Duration,
        resource: Resource,
    ) -> Self {
        let reader = PeriodicReader::builder(exporter)
            .with_interval(interval)
            .build();
        let provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        let meter = provider.meter("actuator-otel");
        let tokens = meter
            .u64_histogram(GEN_AI_CLIENT_TOKEN_USAGE)
            .with_unit("{token}")
            .with_description("Number of input and output tokens used.")
            .with_boundaries(TOKEN_BUCKETS.to_vec())
            .build();
        let duration = meter
            .f64_histogram(GEN_AI_CLIENT_OPERATION_DURATION)
            .with_unit("s")
            .with_description("GenAI operation duration.")
            .with_boundaries(DURATION_BUCKETS.to_vec())
            .build();
        Metrics {
            provider,
            tokens,
            duration,
        }
    }

    /// Records one generation: its duration, and its tokens when the provider reported them.
    pub(crate) fn record(
        &self,
        model: &ModelEvent,
        provider: Option<&StringValue>,
        request: &StringValue,
    ) {
        let mut attributes = Vec::with_capacity(5);
        attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, "chat"));
        attributes.push(KeyValue::new(GEN_AI_REQUEST_MODEL, request.clone()));
        if let Some(provider) = provider {
            attributes.push(KeyValue::new(GEN_AI_PROVIDER_NAME, provider.clone()));
        }
        if model.error.is_some() {
            attributes.push(KeyValue::new(ERROR_TYPE, "model_error"));
        }
        self.duration.record(
            (model.completed_at - model.started_at).max(0.0),
            &attributes,
        );
        if let Some(usage) = model.output.as_ref().and_then(|o| o.usage.as_ref()) {
            attributes.push(KeyValue::new(GEN_AI_TOKEN_TYPE, "input"));
            self.tokens.record(usage.input_tokens, &attributes);
            if let Some(last) = attributes.last_mut() {
                *last = KeyValue::new(GEN_AI_TOKEN_TYPE, "output");
            }
            self.tokens.record(usage.output_tokens, &attributes);
        }
    }

    pub(crate) fn force_flush(&self) -> OTelSdkResult {
        self.provider.force_flush()
    }

    pub(crate) fn shutdown(&self) -> OTelSdkResult {
        self.provider.shutdown()
    }
}
