//! The controller's rules, one test each; time is tokio's paused clock, so cooldowns and
//! pauses are exact and instant.

use std::sync::Arc;
use std::time::Duration;

use super::*;

fn controller(min: u32, start: u32, max: u32) -> ConcurrencyController {
    let adaptive = AdaptiveConcurrency::new(min, start, max)
        .unwrap()
        .cooldown(Duration::from_secs(15));
    ConcurrencyController::new("test", "test/model", &ConnectionLimit::Adaptive(adaptive))
}

/// One round: `n` clean successes with `parallel` requests in flight at their peak.
async fn clean_round(c: &ConcurrencyController, n: u32, parallel: u32) {
    let mut held = Vec::new();
    for _ in 0..parallel {
        held.push(c.acquire().await);
    }
    drop(held);
    for _ in 0..n {
        c.success(false);
    }
}

#[tokio::test(start_paused = true)]
async fn slow_start_doubles_each_saturated_round_up_to_the_ceiling() {
    let c = controller(1, 3, 20);
    let mut seen = vec![c.concurrency()];
    for _ in 0..4 {
        let limit = c.concurrency();
        clean_round(&c, limit.max(4), limit).await;
        seen.push(c.concurrency());
    }
    assert_eq!(seen, [3, 6, 12, 20, 20]);
    let reasons: Vec<_> = c.history().iter().map(|h| h.reason).collect();
    assert_eq!(reasons, [LimitChangeReason::SlowStart; 3]);
}

#[tokio::test(start_paused = true)]
async fn a_round_that_never_fills_the_limit_does_not_grow_it() {
    let c = controller(1, 10, 100);
    // 7 of 10 in flight at most: under the 0.8 saturation threshold.
    clean_round(&c, 10, 7).await;
    assert_eq!(c.concurrency(), 10);
    clean_round(&c, 10, 8).await;
    assert_eq!(c.concurrency(), 20);
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_cuts_by_the_factor_to_a_nice_number_once_per_cooldown() {
    let c = controller(1, 20, 100);
    c.rate_limited(None);
    assert_eq!(
        c.concurrency(),
        15,
        "20 × 0.8 = 16, floored to a multiple of 5"
    );
    // More rate limits of the same episode: no further cut inside the cooldown.
    c.rate_limited(None);
    c.rate_limited(None);
    assert_eq!(c.concurrency(), 15);
    tokio::time::advance(Duration::from_secs(15)).await;
    c.rate_limited(None);
    assert_eq!(c.concurrency(), 10, "15 × 0.8 = 12, floored to 10");
    tokio::time::advance(Duration::from_secs(15)).await;
    c.rate_limited(None);
    assert_eq!(c.concurrency(), 8, "under 10 every integer is nice");
    assert_eq!(c.stats().rate_limits, 5);
}

#[tokio::test(start_paused = true)]
async fn cuts_stop_at_the_floor() {
    let c = controller(6, 8, 100);
    for _ in 0..5 {
        c.rate_limited(None);
        tokio::time::advance(Duration::from_secs(16)).await;
    }
    assert_eq!(c.concurrency(), 6);
    let floor_one = controller(1, 1, 4);
    floor_one.rate_limited(None);
    assert_eq!(floor_one.concurrency(), 1);
}

#[tokio::test(start_paused = true)]
async fn after_a_rate_limit_growth_is_additive_and_waits_out_the_cooldown() {
    let c = controller(1, 20, 100);
    c.rate_limited(None);
    assert_eq!(c.concurrency(), 15);
    // Inside the cooldown a whole saturated round counts for nothing.
    clean_round(&c, 15, 15).await;
    assert_eq!(c.concurrency(), 15);
    tokio::time::advance(Duration::from_secs(15)).await;
    clean_round(&c, 15, 15).await;
    // 15 + max(1, round(0.75)) = 16, rounded up to a nice 20; not doubled.
    assert_eq!(c.concurrency(), 20);
    let c = controller(1, 4, 100);
    c.rate_limited(None);
    tokio::time::advance(Duration::from_secs(15)).await;
    assert_eq!(c.concurrency(), 3);
    clean_round(&c, 4, 3).await;
    assert_eq!(c.concurrency(), 4, "at least one more");
    assert_eq!(c.history()[1].reason, LimitChangeReason::SteadyStateUp);
}

#[tokio::test(start_paused = true)]
async fn growth_never_passes_the_ceiling() {
    let c = controller(1, 9, 10);
    c.rate_limited(None);
    tokio::time::advance(Duration::from_secs(15)).await;
    for _ in 0..5 {
        let limit = c.concurrency();
        clean_round(&c, limit.max(4), limit).await;
    }
    assert_eq!(c.concurrency(), 10);
}

#[tokio::test(start_paused = true)]
async fn a_success_after_retries_is_neutral() {
    let c = controller(1, 4, 100);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(c.acquire().await);
    }
    drop(held);
    for _ in 0..10 {
        c.success(true);
    }
    assert_eq!(c.concurrency(), 4);
    assert_eq!(c.stats().requests, 10);
}

#[tokio::test(start_paused = true)]
async fn retry_after_holds_every_new_request_until_it_has_passed() {
    let c = Arc::new(controller(1, 4, 100));
    let start = tokio::time::Instant::now();
    c.rate_limited(Some(Duration::from_secs(3)));
    let permit = c.acquire().await;
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    drop(permit);
    // A server cannot stop the endpoint for longer than MAX_RETRY_AFTER_PAUSE.
    let start = tokio::time::Instant::now();
    c.rate_limited(Some(Duration::from_secs(86_400)));
    drop(c.acquire().await);
    assert_eq!(start.elapsed(), MAX_RETRY_AFTER_PAUSE);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_pausing_holds_a_request_for_at_most_the_cap() {
    let c = Arc::new(controller(1, 4, 100));
    let pauser = {
        let c = c.clone();
        tokio::spawn(async move {
            loop {
                c.rate_limited(Some(Duration::from_secs(30)));
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
        })
    };
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    let permit = tokio::time::timeout(Duration::from_secs(600), c.acquire()).await;
    assert!(permit.is_ok(), "still waiting after ten minutes");
    drop(permit);
    assert_eq!(start.elapsed(), MAX_RETRY_AFTER_PAUSE);
    pauser.abort();
}

#[tokio::test(start_paused = true)]
async fn a_fixed_limit_still_honours_retry_after() {
    let c = ConcurrencyController::new("t", "t/m", &ConnectionLimit::Fixed(2));
    let start = tokio::time::Instant::now();
    c.rate_limited(Some(Duration::from_millis(1500)));
    drop(c.acquire().await);
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    assert_eq!(c.concurrency(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_lowered_limit_blocks_new_requests_until_enough_have_finished() {
    let c = controller(1, 4, 100);
    let held: Vec<_> = futures_in_flight(&c, 4).await;
    c.rate_limited(None); // 4 → 3 with 4 in flight
    assert_eq!(c.concurrency(), 3);
    let mut held = held;
    held.pop();
    // 3 in flight at a limit of 3: no room.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), c.acquire())
            .await
            .is_err()
    );
    held.pop();
    let extra = tokio::time::timeout(Duration::from_secs(1), c.acquire()).await;
    assert!(extra.is_ok());
    assert_eq!(c.stats().in_use, 3);
}

async fn futures_in_flight(c: &ConcurrencyController, n: usize) -> Vec<ConnectionPermit<'_>> {
    let mut held = Vec::new();
    for _ in 0..n {
        held.push(c.acquire().await);
    }
    held
}

#[tokio::test(start_paused = true)]
async fn a_fixed_limit_never_moves() {
    let c = ConcurrencyController::new("t", "t/m", &ConnectionLimit::Fixed(2));
    for _ in 0..3 {
        clean_round(&c, 10, 2).await;
        c.rate_limited(None);
    }
    assert_eq!(c.concurrency(), 2);
    assert!(c.history().is_empty());
    let held = futures_in_flight(&c, 2).await;
    assert!(
        tokio::time::timeout(Duration::from_secs(1), c.acquire())
            .await
            .is_err()
    );
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn the_history_keeps_the_last_two_hundred_changes() {
    let adaptive = AdaptiveConcurrency::new(1, 2, 4)
        .unwrap()
        .cooldown(Duration::ZERO);
    let c = ConcurrencyController::new("t", "t/m", &ConnectionLimit::Adaptive(adaptive));
    for _ in 0..150 {
        clean_round(&c, 4, c.concurrency()).await;
        c.rate_limited(None);
    }
    let history = c.history();
    assert_eq!(history.len(), 200);
    assert!(history.iter().all(|h| h.model == "t/m"));
}

#[test]
fn bounds_tuning_and_shorthand_are_checked() {
    assert!(AdaptiveConcurrency::new(0, 1, 2).is_err());
    assert!(AdaptiveConcurrency::new(2, 1, 2).is_err());
    assert!(AdaptiveConcurrency::new(1, 3, 2).is_err());
    assert!(AdaptiveConcurrency::default().decrease_factor(1.0).is_err());
    assert!(
        AdaptiveConcurrency::default()
            .decrease_factor(f64::NAN)
            .is_err()
    );
    assert!(
        AdaptiveConcurrency::default()
            .scale_up_percent(0.0)
            .is_err()
    );
    assert!(AdaptiveConcurrency::default().scale_up_percent(1.0).is_ok());
    let a: AdaptiveConcurrency = "5-50".parse().unwrap();
    assert_eq!((a.min(), a.start(), a.max()), (5, 20, 50));
    let a: AdaptiveConcurrency = "1-15".parse().unwrap();
    assert_eq!(a.start(), 15);
    let a: AdaptiveConcurrency = "2-3-4".parse().unwrap();
    assert_eq!((a.min(), a.start(), a.max()), (2, 3, 4));
    for bad in ["", "5", "a-b", "1-2-3-4", "9-3"] {
        assert!(bad.parse::<AdaptiveConcurrency>().is_err(), "{bad}");
    }
    assert!(AdaptiveConcurrency::with_max(0).is_err());
    let a = AdaptiveConcurrency::with_max(50).unwrap();
    assert_eq!((a.min(), a.start(), a.max()), (10, 20, 50));
}

#[test]
fn nice_numbers_are_the_references() {
    assert_eq!(
        [0, 1, 9, 10, 11, 16, 20].map(ceil_to_nice),
        [1, 1, 9, 10, 15, 20, 20]
    );
    assert_eq!(
        [0, 1, 9, 10, 14, 16, 20].map(floor_to_nice),
        [1, 1, 9, 10, 10, 15, 20]
    );
}
