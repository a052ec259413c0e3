//! What a generation reports while it runs, beside its output: the retries a provider makes
//! and the time it spends waiting between them.
//!
//! A provider cannot know the run it serves (models are shared by many runs), so the caller
//! that runs a generation installs a [`GenerateObserver`] for the generation's future with
//! [`observe_generation`], and the provider waits between attempts with [`wait_for_retry`],
//! which reports to whichever observer is installed. Without an observer nobody hears. The
//! observer is a task-local value: it follows the generation's future through any wrapper
//! models, but not into tasks the provider spawns.

use std::future::Future;
use std::sync::Arc;
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

/// Receives what a generation reports while it runs. Called inline: it must be cheap and must
/// not block.
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
}

tokio::task_local! {
    static OBSERVER: Arc<dyn GenerateObserver>;
}

/// Runs `generation` with `observer` receiving what it reports.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::{Duration, Instant};
/// use actuator_model::{GenerateObserver, RetryReport, observe_generation, wait_for_retry};
///
/// #[derive(Default)]
/// struct Count(Mutex<u32>);
/// impl GenerateObserver for Count {
///     fn retrying(&self, _: &RetryReport) { *self.0.lock().unwrap() += 1; }
///     fn waited(&self, _: &RetryReport, _: Duration) {}
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let count = Arc::new(Count::default());
/// observe_generation(count.clone(), async {
///     wait_for_retry(RetryReport::new(1, Duration::from_millis(1), "HTTP 429")).await;
/// })
/// .await;
/// // Outside a generation the wait still happens; nobody hears of it.
/// wait_for_retry(RetryReport::new(1, Duration::ZERO, "outside")).await;
/// assert_eq!(*count.0.lock().unwrap(), 1);
/// # });
/// ```
pub async fn observe_generation<F: Future>(
    observer: Arc<dyn GenerateObserver>,
    generation: F,
) -> F::Output {
    OBSERVER.scope(observer, generation).await
}

/// What a provider calls between two attempts: tells the observer of the generation this runs
/// in (if any) about the retry, waits `report.wait`, and tells it how long the wait really
/// took, also when the future is dropped during it. The caller (an agent's run) records the
/// wait as waiting, not working time, and can show the retry as it happens.
pub async fn wait_for_retry(report: RetryReport) {
    struct Waiting {
        report: RetryReport,
        started: Instant,
    }
    impl Drop for Waiting {
        fn drop(&mut self) {
            let waited = self.started.elapsed();
            let _ = OBSERVER.try_with(|o| o.waited(&self.report, waited));
        }
    }
    let _ = OBSERVER.try_with(|o| o.retrying(&report));
    let wait = report.wait;
    let _waiting = Waiting {
        report,
        started: Instant::now(),
    };
    tokio::time::sleep(wait).await;
}
