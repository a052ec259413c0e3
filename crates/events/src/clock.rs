//! The wall-clock times events carry, read from the monotonic clock.
//!
//! An event records when it started and ended (Unix seconds) and how long it took. Reading
//! the system clock and the monotonic clock separately for each costs two reads where one
//! will do: here the wall-clock time of an [`Instant`] is derived from the monotonic clock
//! and an offset to the system clock, taken again whenever the last one is over a second
//! old. Durations between two events are then exact, and a time is never more than a second's
//! drift (or a clock step) away from the system clock.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How old the offset to the system clock may get before it is taken again.
const REFRESH: Duration = Duration::from_secs(1);

/// The monotonic origin every reading is measured from.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// An offset from monotonic to Unix time, and when it was taken.
struct Anchor {
    /// Unix time minus monotonic time since the origin, in nanoseconds.
    offset: AtomicI64,
    /// When (monotonic nanoseconds since the origin) the offset was taken; `u64::MAX`: never.
    taken_at: AtomicU64,
}

impl Anchor {
    const fn new() -> Self {
        Anchor {
            offset: AtomicI64::new(0),
            taken_at: AtomicU64::new(u64::MAX),
        }
    }

    /// The Unix time (nanoseconds) of monotonic time `mono`; `read` reads the system clock
    /// and the monotonic one together when the offset has to be taken again.
    fn unix_nanos(&self, mono: i64, read: impl FnOnce() -> (i64, i64)) -> i64 {
        let taken = self.taken_at.load(Ordering::Relaxed);
        let stale = taken == u64::MAX
            || mono.saturating_sub(i64::try_from(taken).unwrap_or(i64::MAX)) > nanos(REFRESH);
        let offset = if stale {
            let (wall, now) = read();
            let offset = wall - now;
            self.offset.store(offset, Ordering::Relaxed);
            self.taken_at
                .store(u64::try_from(now).unwrap_or(0), Ordering::Relaxed);
            offset
        } else {
            self.offset.load(Ordering::Relaxed)
        };
        mono + offset
    }
}

static ANCHOR: Anchor = Anchor::new();

fn nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// The Unix time (seconds) of `at`, an instant read from [`Instant::now`]: one clock read
/// gives both an event's wall-clock time and the start of its duration.
///
/// ```
/// use std::time::{Instant, SystemTime, UNIX_EPOCH};
/// use actuator_events::unix_seconds_at;
///
/// let start = Instant::now();
/// let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
/// assert!((unix_seconds_at(start) - wall).abs() < 1.0);
/// let end = Instant::now();
/// let elapsed = end.duration_since(start).as_secs_f64();
/// assert!((unix_seconds_at(end) - unix_seconds_at(start) - elapsed).abs() < 1e-3);
/// ```
pub fn unix_seconds_at(at: Instant) -> f64 {
    let origin = origin();
    // An instant from before the origin (read before the first call) counts as negative.
    let mono = match at.checked_duration_since(origin) {
        Some(d) => nanos(d),
        None => -nanos(origin.duration_since(at)),
    };
    let unix = ANCHOR.unix_nanos(mono, || {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, nanos);
        (
            wall,
            nanos(Instant::now().saturating_duration_since(origin)),
        )
    });
    unix as f64 / 1e9
}

/// The Unix time (seconds) now.
pub fn unix_now() -> f64 {
    unix_seconds_at(Instant::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall() -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }

    #[test]
    fn agrees_with_the_system_clock() {
        let before = wall();
        let now = unix_now();
        let after = wall();
        assert!(
            now >= before - 0.01 && now <= after + 0.01,
            "{before} {now} {after}"
        );
    }

    #[test]
    fn an_instant_before_the_origin_is_earlier() {
        let early = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        let _ = unix_now(); // the origin is set by now if it was not before
        let late = Instant::now();
        let gap = unix_seconds_at(late) - unix_seconds_at(early);
        assert!((0.002..1.0).contains(&gap), "{gap}");
    }

    #[test]
    fn the_offset_is_taken_again_after_a_second() {
        let anchor = Anchor::new();
        let second = nanos(REFRESH);
        // First use: taken.
        assert_eq!(anchor.unix_nanos(10, || (1_000, 10)), 1_000);
        // Within the second: the offset is reused, the system clock not read.
        assert_eq!(
            anchor.unix_nanos(10 + second, || panic!("read")),
            1_000 + second
        );
        // The system clock stepped by 5 s meanwhile: seen once the offset is a second old.
        let later = 11 + second;
        let unix = anchor.unix_nanos(later, || (1_000 + second + 1 + 5_000_000_000, later));
        assert_eq!(unix, 1_000 + later - 10 + 5_000_000_000);
    }
}
