use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::num::NonZeroU64;

fn limit(max: u32, window: u64) -> RateLimit {
    RateLimit {
        max: NonZeroU32::new(max).unwrap(),
        window_secs: NonZeroU64::new(window).unwrap(),
    }
}

const NS: Duration = Duration::from_nanos(1);

/// Limits and the instant their clock starts, so a test names every moment it checks at.
fn at_zero() -> (RateLimits, Instant) {
    let t0 = Instant::now();
    (RateLimits::starting_at(t0), t0)
}

#[test]
fn max_calls_pass_then_the_next_waits_exactly_until_the_oldest_leaves_the_window() {
    let (limits, t0) = at_zero();
    let l = limit(3, 6);
    for i in 0..3 {
        let at = t0 + Duration::from_millis(i * 100);
        assert_eq!(limits.check_at(at, "s", (Door::Tools, "e"), l, "a"), Ok(()), "call {i}");
    }
    // The reported case: a 4th and 5th call within the window are refused.
    let wait = limits
        .check_at(t0 + Duration::from_millis(2300), "s", (Door::Tools, "e"), l, "a")
        .unwrap_err();
    assert_eq!(
        wait,
        Duration::from_millis(3700),
        "the first call leaves the window at 6 s"
    );
    assert!(limits
        .check_at(t0 + Duration::from_millis(4600), "s", (Door::Tools, "e"), l, "a")
        .is_err());
    // One nanosecond before the first call's window ends: still full.
    let wait = limits
        .check_at(
            t0 + Duration::from_nanos(5_999_999_999),
            "s",
            (Door::Tools, "e"),
            l,
            "a",
        )
        .unwrap_err();
    assert_eq!(wait, NS);
    // At the end of its window exactly, the first call no longer counts: one more, not two.
    assert_eq!(
        limits.check_at(t0 + Duration::from_secs(6), "s", (Door::Tools, "e"), l, "a"),
        Ok(())
    );
    let wait = limits
        .check_at(t0 + Duration::from_secs(6), "s", (Door::Tools, "e"), l, "a")
        .unwrap_err();
    assert_eq!(wait, Duration::from_millis(100), "the second call leaves at 6.1 s");
}

#[test]
fn a_burst_is_max_calls_at_one_instant_and_refused_calls_are_not_counted() {
    let (limits, t0) = at_zero();
    let l = limit(5, 60);
    for _ in 0..5 {
        limits.check_at(t0, "s", (Door::Tools, "e"), l, "a").unwrap();
    }
    for s in 1..60 {
        let wait = limits
            .check_at(t0 + Duration::from_secs(s), "s", (Door::Tools, "e"), l, "a")
            .unwrap_err();
        assert_eq!(wait, Duration::from_secs(60 - s), "refused at {s} s");
    }
    // Refusals were not counted: the whole budget is back at 60 s.
    for _ in 0..5 {
        limits
            .check_at(t0 + Duration::from_secs(60), "s", (Door::Tools, "e"), l, "a")
            .unwrap();
    }
    assert!(limits
        .check_at(t0 + Duration::from_secs(60), "s", (Door::Tools, "e"), l, "a")
        .is_err());
}

#[test]
fn sessions_entries_and_quotas_have_their_own_counts() {
    let (limits, t0) = at_zero();
    let l = limit(1, 60);
    limits.check_at(t0, "s", (Door::Tools, "e"), l, "a").unwrap();
    assert!(limits.check_at(t0, "s", (Door::Tools, "e"), l, "a").is_err());
    assert!(
        limits.check_at(t0, "s", (Door::Tools, "e"), l, "b").is_ok(),
        "another session"
    );
    assert!(
        limits.check_at(t0, "s", (Door::Tools, "f"), l, "a").is_ok(),
        "another entry"
    );
    assert!(
        limits.check_at(t0, "s", (Door::Prompts, "e"), l, "a").is_ok(),
        "a prompt whose key is the tool's text counts apart"
    );
    assert!(limits.check_at(t0, "s", (Door::Prompts, "e"), l, "a").is_err());
    assert!(
        limits.check_at(t0, "t", (Door::Tools, "e"), l, "a").is_ok(),
        "another server"
    );
    assert!(
        limits.check_at(t0, "s", (Door::Tools, "e"), limit(2, 60), "a").is_ok(),
        "another quota starts afresh"
    );
}

#[test]
fn the_same_quota_after_a_reload_keeps_its_counters() {
    let limits = RateLimits::default();
    limits.check("s", (Door::Tools, "t"), limit(1, 60), "a").unwrap();
    // A reload builds new policy objects; the counters are found again by (server, entry, quota).
    assert!(limits.check("s", (Door::Tools, "t"), limit(1, 60), "a").is_err());
}

#[test]
fn pruning_drops_emptied_windows_only() {
    let (limits, t0) = at_zero();
    limits
        .check_at(t0, "s", (Door::Tools, "e"), limit(2, 10), "old")
        .unwrap();
    limits
        .check_at(
            t0 + Duration::from_secs(5),
            "s",
            (Door::Tools, "e"),
            limit(2, 10),
            "recent",
        )
        .unwrap();
    limits.prune_at(t0 + Duration::from_secs(10));
    assert_eq!(
        limits.sessions_kept(),
        1,
        "the session whose only call left its window is gone"
    );
    // The kept session still counts its call.
    let l = limit(2, 10);
    limits
        .check_at(t0 + Duration::from_secs(10), "s", (Door::Tools, "e"), l, "recent")
        .unwrap();
    assert!(limits
        .check_at(t0 + Duration::from_secs(10), "s", (Door::Tools, "e"), l, "recent")
        .is_err());
    limits.prune_at(t0 + Duration::from_secs(20));
    assert_eq!(limits.sessions_kept(), 0);
}

#[test]
fn memory_follows_the_calls_made_not_max() {
    let (limits, t0) = at_zero();
    let l = limit(1_000_000, 86_400);
    for i in 0..1000 {
        limits
            .check_at(t0 + Duration::from_millis(i), "s", (Door::Tools, "e"), l, "a")
            .unwrap();
    }
    let quotas = limits.quotas.lock().unwrap();
    let calls = quotas.values().next().unwrap().values().next().unwrap();
    assert_eq!(calls.len(), 1000);
    assert!(
        calls.capacity() < 4096,
        "nothing reserved for max: {}",
        calls.capacity()
    );
}

/// Whatever the call times, the limiter lets a call through exactly when fewer than `max` calls
/// it let through lie in the window ending at the call, so no interval of `window` ever holds
/// more than `max` (checked over every interval starting at a counted call).
#[test]
fn random_streams_never_exceed_max_in_any_window_and_are_refused_only_when_full() {
    for seed in 0..200u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let max = rng.random_range(1..=6u32);
        let window_secs = rng.random_range(1..=4u64);
        let window = window_secs * 1_000_000_000;
        let l = limit(max, window_secs);
        let (limits, t0) = at_zero();
        let mut now = 0u64;
        let mut allowed: Vec<u64> = Vec::new();
        for _ in 0..300 {
            // Gaps from back to back to longer than a window, and often right on a boundary.
            now += match rng.random_range(0..4) {
                0 => 0,
                1 => rng.random_range(1..=window / u64::from(max)),
                2 => allowed.last().map_or(1, |&t| (t + window).saturating_sub(now)),
                _ => rng.random_range(1..=2 * window),
            };
            let in_window = allowed.iter().filter(|&&t| t + window > now).count();
            let got = limits.check_at(t0 + Duration::from_nanos(now), "s", (Door::Tools, "e"), l, "a");
            assert_eq!(got.is_ok(), in_window < max as usize, "seed {seed} at {now} ns");
            if let Err(wait) = got {
                let oldest = allowed.iter().copied().find(|&t| t + window > now).unwrap();
                assert_eq!(wait, Duration::from_nanos(oldest + window - now), "seed {seed}");
            } else {
                allowed.push(now);
            }
        }
        for (i, &start) in allowed.iter().enumerate() {
            let inside = allowed[i..].iter().take_while(|&&t| t < start + window).count();
            assert!(
                inside <= max as usize,
                "seed {seed}: {inside} calls in the window from {start}"
            );
        }
    }
}
