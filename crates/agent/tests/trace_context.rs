//! A run's W3C trace context (a `TraceContext` among its resources, as MCP calls read it)
//! reaches every generation's request, where providers send it as `traceparent`.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Mutex;

use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, react, run};
use actuator_model::{BoxFuture, GenerateRequest, Model, ModelError, ModelOutput};
use actuator_tool_core::TraceContext;

/// Answers at once and remembers the `traceparent` of each request it was given.
#[derive(Default)]
struct Probe(Mutex<Vec<Option<String>>>);

impl Model for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        self.0
            .lock()
            .unwrap()
            .push(request.trace.map(TraceContext::traceparent));
        Box::pin(async { Ok(ModelOutput::from_content("probe", "done")) })
    }
}

#[tokio::test]
async fn a_runs_trace_context_reaches_each_generations_request() {
    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let probe = std::sync::Arc::new(Probe::default());
    let agent = react().model(probe.clone()).build().unwrap();
    let trace = TraceContext::parse(PARENT).unwrap();
    // The probe never submits: two turns, then the limit ends the run.
    let options = RunOptions::new().resource(trace).limits([turn_limit(2)]);
    let _ = run(&agent, "hi", options).await;
    let seen = probe.0.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|t| t.as_deref() == Some(PARENT)),
        "{seen:?}"
    );

    // Without one, requests carry none.
    let probe = std::sync::Arc::new(Probe::default());
    let agent = react().model(probe.clone()).build().unwrap();
    let _ = run(&agent, "hi", RunOptions::new().limits([turn_limit(2)])).await;
    assert!(probe.0.lock().unwrap().iter().all(Option::is_none));
}
