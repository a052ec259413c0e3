//! [`RetryPolicy`]: exponential backoff with jitter, bounded by attempts and by total time, and
//! the provider's `Retry-After` honoured.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How failed requests are retried: rate limits (429), overloaded or failing servers (5xx,
/// 529), timeouts and broken connections. Other errors are returned at once.
///
/// The wait before retry `n` (1-based) is `initial_backoff × 2^(n-1)`, capped at
/// `max_backoff`, with full jitter between half of it and all of it; when the provider says how
/// long to wait (`Retry-After`, `retry-after-ms`), that wait is used instead. Retrying stops
/// after `max_attempts` requests in all, or when the next wait would end past `max_elapsed`
/// since the first request.
///
/// ```
/// use std::time::Duration;
/// use actuator_providers::RetryPolicy;
/// let policy = RetryPolicy::default().max_attempts(3).max_elapsed(Duration::from_secs(30));
/// assert_eq!(policy.max_attempts, 3);
/// assert!(RetryPolicy::none().max_attempts == 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Requests in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The most time from the first request to the start of the last retry.
    pub max_elapsed: Duration,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest wait between two requests (a longer `Retry-After` is still honoured).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    /// 6 attempts within 5 minutes, waits from 1 s doubling up to 60 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            max_elapsed: Duration::from_secs(300),
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: one attempt.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// Sets `max_attempts` (0 counts as 1).
    #[must_use]
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// Sets `max_elapsed`.
    #[must_use]
    pub fn max_elapsed(mut self, d: Duration) -> Self {
        self.max_elapsed = d;
        self
    }

    /// Sets `initial_backoff` and `max_backoff`.
    #[must_use]
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// The jittered exponential wait before retry `retry` (1-based).
    pub(crate) fn backoff_for(&self, retry: u32) -> Duration {
        let factor = 2f64.powi(retry.saturating_sub(1).min(30) as i32);
        let base =
            (self.initial_backoff.as_secs_f64() * factor).min(self.max_backoff.as_secs_f64());
        Duration::from_secs_f64(base * (0.5 + 0.5 * fastrand::f64()))
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or as
/// an HTTP date. Values that cannot be read are ignored.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::from_secs_f64(secs.min(86_400.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let p =
            RetryPolicy::default().backoff(Duration::from_millis(100), Duration::from_millis(350));
        for _ in 0..50 {
            let first = p.backoff_for(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = p.backoff_for(2);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let capped = p.backoff_for(9);
            assert!(capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350));
        }
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        h.insert(
            "retry-after",
            HeaderValue::from_str(&date).unwrap_or(HeaderValue::from_static("x")),
        );
        let wait = retry_after(&h).unwrap_or_default();
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&h), None);
    }
}
