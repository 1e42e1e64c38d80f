//! Per-session rate limits (governor).
//!
//! One keyed limiter per (server, policy entry, quota), keyed by agent session. Limiters live
//! outside the policy, so a hot reload that keeps an entry's quota keeps its counters. governor
//! implements GCRA: a session may burst up to `max` calls, then earns one call back every
//! `window / max` seconds.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use portcullis_policy::RateLimit;

type Key = (Arc<str>, Arc<str>, NonZeroU32, u64);

#[derive(Default)]
pub struct RateLimits {
    limiters: Mutex<HashMap<Key, Arc<DefaultKeyedRateLimiter<Arc<str>>>>>,
}

impl RateLimits {
    /// Counts one call; `Err(wait)` when the session is over the limit.
    pub fn check(&self, server: &str, entry: &str, limit: RateLimit, session: &str) -> Result<(), Duration> {
        let limiter = self.limiter(server, entry, limit);
        let key: Arc<str> = Arc::from(session);
        limiter
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    fn limiter(&self, server: &str, entry: &str, limit: RateLimit) -> Arc<DefaultKeyedRateLimiter<Arc<str>>> {
        let key = (Arc::from(server), Arc::from(entry), limit.max, limit.window_secs.get());
        let mut limiters = self.limiters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        limiters
            .entry(key)
            .or_insert_with(|| {
                let period = Duration::from_secs(limit.window_secs.get()) / limit.max.get();
                let quota = Quota::with_period(period.max(Duration::from_nanos(1)))
                    .unwrap_or_else(|| Quota::per_second(limit.max))
                    .allow_burst(limit.max);
                Arc::new(RateLimiter::keyed(quota))
            })
            .clone()
    }

    /// Drops per-session state that has fully recovered (bounded memory for long runs).
    pub fn prune(&self) {
        let limiters = self.limiters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for limiter in limiters.values() {
            limiter.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU64;

    fn limit(max: u32, window: u64) -> RateLimit {
        RateLimit {
            max: NonZeroU32::new(max).unwrap(),
            window_secs: NonZeroU64::new(window).unwrap(),
        }
    }

    #[test]
    fn max_plus_one_is_refused_with_a_retry_time_and_sessions_are_separate() {
        let limits = RateLimits::default();
        assert!(limits.check("s", "get-sum", limit(2, 60), "a").is_ok());
        assert!(limits.check("s", "get-sum", limit(2, 60), "a").is_ok());
        let wait = limits.check("s", "get-sum", limit(2, 60), "a").unwrap_err();
        assert!(
            wait > Duration::from_secs(20) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert!(
            limits.check("s", "get-sum", limit(2, 60), "b").is_ok(),
            "another session has its own budget"
        );
    }

    #[test]
    fn the_same_quota_after_a_reload_keeps_its_counters() {
        let limits = RateLimits::default();
        limits.check("s", "t", limit(1, 60), "a").unwrap();
        // A reload builds new policy objects; the limiter is found again by (server, entry, quota).
        assert!(limits.check("s", "t", limit(1, 60), "a").is_err());
    }
}
