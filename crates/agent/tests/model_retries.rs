//! A provider's retries, reported while a generation runs: each one a `ModelRetryEvent`, the
//! count on the `ModelEvent`, and the waits left out of working time (a working limit's
//! deadline moves past them; a time limit's does not).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actuator_agent::{
    RunContext,
    limits::{LimitKind, time_limit, working_limit},
};
use actuator_events::{Event, EventLog};
use actuator_model::{
    BoxFuture, ChatMessage, GenerateConfig, GenerateObserver, GenerateRequest, Model, ModelError,
    ModelOutput, RetryReport,
};

/// Fails `retries` times, each followed by a `wait` it reports, as a provider does, then
/// answers.
struct RetryingModel {
    retries: u32,
    wait: Duration,
}

impl Model for RetryingModel {
    fn name(&self) -> &str {
        "retrying"
    }

    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            for n in 1..=self.retries {
                request
                    .wait_for_retry(
                        RetryReport::new(n, self.wait, "HTTP 429: slow down").with_status(429),
                    )
                    .await;
            }
            Ok(ModelOutput::from_content("retrying", "done"))
        })
    }
}

async fn generate(
    cx: &RunContext,
    model: &RetryingModel,
) -> Result<ModelOutput, actuator_agent::AgentError> {
    cx.generate(model, GenerateRequest::new(&[ChatMessage::user("hi")]))
        .await
}

#[tokio::test]
async fn each_retry_is_an_event_and_the_model_event_counts_them() {
    let log = EventLog::new();
    let cx = RunContext::with_events(log.clone()).scoped(&[]);
    let model = RetryingModel {
        retries: 2,
        wait: Duration::from_millis(60),
    };
    let out = generate(&cx, &model).await.unwrap();
    assert_eq!(out.completion(), "done");

    let events = log.events();
    let retries: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelRetry(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!((retries[0].retry, retries[1].retry), (1, 2));
    assert_eq!(retries[0].model, "retrying");
    assert_eq!(retries[0].status, Some(429));
    assert_eq!(retries[0].error, "HTTP 429: slow down");
    assert!((retries[0].wait - 0.06).abs() < 1e-9);

    // The retries come before the generation's own event, which counts them and leaves
    // their waits out of its working time.
    let model_at = events
        .iter()
        .position(|e| matches!(e, Event::Model(_)))
        .unwrap();
    assert!(
        events[..model_at]
            .iter()
            .filter(|e| matches!(e, Event::ModelRetry(_)))
            .count()
            == 2
    );
    let Event::Model(m) = &events[model_at] else {
        unreachable!()
    };
    assert_eq!(m.retries, 2);
    let elapsed = m.completed_at - m.started_at;
    assert!(elapsed >= 0.12, "{elapsed}");
    assert!(m.working_time < 0.05, "working time {}", m.working_time);

    // The run's usage says the same: the waits are time but not working time.
    let usage = cx.usage();
    assert!(usage.time >= Duration::from_millis(120));
    assert!(usage.working_time < Duration::from_millis(50), "{usage:?}");
}

#[tokio::test]
async fn retry_waits_do_not_use_up_a_working_limit() {
    // 3 waits of 80 ms: 240 ms of wall clock inside a 150 ms working limit.
    let cx = RunContext::new().scoped(&[working_limit(Duration::from_millis(150))]);
    let model = RetryingModel {
        retries: 3,
        wait: Duration::from_millis(80),
    };
    let out = generate(&cx, &model).await.unwrap();
    assert_eq!(out.completion(), "done");
}

#[tokio::test]
async fn retry_waits_still_count_against_a_time_limit() {
    let cx = RunContext::new().scoped(&[time_limit(Duration::from_millis(150))]);
    let model = RetryingModel {
        retries: 3,
        wait: Duration::from_millis(80),
    };
    let started = Instant::now();
    let err = generate(&cx, &model).await.unwrap_err();
    assert_eq!(err.limit().map(|l| l.kind), Some(LimitKind::Time));
    // Stopped at the limit, not after the model finished.
    assert!(started.elapsed() < Duration::from_millis(230));
}

#[tokio::test]
async fn a_working_limit_still_stops_a_generation_that_works_past_it() {
    struct Busy;
    impl Model for Busy {
        fn name(&self) -> &str {
            "busy"
        }
        fn generate<'a>(
            &'a self,
            request: GenerateRequest<'a>,
        ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
            Box::pin(async move {
                // One short reported wait, then more work than the limit allows.
                let report = RetryReport::new(1, Duration::from_millis(30), "HTTP 500");
                request.wait_for_retry(report).await;
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(ModelOutput::from_content("busy", "late"))
            })
        }
    }
    let cx = RunContext::new().scoped(&[working_limit(Duration::from_millis(100))]);
    let started = Instant::now();
    let err = cx
        .generate(&Busy, GenerateRequest::new(&[ChatMessage::user("hi")]))
        .await
        .unwrap_err();
    assert_eq!(err.limit().map(|l| l.kind), Some(LimitKind::Working));
    // About 100 ms of work plus the 30 ms wait: well before the model's 5 s.
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(125), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn a_wait_cut_short_counts_only_the_time_it_lasted() {
    // The generation's own timeout drops it 100 ms into a 10 s retry wait.
    let cx = RunContext::new().scoped(&[]);
    let model = RetryingModel {
        retries: 1,
        wait: Duration::from_secs(10),
    };
    let config = GenerateConfig::default().timeout(Duration::from_millis(100));
    let err = cx
        .generate(
            &model,
            GenerateRequest::new(&[ChatMessage::user("hi")]).config(&config),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("timeout"), "{err}");
    let usage = cx.usage();
    let waiting = usage.time - usage.working_time;
    assert!(
        waiting >= Duration::from_millis(90) && waiting < Duration::from_millis(500),
        "{usage:?}"
    );
}

/// Remembers the retries it hears and the waits.
#[derive(Default)]
struct Heard {
    retries: Mutex<Vec<u32>>,
    waits: Mutex<Vec<Duration>>,
}

impl GenerateObserver for Heard {
    fn retrying(&self, report: &RetryReport) {
        self.retries.lock().unwrap().push(report.retry);
    }
    fn waited(&self, _: &RetryReport, waited: Duration) {
        self.waits.lock().unwrap().push(waited);
    }
}

#[tokio::test]
async fn an_observer_on_the_request_still_hears_retries_the_run_records() {
    // The run records the retries (events, waiting time) and passes them on to the observer
    // the caller put on the request, through a shared model.
    let log = EventLog::new();
    let cx = RunContext::with_events(log.clone()).scoped(&[]);
    let model: Arc<dyn Model> = Arc::new(RetryingModel {
        retries: 2,
        wait: Duration::from_millis(5),
    });
    let heard = Heard::default();
    let input = [ChatMessage::user("hi")];
    let out = cx
        .generate(&model, GenerateRequest::new(&input).observer(&heard))
        .await
        .unwrap();
    assert_eq!(out.completion(), "done");
    assert_eq!(*heard.retries.lock().unwrap(), [1, 2]);
    assert_eq!(heard.waits.lock().unwrap().len(), 2);
    let recorded = log
        .events()
        .iter()
        .filter(|e| matches!(e, Event::ModelRetry(_)))
        .count();
    assert_eq!(recorded, 2);
}
