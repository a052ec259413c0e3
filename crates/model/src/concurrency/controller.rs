//! [`ConcurrencyController`]: a resizable limit on one endpoint's requests and the reference's
//! rules for resizing it (slow start, then additive growth, multiplicative cuts on rate
//! limits), plus the counts the progress display and the log show.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::{AdaptiveConcurrency, ConnectionLimit, ceil_to_nice, floor_to_nice};

/// The longest an endpoint stops admitting new requests after a `Retry-After`, and the longest
/// such pauses hold one request in all: a server cannot hold the process's requests for longer
/// than this (each request's own retry still waits what it was told, within its retry
/// policy).
pub const MAX_RETRY_AFTER_PAUSE: Duration = Duration::from_secs(60);

/// The reference's `ROUND_SIZE_FLOOR`: a round is at least this many clean successes.
const ROUND_SIZE_FLOOR: u32 = 4;
/// The reference's `HISTORY_LIMIT`: the most limit changes kept (the oldest go first).
const HISTORY_LIMIT: usize = 200;
/// The reference's `SATURATION_THRESHOLD`, as a fraction in tenths: a round grows the limit
/// only when at least 8/10 of it was in use at some point, so headroom never tested is never
/// granted.
const SATURATION_TENTHS: u32 = 8;

/// Why a limit changed: the reference's `LimitChangeReason` (its `manual` is not here: there is
/// no control channel to retune a limit by hand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitChangeReason {
    /// Doubled: no rate limit seen yet.
    SlowStart,
    /// Grown after a clean, saturated round.
    SteadyStateUp,
    /// Cut after a rate limit.
    RateLimit,
}

/// One change of a limit, as the reference's log records it (`ConnectionLimitChange` in
/// `EvalStats.connection_limit_history`).
///
/// ```
/// use actuator_model::concurrency::{ConnectionLimitChange, LimitChangeReason};
/// let change: ConnectionLimitChange = serde_json::from_str(
///     r#"{"timestamp": 1.5, "model": "openai/gpt-4o", "old_limit": 20, "new_limit": 15, "reason": "rate_limit"}"#,
/// ).unwrap();
/// assert_eq!(change.reason, LimitChangeReason::RateLimit);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConnectionLimitChange {
    /// When, in seconds since the Unix epoch.
    pub timestamp: f64,
    /// The model's display name (`provider/model`), never its key.
    pub model: String,
    /// The limit before.
    pub old_limit: u32,
    /// The limit after.
    pub new_limit: u32,
    /// Why.
    pub reason: LimitChangeReason,
}

/// What a controller has seen so far, for a throughput line.
///
/// ```
/// use actuator_model::concurrency::{ConnectionLimit, connection_controller};
/// let c = connection_controller("doc|stats", "demo/model", &ConnectionLimit::Fixed(3));
/// let stats = c.stats();
/// assert_eq!((stats.concurrency, stats.in_use, stats.requests), (3, 0, 0));
/// assert!(!stats.adaptive);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// The model's display name.
    pub model: String,
    /// Whether the limit tunes itself.
    pub adaptive: bool,
    /// The limit now.
    pub concurrency: u32,
    /// Requests in flight now.
    pub in_use: u32,
    /// Requests that succeeded, since the controller was made.
    pub requests: u64,
    /// Rate limits (429, 529) received: each one a back-off.
    pub rate_limits: u64,
    /// Other failed attempts of a kind that is retried (5xx, timeouts, broken connections).
    pub retries: u64,
}

/// The limit on one endpoint's concurrent requests (see the [module](super) docs).
///
/// Each HTTP attempt holds a [`ConnectionPermit`]; the caller reports its outcome with
/// [`success`](Self::success), [`rate_limited`](Self::rate_limited) or
/// [`retried`](Self::retried). Lowering the limit never stops a request in flight: new ones
/// wait until enough have finished.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use actuator_model::concurrency::{AdaptiveConcurrency, ConnectionLimit, connection_controller};
/// let adaptive = AdaptiveConcurrency::new(1, 2, 8).unwrap();
/// let c = connection_controller("doc|controller", "demo/m", &ConnectionLimit::Adaptive(adaptive));
/// // Slow start: a saturated round of clean successes doubles the limit.
/// for _ in 0..4 {
///     let (a, b) = (c.acquire().await, c.acquire().await);
///     drop((a, b));
///     c.success(false);
/// }
/// assert_eq!(c.concurrency(), 4);
/// c.rate_limited(None);
/// assert_eq!(c.concurrency(), 3);
/// # }
/// ```
pub struct ConcurrencyController {
    name: String,
    key: String,
    adaptive: Option<AdaptiveConcurrency>,
    semaphore: Semaphore,
    in_use: AtomicUsize,
    state: Mutex<State>,
}

impl std::fmt::Debug for ConcurrencyController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the key: it may carry a base URL with credentials.
        f.debug_struct("ConcurrencyController")
            .field("name", &self.name)
            .field("adaptive", &self.adaptive)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

struct State {
    limit: u32,
    /// Permits to forget as they come back: the limit was lowered below what was in flight.
    debt: u32,
    success_count: u32,
    max_in_use_this_round: u32,
    first_rate_limit_seen: bool,
    cooldown_until: Option<Instant>,
    /// No request is admitted before this (`Retry-After`).
    paused_until: Option<Instant>,
    history: VecDeque<ConnectionLimitChange>,
    requests: u64,
    rate_limits: u64,
    retries: u64,
}

impl State {
    fn in_cooldown(&self, now: Instant) -> bool {
        self.cooldown_until.is_some_and(|until| now < until)
    }

    fn paused(&self, now: Instant) -> Option<Instant> {
        self.paused_until.filter(|until| now < *until)
    }
}

/// A slot for one HTTP attempt; dropping it frees the slot.
#[must_use = "the slot is freed when the permit is dropped"]
pub struct ConnectionPermit<'a> {
    controller: &'a ConcurrencyController,
    permit: Option<SemaphorePermit<'a>>,
}

impl std::fmt::Debug for ConnectionPermit<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionPermit")
            .field("model", &self.controller.name)
            .finish()
    }
}

impl Drop for ConnectionPermit<'_> {
    fn drop(&mut self) {
        self.controller.in_use.fetch_sub(1, Ordering::Relaxed);
        self.controller.give_back(self.permit.take());
    }
}

impl ConcurrencyController {
    pub(super) fn new(key: &str, name: &str, limit: &ConnectionLimit) -> Self {
        let (adaptive, start) = match limit {
            ConnectionLimit::Adaptive(a) => (Some(a.clone()), a.start),
            ConnectionLimit::Fixed(n) => (None, (*n).max(1)),
        };
        ConcurrencyController {
            name: name.to_owned(),
            key: key.to_owned(),
            adaptive,
            semaphore: Semaphore::new(start as usize),
            in_use: AtomicUsize::new(0),
            state: Mutex::new(State {
                limit: start,
                debt: 0,
                success_count: 0,
                max_in_use_this_round: 0,
                first_rate_limit_seen: false,
                cooldown_until: None,
                paused_until: None,
                history: VecDeque::new(),
                requests: 0,
                rate_limits: 0,
                retries: 0,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds consistent counts.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The model's display name (`provider/model`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The registry key (provider, base URL, model, credentials' fingerprint): not for display.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The adaptive bounds, `None` for a fixed limit.
    pub fn adaptive(&self) -> Option<&AdaptiveConcurrency> {
        self.adaptive.as_ref()
    }

    /// The limit now.
    pub fn concurrency(&self) -> u32 {
        self.state().limit
    }

    /// The counts so far.
    pub fn stats(&self) -> ConnectionStats {
        let state = self.state();
        ConnectionStats {
            model: self.name.clone(),
            adaptive: self.adaptive.is_some(),
            concurrency: state.limit,
            in_use: u32::try_from(self.in_use.load(Ordering::Relaxed)).unwrap_or(u32::MAX),
            requests: state.requests,
            rate_limits: state.rate_limits,
            retries: state.retries,
        }
    }

    /// The limit's changes, oldest first (the last 200).
    pub fn history(&self) -> Vec<ConnectionLimitChange> {
        self.state().history.iter().cloned().collect()
    }

    /// Waits for a slot: until a `Retry-After` pause is over and fewer than the limit are in
    /// flight. Pauses hold one request for at most [`MAX_RETRY_AFTER_PAUSE`] in all, so a
    /// server that keeps answering 429 cannot keep it waiting for ever (its retries then end
    /// it). Cancel-safe: dropping the future gives up the place in the queue.
    pub async fn acquire(&self) -> ConnectionPermit<'_> {
        let pauses_end = Instant::now() + MAX_RETRY_AFTER_PAUSE;
        let paused = |state: &State, now: Instant| {
            state
                .paused(now)
                .map(|until| until.min(pauses_end))
                .filter(|until| now < *until)
        };
        loop {
            let until = paused(&self.state(), Instant::now());
            if let Some(until) = until {
                tokio::time::sleep_until(until).await;
                continue;
            }
            // The semaphore is never closed; were it, the request would go without a slot
            // rather than wait for ever.
            let permit = self.semaphore.acquire().await.ok();
            let mut state = self.state();
            let now = Instant::now();
            if paused(&state, now).is_some() {
                // A rate limit came while this one queued: wait the pause out first.
                drop(state);
                self.give_back(permit);
                continue;
            }
            return self.admit(&mut state, now, permit);
        }
    }

    /// A slot now, if one is free and no `Retry-After` pause holds the endpoint.
    ///
    /// ```
    /// use actuator_model::concurrency::{ConnectionLimit, connection_controller};
    /// let c = connection_controller("doc|try", "demo/m", &ConnectionLimit::Fixed(1));
    /// let first = c.try_acquire();
    /// assert!(first.is_some());
    /// assert!(c.try_acquire().is_none());
    /// drop(first);
    /// assert!(c.try_acquire().is_some());
    /// ```
    pub fn try_acquire(&self) -> Option<ConnectionPermit<'_>> {
        let mut state = self.state();
        let now = Instant::now();
        if state.paused(now).is_some() {
            return None;
        }
        let permit = self.semaphore.try_acquire().ok()?;
        Some(self.admit(&mut state, now, Some(permit)))
    }

    fn admit<'a>(
        &'a self,
        state: &mut State,
        now: Instant,
        permit: Option<SemaphorePermit<'a>>,
    ) -> ConnectionPermit<'a> {
        let in_use = self.in_use.fetch_add(1, Ordering::Relaxed) + 1;
        // The round's high-water mark, taken at acquiring (at release the slot is already
        // back, so a full limit would read one short); not during a cooldown, whose traffic
        // was admitted under the old limit.
        if !state.in_cooldown(now) {
            let in_use = u32::try_from(in_use).unwrap_or(u32::MAX);
            state.max_in_use_this_round = state.max_in_use_this_round.max(in_use);
        }
        ConnectionPermit {
            controller: self,
            permit,
        }
    }

    /// Returns a slot, or forgets it while the limit is lower than what was in flight.
    fn give_back(&self, permit: Option<SemaphorePermit<'_>>) {
        let Some(permit) = permit else { return };
        let mut state = self.state();
        if state.debt > 0 {
            state.debt -= 1;
            permit.forget();
        } else {
            drop(permit);
        }
    }

    /// A request succeeded. `after_retry`: it needed retries, so it says nothing about the
    /// limit (the reference's neutral success); otherwise it counts toward a round, and a
    /// full, saturated round grows the limit: doubling before the first rate limit (slow
    /// start), by `scale_up_percent` (at least 1, rounded up to a nice number) after it, never
    /// past the ceiling. Successes during a cooldown do not count.
    pub fn success(&self, after_retry: bool) {
        let mut state = self.state();
        state.requests = state.requests.saturating_add(1);
        let Some(adaptive) = &self.adaptive else {
            return;
        };
        if after_retry || state.in_cooldown(Instant::now()) {
            return;
        }
        state.success_count += 1;
        let old = state.limit;
        if state.success_count < old.max(ROUND_SIZE_FLOOR) {
            return;
        }
        let peak = state.max_in_use_this_round;
        state.max_in_use_this_round = 0;
        state.success_count = 0;
        if u64::from(peak) * 10 < u64::from(SATURATION_TENTHS) * u64::from(old) {
            return;
        }
        let (new, reason) = if state.first_rate_limit_seen {
            let step = ((f64::from(old) * adaptive.scale_up_percent).round() as u32).max(1);
            (
                ceil_to_nice(old.saturating_add(step)).min(adaptive.max),
                LimitChangeReason::SteadyStateUp,
            )
        } else {
            (
                old.saturating_mul(2).min(adaptive.max),
                LimitChangeReason::SlowStart,
            )
        };
        self.set_limit(&mut state, new, reason);
    }

    /// A rate limit (429, or 529 overloaded): a back-off. New requests wait out `retry_after`
    /// (at most [`MAX_RETRY_AFTER_PAUSE`]); an adaptive limit is cut by `decrease_factor`
    /// (rounded down to a nice number, never under the floor), at most once per cooldown, and
    /// the round in progress is void.
    pub fn rate_limited(&self, retry_after: Option<Duration>) {
        let mut state = self.state();
        let now = Instant::now();
        state.rate_limits = state.rate_limits.saturating_add(1);
        if let Some(wait) = retry_after {
            let until = now + wait.min(MAX_RETRY_AFTER_PAUSE);
            state.paused_until = Some(state.paused_until.map_or(until, |u| u.max(until)));
        }
        let Some(adaptive) = &self.adaptive else {
            return;
        };
        state.success_count = 0;
        state.max_in_use_this_round = 0;
        state.first_rate_limit_seen = true;
        if state.in_cooldown(now) {
            return;
        }
        let old = state.limit;
        let target = (f64::from(old) * adaptive.decrease_factor) as u32;
        let new = floor_to_nice(target).max(adaptive.min).max(1);
        state.cooldown_until = Some(now + adaptive.cooldown);
        self.set_limit(&mut state, new, LimitChangeReason::RateLimit);
    }

    /// Another failure of a kind that is retried (5xx, a timeout, a broken connection):
    /// counted, but it neither grows nor cuts the limit (the request's eventual success is
    /// neutral).
    pub fn retried(&self) {
        let mut state = self.state();
        state.retries = state.retries.saturating_add(1);
    }

    fn set_limit(&self, state: &mut State, new: u32, reason: LimitChangeReason) {
        let old = state.limit;
        if new == old {
            return;
        }
        if new > old {
            let grow = new - old;
            let paid = grow.min(state.debt);
            state.debt -= paid;
            self.semaphore.add_permits((grow - paid) as usize);
        } else {
            let shrink = (old - new) as usize;
            let forgotten = self.semaphore.forget_permits(shrink);
            state.debt += u32::try_from(shrink - forgotten).unwrap_or(u32::MAX);
        }
        state.limit = new;
        let timestamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if state.history.len() == HISTORY_LIMIT {
            state.history.pop_front();
        }
        state.history.push_back(ConnectionLimitChange {
            timestamp,
            model: self.name.clone(),
            old_limit: old,
            new_limit: new,
            reason,
        });
    }
}
