//! Per-session rate limits: an exact sliding window.
//!
//! `rate_limit: {max, window}` means at most `max` calls in ANY interval of `window` seconds, per
//! (server, section, policy entry, quota) and agent session. Each session keeps the times of the calls it
//! was let through within the last window, oldest first; a call is let through when fewer than
//! `max` are still in the window, and counted. A call counts from the instant it was let through
//! until exactly `window` later (half-open: a call at `t` no longer counts at `t + window`). A
//! refused call is not counted, so an agent that keeps retrying is not locked out for longer.
//!
//! A burst is therefore `max` calls back to back, then nothing until the oldest of them leaves
//! the window; the refusal says how long that is. (A token bucket, governor's GCRA as used
//! before, refills a call every `window / max` and so let up to `2 × max − 1` through one window.)
//!
//! Counters live outside the policy, keyed by the quota itself, so a hot reload that keeps an
//! entry's quota keeps its counters, and one that changes the quota starts afresh.
//!
//! Memory: one `u64` per call still in a session's window, at most `max` of them, and only for
//! calls actually made (nothing is reserved up front). `max: 1_000_000` per day costs 8 MB for a
//! session that really made a million calls that day, which also wrote a million audit rows of a
//! few hundred bytes each; an idle or light session costs a few words. [`RateLimits::prune`] drops
//! sessions whose window has emptied and gives back spare capacity, so a long run stays bounded by
//! the calls of the last window.

use std::collections::{HashMap, VecDeque};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portcullis_policy::{Door, RateLimit};

/// (server, section, entry key, max, window seconds): a quota's counters. The section keeps a
/// tool and a prompt (or a resource) whose keys are the same text apart.
type Key = (Arc<str>, Door, Arc<str>, NonZeroU32, u64);

/// Per agent session, the times (ns since [`RateLimits::origin`]) of the calls still counted.
type Sessions = HashMap<Arc<str>, VecDeque<u64>>;

pub struct RateLimits {
    /// Times are kept as nanoseconds since this instant: 8 bytes a call rather than 16.
    origin: Instant,
    /// One lock over all quotas: a check is a few comparisons, and pruning never races a check
    /// into counting a call on a session that was just dropped.
    quotas: Mutex<HashMap<Key, Sessions>>,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self::starting_at(Instant::now())
    }
}

impl RateLimits {
    /// Limits whose clock starts at `origin` (tests give their own instants to [`Self::check_at`]).
    fn starting_at(origin: Instant) -> Self {
        Self {
            origin,
            quotas: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one call now; `Err(wait)` when the session is at the limit: the call is not counted,
    /// and `wait` is when the oldest counted call leaves the window.
    pub fn check(&self, server: &str, entry: (Door, &str), limit: RateLimit, session: &str) -> Result<(), Duration> {
        self.check_at(Instant::now(), server, entry, limit, session)
    }

    /// [`Self::check`] at `now` (the clock is a parameter so tests can stand on the boundary).
    fn check_at(
        &self,
        now: Instant,
        server: &str,
        (door, entry): (Door, &str),
        limit: RateLimit,
        session: &str,
    ) -> Result<(), Duration> {
        let now = self.since_origin(now);
        let window = window_ns(limit);
        let key = (
            Arc::from(server),
            door,
            Arc::from(entry),
            limit.max,
            limit.window_secs.get(),
        );
        let mut quotas = self.quotas.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let sessions = quotas.entry(key).or_default();
        let calls = match sessions.get_mut(session) {
            Some(calls) => calls,
            None => sessions.entry(Arc::from(session)).or_default(),
        };
        expire(calls, now, window);
        let max = usize::try_from(limit.max.get()).unwrap_or(usize::MAX);
        if calls.len() < max {
            // Two checks that read the clock before taking the lock may arrive out of order:
            // the later one is counted at the latest time seen, which only counts it longer.
            let at = calls.back().map_or(now, |&last| now.max(last));
            calls.push_back(at);
            return Ok(());
        }
        let oldest = calls.front().copied().unwrap_or(now);
        Err(Duration::from_nanos(oldest.saturating_add(window).saturating_sub(now)))
    }

    /// Drops sessions whose window has emptied, and quotas with no session left; gives back the
    /// spare capacity of a session that has slowed down (bounded memory for long runs).
    pub fn prune(&self) {
        self.prune_at(Instant::now());
    }

    fn prune_at(&self, now: Instant) {
        let now = self.since_origin(now);
        let mut quotas = self.quotas.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        quotas.retain(|(_, _, _, _, window_secs), sessions| {
            let window = Duration::from_secs(*window_secs).as_nanos();
            let window = u64::try_from(window).unwrap_or(u64::MAX);
            sessions.retain(|_, calls| {
                expire(calls, now, window);
                if calls.capacity() > 2 * calls.len() + 16 {
                    calls.shrink_to_fit();
                }
                !calls.is_empty()
            });
            !sessions.is_empty()
        });
    }

    fn since_origin(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX)
    }

    #[cfg(test)]
    fn sessions_kept(&self) -> usize {
        let quotas = self.quotas.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        quotas.values().map(HashMap::len).sum()
    }
}

fn window_ns(limit: RateLimit) -> u64 {
    u64::try_from(Duration::from_secs(limit.window_secs.get()).as_nanos()).unwrap_or(u64::MAX)
}

/// Forgets the calls that no longer count at `now`: a call at `t` counts while `now < t + window`.
fn expire(calls: &mut VecDeque<u64>, now: u64, window: u64) {
    while calls.front().is_some_and(|&t| t.saturating_add(window) <= now) {
        calls.pop_front();
    }
}

#[cfg(test)]
mod tests;
