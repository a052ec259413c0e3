//! How many requests go to one model endpoint at once: adaptive concurrency (the reference's
//! `adaptive_connections`, its default since 0.3.221) or a fixed limit (its `max_connections`).
//!
//! A [`ConcurrencyController`] per endpoint is shared, through a process-wide registry
//! ([`connection_controller`]), by every model object that reaches the endpoint: all the
//! samples of an evaluation and anything else in the process. A provider takes a
//! [`ConnectionPermit`] for each HTTP attempt and tells the controller how the attempt went;
//! with [`ConnectionLimit::Adaptive`] the controller grows the limit while the provider keeps up
//! and cuts it on rate limits. [`ConcurrencyController::stats`] and
//! [`ConcurrencyController::history`] are what the progress display and the log show.
//!
//! The rules are the reference's (`inspect_ai.util._concurrency`, 0.3.285): until the first
//! rate limit, a clean round (as many successes as the limit, at least 4, with at least 80 % of
//! the limit in use at some point) doubles the limit (slow start); after it, a clean round adds
//! `scale_up_percent` of it (at least 1). A rate limit cuts it by `decrease_factor`, at most
//! once per `cooldown`, and successes inside the cooldown do not count. Limits from 10 up are
//! multiples of 5. Where this differs, and why:
//!
//! - a provider holds a slot per HTTP attempt, not across a retry's wait (the reference holds
//!   it for the whole generation): the limit then counts the requests at the server, which is
//!   what a provider's limit counts;
//! - a rate limit's `Retry-After` holds every new request of the endpoint until it has passed
//!   (at most [`MAX_RETRY_AFTER_PAUSE`]); the reference carries the value but lets only the
//!   request that got it wait, so the other samples run into the same limit meanwhile;
//! - the caller decides what is a rate limit: actuator-providers counts 429 and Anthropic's
//!   529 (overloaded), where the reference counts 529 as transient;
//! - there is no control channel to retune a limit, so no `manual` change.
//!
//! ```
//! use actuator_model::concurrency::{AdaptiveConcurrency, ConnectionLimit};
//! let limit = ConnectionLimit::Adaptive("1-4-16".parse().unwrap());
//! assert_eq!(limit, ConnectionLimit::Adaptive(AdaptiveConcurrency::new(1, 4, 16).unwrap()));
//! assert_eq!(ConnectionLimit::default(), ConnectionLimit::Adaptive(AdaptiveConcurrency::default()));
//! ```

use std::str::FromStr;
use std::time::Duration;

mod controller;
mod registry;
#[cfg(test)]
mod tests;

pub use controller::{
    ConcurrencyController, ConnectionLimitChange, ConnectionPermit, ConnectionStats,
    LimitChangeReason, MAX_RETRY_AFTER_PAUSE,
};
pub use registry::{connection_controller, connection_controllers};

/// The reference's `DEFAULT_MAX_CONNECTIONS`: the fixed limit when adaptive concurrency is off
/// and no other limit is given.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// How a model endpoint's concurrent requests are limited.
///
/// ```
/// use actuator_model::concurrency::{ConnectionLimit, DEFAULT_MAX_CONNECTIONS};
/// // The reference's `adaptive_connections=False`: a fixed limit.
/// let off = ConnectionLimit::Fixed(DEFAULT_MAX_CONNECTIONS);
/// assert!(!off.is_adaptive());
/// assert!(ConnectionLimit::default().is_adaptive());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConnectionLimit {
    /// A limit that tunes itself between the bounds (the default, as in the reference).
    Adaptive(AdaptiveConcurrency),
    /// At most this many requests at once (the reference's `max_connections`; 0 counts as 1).
    Fixed(u32),
}

impl Default for ConnectionLimit {
    fn default() -> Self {
        ConnectionLimit::Adaptive(AdaptiveConcurrency::default())
    }
}

impl ConnectionLimit {
    /// Whether the limit tunes itself.
    pub fn is_adaptive(&self) -> bool {
        matches!(self, ConnectionLimit::Adaptive(_))
    }
}

/// A setting of [`AdaptiveConcurrency`] out of its range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AdaptiveConcurrencyError {
    /// The bounds do not satisfy `1 <= min <= start <= max`.
    #[error(
        "adaptive concurrency needs 1 <= min <= start <= max (got min {min}, start {start}, max {max})"
    )]
    Bounds {
        /// The floor given.
        min: u32,
        /// The start given.
        start: u32,
        /// The ceiling given.
        max: u32,
    },
    /// `decrease_factor` is not in (0, 1).
    #[error("adaptive concurrency's decrease factor must be in (0, 1) (got {0})")]
    DecreaseFactor(f64),
    /// `scale_up_percent` is not in (0, 1].
    #[error("adaptive concurrency's scale-up percent must be in (0, 1] (got {0})")]
    ScaleUpPercent(f64),
    /// A shorthand that is not `min-max` or `min-start-max`.
    #[error("`{0}` is not an adaptive concurrency shorthand: write min-max or min-start-max")]
    Shorthand(String),
}

/// Bounds and tuning of adaptive concurrency: the reference's `AdaptiveConcurrency`, with its
/// defaults (min 10, start 20, max 100, a 15 s cooldown between cuts, cuts by a factor 0.8,
/// growth by 5 % of the limit per clean round).
///
/// ```
/// use std::time::Duration;
/// use actuator_model::concurrency::AdaptiveConcurrency;
/// let a = AdaptiveConcurrency::default();
/// assert_eq!((a.min(), a.start(), a.max()), (10, 20, 100));
/// // The reference's integer shorthand: a ceiling, the floor and start clamped under it.
/// let small = AdaptiveConcurrency::with_max(8).unwrap();
/// assert_eq!((small.min(), small.start(), small.max()), (8, 8, 8));
/// let tuned = AdaptiveConcurrency::new(1, 4, 32)
///     .unwrap()
///     .cooldown(Duration::from_secs(2))
///     .decrease_factor(0.5)
///     .unwrap();
/// assert_eq!(tuned.cooldown_seconds(), Duration::from_secs(2));
/// assert!(AdaptiveConcurrency::new(5, 4, 32).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveConcurrency {
    min: u32,
    start: u32,
    max: u32,
    cooldown: Duration,
    decrease_factor: f64,
    scale_up_percent: f64,
}

const DEFAULT_MIN: u32 = 10;
const DEFAULT_START: u32 = 20;
const DEFAULT_MAX: u32 = 100;

impl Default for AdaptiveConcurrency {
    fn default() -> Self {
        AdaptiveConcurrency {
            min: DEFAULT_MIN,
            start: DEFAULT_START,
            max: DEFAULT_MAX,
            cooldown: Duration::from_secs(15),
            decrease_factor: 0.8,
            scale_up_percent: 0.05,
        }
    }
}

impl AdaptiveConcurrency {
    /// Bounds `min <= start <= max`, at least 1, with the default tuning.
    pub fn new(min: u32, start: u32, max: u32) -> Result<Self, AdaptiveConcurrencyError> {
        if min < 1 || start < min || max < start {
            return Err(AdaptiveConcurrencyError::Bounds { min, start, max });
        }
        Ok(AdaptiveConcurrency {
            min,
            start,
            max,
            ..AdaptiveConcurrency::default()
        })
    }

    /// The reference's integer shorthand `adaptive_connections=N`: ceiling `max`, the default
    /// floor and start clamped under it.
    pub fn with_max(max: u32) -> Result<Self, AdaptiveConcurrencyError> {
        let min = DEFAULT_MIN.min(max);
        Self::new(min, DEFAULT_START.clamp(min, max.max(min)), max)
    }

    /// The least time between two cuts (default 15 s); successes inside it are not counted.
    #[must_use]
    pub fn cooldown(mut self, cooldown: Duration) -> Self {
        self.cooldown = cooldown;
        self
    }

    /// The factor a cut multiplies the limit by, in (0, 1) (default 0.8).
    pub fn decrease_factor(mut self, factor: f64) -> Result<Self, AdaptiveConcurrencyError> {
        if !(factor > 0.0 && factor < 1.0) {
            return Err(AdaptiveConcurrencyError::DecreaseFactor(factor));
        }
        self.decrease_factor = factor;
        Ok(self)
    }

    /// Growth per clean round after the first rate limit, as a fraction of the limit, in
    /// (0, 1] (default 0.05; at least 1 either way).
    pub fn scale_up_percent(mut self, percent: f64) -> Result<Self, AdaptiveConcurrencyError> {
        if !(percent > 0.0 && percent <= 1.0) {
            return Err(AdaptiveConcurrencyError::ScaleUpPercent(percent));
        }
        self.scale_up_percent = percent;
        Ok(self)
    }

    /// The floor.
    pub fn min(&self) -> u32 {
        self.min
    }

    /// The limit at the start.
    pub fn start(&self) -> u32 {
        self.start
    }

    /// The ceiling.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The cooldown between cuts.
    pub fn cooldown_seconds(&self) -> Duration {
        self.cooldown
    }
}

impl FromStr for AdaptiveConcurrency {
    type Err = AdaptiveConcurrencyError;

    /// The reference's shorthand: `min-max` (start 20 clamped into the bounds) or
    /// `min-start-max`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || AdaptiveConcurrencyError::Shorthand(text.to_owned());
        let parts = text
            .split('-')
            .map(|p| p.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<Vec<u32>, _>>()?;
        match parts[..] {
            [min, max] => Self::new(min, DEFAULT_START.clamp(min, max.max(min)), max),
            [min, start, max] => Self::new(min, start, max),
            _ => Err(bad()),
        }
    }
}

/// The smallest "nice" number at least `value`: multiples of 5 from 10 up (the reference's
/// `_ceil_to_nice`, so limits read 15, 20, 25 rather than 17, 21, 26).
fn ceil_to_nice(value: u32) -> u32 {
    if value < 10 {
        value.max(1)
    } else {
        value.div_ceil(5).saturating_mul(5)
    }
}

/// The largest "nice" number at most `value` (the reference's `_floor_to_nice`).
fn floor_to_nice(value: u32) -> u32 {
    if value < 10 {
        value.max(1)
    } else {
        value / 5 * 5
    }
}
