//! What a generation reports while it runs, beside its output: the retries a provider makes,
//! the time it spends waiting between them, and, when someone listens, the deltas of a
//! streamed response as they arrive ([`StreamDelta`]).
//!
//! A provider cannot know the run it serves (models are shared by many runs), so the caller
//! puts a [`GenerateObserver`] on the [`GenerateRequest`](crate::GenerateRequest), and the
//! provider waits between attempts with
//! [`GenerateRequest::wait_for_retry`](crate::GenerateRequest::wait_for_retry), which reports
//! to it. Without an observer nobody hears. The observer travels with the request: a wrapper
//! model that passes the request on passes the observer on too.

use std::time::{Duration, Instant};

/// One retry a provider is about to make: the attempt that failed and the wait before the
/// next.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetryReport {
    /// Which retry this is (1 for the first; the request sent after the wait is attempt
    /// `retry + 1`).
    pub retry: u32,
    /// How long the provider waits before sending again.
    pub wait: Duration,
    /// Why the attempt failed.
    pub error: String,
    /// The HTTP status of the failed attempt, when it had one.
    pub status: Option<u16>,
}

impl RetryReport {
    /// A report of retry `retry` after `wait`, because of `error`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use actuator_model::RetryReport;
    /// let report = RetryReport::new(1, Duration::from_secs(2), "HTTP 429").with_status(429);
    /// assert_eq!((report.retry, report.status), (1, Some(429)));
    /// ```
    pub fn new(retry: u32, wait: Duration, error: impl Into<String>) -> Self {
        RetryReport {
            retry,
            wait,
            error: error.into(),
            status: None,
        }
    }

    /// The HTTP status of the failed attempt.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
}

/// One piece of a streamed response, as a provider parsed it (the reference's `on_stream`
/// kinds, less the retry boundary, which the observer hears as
/// [`GenerateObserver::retrying`]). Borrowed from the provider's parse buffer: an observer
/// that keeps it copies it.
///
/// ```
/// use actuator_model::StreamDelta;
/// let delta = StreamDelta::Text("Hel");
/// assert!(matches!(delta, StreamDelta::Text("Hel")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamDelta<'a> {
    /// Text to append to the text received so far.
    Text(&'a str),
    /// Reasoning to append to the reasoning received so far.
    Reasoning(&'a str),
    /// A fragment of a tool call's arguments.
    ToolCall(ToolCallDelta<'a>),
}

/// A fragment of a tool call's arguments (partial JSON: the fragments of one call, appended,
/// are its arguments once the call finishes).
///
/// ```
/// use actuator_model::{StreamDelta, ToolCallDelta};
/// let delta = ToolCallDelta::new(Some("call_1"), Some("add"), "{\"x\":");
/// assert_eq!(delta.arguments, "{\"x\":");
/// let _ = StreamDelta::ToolCall(delta);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallDelta<'a> {
    /// The call's id, once the provider has reported it.
    pub id: Option<&'a str>,
    /// The function called, once the provider has reported it.
    pub function: Option<&'a str>,
    /// The fragment of the arguments (may be empty when the delta only names the call).
    pub arguments: &'a str,
}

impl<'a> ToolCallDelta<'a> {
    /// A fragment `arguments` of the call `id` to `function`.
    pub fn new(id: Option<&'a str>, function: Option<&'a str>, arguments: &'a str) -> Self {
        ToolCallDelta {
            id,
            function,
            arguments,
        }
    }
}

/// Receives what a generation reports while it runs. Called inline: it must be cheap and must
/// not block.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use actuator_model::{GenerateObserver, RetryReport};
///
/// #[derive(Default)]
/// struct Count(AtomicU32);
/// impl GenerateObserver for Count {
///     fn retrying(&self, _: &RetryReport) { self.0.fetch_add(1, Ordering::Relaxed); }
///     fn waited(&self, _: &RetryReport, _: Duration) {}
/// }
/// let count = Count::default();
/// count.retrying(&RetryReport::new(1, Duration::ZERO, "HTTP 500"));
/// assert_eq!(count.0.load(Ordering::Relaxed), 1);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a generation observer",
    note = "implement `actuator_model::GenerateObserver` (retrying and waited)"
)]
pub trait GenerateObserver: Send + Sync {
    /// The provider is about to wait `report.wait` and try again: from now until
    /// [`GenerateObserver::waited`] the generation waits rather than works.
    fn retrying(&self, report: &RetryReport);
    /// The wait of `report` ended after `waited`: shorter than planned when the generation
    /// was dropped during it, a little longer when the timer fired late.
    fn waited(&self, report: &RetryReport, waited: Duration);

    /// The request is about to wait, at most `slice`, for a slot of its endpoint's connection
    /// limit ([`concurrency`](crate::concurrency); the reference's `sample_waiting_for`):
    /// waiting, not working, until [`GenerateObserver::queued`] says how long it really took.
    /// A long wait comes as several slices. Default: nothing.
    fn queueing(&self, slice: Duration) {
        let _ = slice;
    }

    /// The wait announced by [`GenerateObserver::queueing`] ended after `waited` (at most
    /// about `slice`). Default: nothing.
    fn queued(&self, slice: Duration, waited: Duration) {
        let _ = (slice, waited);
    }

    /// Whether this observer wants the deltas of a streamed response. A provider asks once per
    /// attempt and, when nobody wants them, neither builds nor reports any: streaming then
    /// costs what it did before deltas existed. Default: no.
    fn wants_deltas(&self) -> bool {
        false
    }

    /// One delta of a streamed response, in the order the provider parsed them; only called
    /// when [`GenerateObserver::wants_deltas`] said yes. A retry after deltas were reported
    /// discards them: the output is the successful attempt's alone (the observer hears the
    /// boundary as [`GenerateObserver::retrying`]).
    fn delta(&self, delta: &StreamDelta<'_>) {
        let _ = delta;
    }
}

/// Tells `observer` (if any) about the retry, waits `report.wait`, and tells it how long the
/// wait really took, also when the future is dropped during it.
pub(crate) async fn wait_reported(observer: Option<&dyn GenerateObserver>, report: RetryReport) {
    struct Waiting<'o> {
        observer: Option<&'o dyn GenerateObserver>,
        report: RetryReport,
        started: Instant,
    }
    impl Drop for Waiting<'_> {
        fn drop(&mut self) {
            if let Some(o) = self.observer {
                o.waited(&self.report, self.started.elapsed());
            }
        }
    }
    if let Some(o) = observer {
        o.retrying(&report);
    }
    let wait = report.wait;
    let _waiting = Waiting {
        observer,
        report,
        started: Instant::now(),
    };
    tokio::time::sleep(wait).await;
}

/// How much of a wait for a connection slot is announced at a time: a working limit's
/// deadline moves past each slice before it is waited, as it does past a retry's wait.
pub(crate) const QUEUE_SLICE: Duration = Duration::from_secs(1);

/// Runs `wait` (a wait for a connection slot), telling `observer` (if any) about it a
/// [`QUEUE_SLICE`] at a time, so the time counts as waiting.
pub(crate) async fn wait_queued<F: std::future::Future>(
    observer: Option<&dyn GenerateObserver>,
    wait: F,
) -> F::Output {
    let Some(observer) = observer else {
        return wait.await;
    };
    /// Settles the slice also when the future is dropped during it.
    struct Slice<'o> {
        observer: &'o dyn GenerateObserver,
        started: Instant,
    }
    impl Drop for Slice<'_> {
        fn drop(&mut self) {
            self.observer.queued(QUEUE_SLICE, self.started.elapsed());
        }
    }
    let mut wait = std::pin::pin!(wait);
    loop {
        observer.queueing(QUEUE_SLICE);
        let _slice = Slice {
            observer,
            started: Instant::now(),
        };
        if let Ok(output) = tokio::time::timeout(QUEUE_SLICE, wait.as_mut()).await {
            return output;
        }
    }
}
