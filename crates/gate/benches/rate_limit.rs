//! The cost of one rate-limit check (an exact sliding window, `rate_limit.rs`): a call let
//! through, a call refused at the limit, and a check among many sessions.

use std::num::{NonZeroU32, NonZeroU64};

use criterion::{criterion_group, criterion_main, Criterion};
use portcullis_gate::rate_limit::RateLimits;
use portcullis_policy::{Door, RateLimit};

fn limit(max: u32, window: u64) -> RateLimit {
    RateLimit {
        max: NonZeroU32::new(max).unwrap_or(NonZeroU32::MIN),
        window_secs: NonZeroU64::new(window).unwrap_or(NonZeroU64::MIN),
    }
}

fn checks(c: &mut Criterion) {
    let limits = RateLimits::default();
    // A window the bench never fills: every check counts a call (the window holds them all).
    let roomy = limit(u32::MAX, 3600);
    c.bench_function("rate_limit/allowed", |b| {
        b.iter(|| limits.check("srv", (Door::Tools, "tools.write_*"), roomy, "session-1"));
    });
    let full = limit(10, 3600);
    for _ in 0..10 {
        let _ = limits.check("srv", (Door::Tools, "tools.edit"), full, "session-2");
    }
    c.bench_function("rate_limit/refused", |b| {
        b.iter(|| limits.check("srv", (Door::Tools, "tools.edit"), full, "session-2"));
    });
    let sessions: Vec<String> = (0..10_000).map(|i| format!("session-{i}")).collect();
    let mut next = sessions.iter().cycle();
    let busy = limit(1_000_000, 60);
    c.bench_function("rate_limit/among_10000_sessions", |b| {
        b.iter(|| {
            limits.check(
                "srv",
                (Door::Tools, "tools.read"),
                busy,
                next.next().map_or("", String::as_str),
            )
        });
    });
}

criterion_group!(benches, checks);
criterion_main!(benches);
