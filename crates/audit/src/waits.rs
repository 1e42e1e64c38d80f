//! How long a writer's records waited to be committed, and how long its transactions waited for
//! another connection's write lock ([`WriteWaits`], from [`crate::AuditWriter::write_waits`]).
//!
//! Several `portcullis connect` processes write one `audit.db`, each with its own writer, so a
//! commit can wait for another process's. These counters say how often and how long, per writer.
//! They are updated by whoever commits (a caller's thread or the writer thread) with relaxed
//! atomic adds, a few nanoseconds per row, and read without taking the writer's lock, so reading
//! them never waits for a commit.
//!
//! The commit wait of a record runs from the start of [`crate::AuditWriter::record`] until the
//! transaction holding it has committed (before its callback runs). A lock wait is a transaction
//! that found the write lock held by another connection: it runs from the first time one of its
//! writes found the lock held (on a caller's thread, which then hands the write to the writer
//! thread, or on the writer thread) until the lock was taken or the busy timeout gave up.
//!
//! The distribution is a log-linear histogram of microseconds: exact below 16 µs, then 8 buckets
//! per power of two (a bucket is at most 12.5 % wide), so a percentile is reported as its
//! bucket's upper bound, at most 12.5 % above the true value, and never above the maximum seen.
//!
//! When the environment variable [`WAITS_ENV`] names a file, the writer appends its figures to it
//! as one JSON line ([`WriteWaits::json_line`]) when its thread stops (the last handle dropped),
//! with `"final": true`, and also each time the writer goes idle after work (`"final": false`),
//! so a process that exits without dropping its writer still leaves the figures of its last idle
//! moment. Each line holds the totals so far: the last line of a process is its figure.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The environment variable naming the file the writer appends its [`WriteWaits`] to.
pub const WAITS_ENV: &str = "PORTCULLIS_AUDIT_WAITS";

/// Values below this many µs have a bucket each.
const EXACT: u64 = 16;
/// Sub-buckets per power of two above [`EXACT`].
const SUB: u64 = 8;
/// Powers of two covered above [`EXACT`] (2^4 µs … 2^40 µs, ~12 days); larger values share
/// the last bucket.
const POWERS: u64 = 36;
#[allow(clippy::cast_possible_truncation, reason = "304 buckets")]
const BUCKETS: usize = (EXACT + POWERS * SUB) as usize;

/// A record's and a lock's waits, as [`crate::AuditWriter::write_waits`] reports them. Times in
/// whole microseconds; percentiles are upper bounds of their histogram bucket (≤ 12.5 % above
/// the true value) and never above the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteWaits {
    /// Records committed by this writer.
    pub rows: u64,
    /// From `record` until committed, median.
    pub commit_p50_us: u64,
    /// From `record` until committed, 99th percentile.
    pub commit_p99_us: u64,
    /// From `record` until committed, the longest.
    pub commit_max_us: u64,
    /// Transactions that found the write lock held by another connection and waited for it.
    pub lock_waits: u64,
    /// The longest of those waits.
    pub lock_wait_max_us: u64,
    /// All of those waits together.
    pub lock_wait_total_us: u64,
}

impl WriteWaits {
    /// One line of JSON (no newline): these figures, the process id, and whether the writer has
    /// stopped (`final`).
    pub fn json_line(&self, pid: u32, last: bool) -> String {
        serde_json::json!({
            "pid": pid,
            "final": last,
            "rows": self.rows,
            "commit_p50_us": self.commit_p50_us,
            "commit_p99_us": self.commit_p99_us,
            "commit_max_us": self.commit_max_us,
            "lock_waits": self.lock_waits,
            "lock_wait_max_us": self.lock_wait_max_us,
            "lock_wait_total_us": self.lock_wait_total_us,
        })
        .to_string()
    }
}

/// The counters behind [`WriteWaits`], shared by everything that commits for one writer.
pub(crate) struct WaitCounters {
    commit: [AtomicU64; BUCKETS],
    commit_max: AtomicU64,
    rows: AtomicU64,
    lock_waits: AtomicU64,
    lock_wait_max: AtomicU64,
    lock_wait_total: AtomicU64,
}

impl WaitCounters {
    pub(crate) fn new() -> Self {
        WaitCounters {
            commit: std::array::from_fn(|_| AtomicU64::new(0)),
            commit_max: AtomicU64::new(0),
            rows: AtomicU64::new(0),
            lock_waits: AtomicU64::new(0),
            lock_wait_max: AtomicU64::new(0),
            lock_wait_total: AtomicU64::new(0),
        }
    }

    /// A record committed `waited` after its `record` began.
    pub(crate) fn committed(&self, waited: Duration) {
        let us = micros(waited);
        self.commit[bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.commit_max.fetch_max(us, Ordering::Relaxed);
        self.rows.fetch_add(1, Ordering::Relaxed);
    }

    /// A transaction waited `waited` for another connection's write lock.
    pub(crate) fn lock_waited(&self, waited: Duration) {
        let us = micros(waited);
        self.lock_waits.fetch_add(1, Ordering::Relaxed);
        self.lock_wait_max.fetch_max(us, Ordering::Relaxed);
        self.lock_wait_total.fetch_add(us, Ordering::Relaxed);
    }

    /// The figures so far. Read while commits go on, the counts may be a row apart from each
    /// other; each figure is one that was true at some moment of the read.
    pub(crate) fn snapshot(&self) -> WriteWaits {
        let counts: Vec<u64> = self.commit.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let max = self.commit_max.load(Ordering::Relaxed);
        let total: u64 = counts.iter().sum();
        WriteWaits {
            rows: total,
            commit_p50_us: percentile(&counts, total, 50).min(max),
            commit_p99_us: percentile(&counts, total, 99).min(max),
            commit_max_us: max,
            lock_waits: self.lock_waits.load(Ordering::Relaxed),
            lock_wait_max_us: self.lock_wait_max.load(Ordering::Relaxed),
            lock_wait_total_us: self.lock_wait_total.load(Ordering::Relaxed),
        }
    }

    /// A number that grows whenever something is counted: a snapshot is stale when it moved.
    pub(crate) fn activity(&self) -> u64 {
        self.rows.load(Ordering::Relaxed) + self.lock_waits.load(Ordering::Relaxed)
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The bucket of a value in µs.
fn bucket(us: u64) -> usize {
    if us < EXACT {
        // Below 16: fits.
        return usize::try_from(us).unwrap_or(0);
    }
    let power = u64::from(us.ilog2()); // ≥ 4
    let sub = (us >> (power - 3)) & (SUB - 1);
    let index = EXACT + (power - 4).min(POWERS - 1) * SUB + if power - 4 >= POWERS { SUB - 1 } else { sub };
    usize::try_from(index).unwrap_or(BUCKETS - 1).min(BUCKETS - 1)
}

/// The largest value in µs that falls in bucket `index`.
fn upper_bound(index: usize) -> u64 {
    let index = index as u64;
    if index < EXACT {
        return index;
    }
    let power = (index - EXACT) / SUB + 4;
    let sub = (index - EXACT) % SUB;
    // Bucket (power, sub) holds [2^p + sub·2^(p-3), 2^p + (sub+1)·2^(p-3)).
    (1u64 << power) + (sub + 1) * (1u64 << (power - 3)) - 1
}

/// The upper bound of the bucket holding the `pct`-th percentile (nearest rank), 0 when empty.
fn percentile(counts: &[u64], total: u64, pct: u64) -> u64 {
    if total == 0 {
        return 0;
    }
    let rank = (total * pct).div_ceil(100).max(1);
    let mut seen = 0;
    for (i, &n) in counts.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return upper_bound(i);
        }
    }
    upper_bound(counts.len() - 1)
}

/// Where [`WriteWaits`] lines go, if anywhere: the file named by [`WAITS_ENV`], read once when the
/// writer starts.
pub(crate) struct WaitsFile(Option<std::path::PathBuf>);

impl WaitsFile {
    pub(crate) fn from_env() -> Self {
        WaitsFile(std::env::var_os(WAITS_ENV).filter(|v| !v.is_empty()).map(Into::into))
    }

    /// Lines go to `path` (tests: the environment is the whole process's).
    #[cfg(test)]
    pub(crate) fn at(path: std::path::PathBuf) -> Self {
        WaitsFile(Some(path))
    }

    /// Appends one line. One `write` of the whole line to a file opened for appending, so lines
    /// of many processes do not interleave. Failures are logged, never raised: the figures are
    /// for measurements, and the audit goes on without them.
    pub(crate) fn append(&self, waits: &WriteWaits, last: bool) {
        let Some(path) = &self.0 else { return };
        let mut line = waits.json_line(std::process::id(), last);
        line.push('\n');
        let result = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(err) = result {
            tracing::warn!(path = %path.display(), error = %err, "cannot write the audit write waits");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_16_and_at_most_an_eighth_wide_above() {
        for us in 0..16 {
            assert_eq!(upper_bound(bucket(us)), us);
        }
        let mut last = 0;
        for us in [
            16,
            17,
            31,
            32,
            33,
            100,
            999,
            1_000,
            4_095,
            4_096,
            65_537,
            10_000_000,
            1 << 39,
        ] {
            let b = bucket(us);
            assert!(b >= last, "buckets grow with the value");
            last = b;
            let top = upper_bound(b);
            assert!(top >= us, "{us} is above its bucket's bound {top}");
            assert!(top - us <= us / 8, "{us}: bucket bound {top} is more than 12.5 % above");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_come_from_the_histogram_and_stay_under_the_max() {
        let c = WaitCounters::new();
        for us in 1..=100u64 {
            c.committed(Duration::from_micros(us * 10));
        }
        let w = c.snapshot();
        assert_eq!(w.rows, 100);
        assert_eq!(w.commit_max_us, 1_000);
        assert!((500..=500 + 500 / 8).contains(&w.commit_p50_us), "{w:?}");
        assert!((990..=1_000).contains(&w.commit_p99_us), "{w:?}");
        assert_eq!(w.lock_waits, 0);
        c.lock_waited(Duration::from_millis(3));
        c.lock_waited(Duration::from_millis(7));
        let w = c.snapshot();
        assert_eq!(
            (w.lock_waits, w.lock_wait_max_us, w.lock_wait_total_us),
            (2, 7_000, 10_000)
        );
    }

    #[test]
    fn nothing_counted_reads_as_zeros() {
        assert_eq!(WaitCounters::new().snapshot(), WriteWaits::default());
    }

    #[test]
    fn a_line_is_json_with_the_pid() {
        let w = WriteWaits {
            rows: 3,
            commit_p50_us: 40,
            commit_p99_us: 90,
            commit_max_us: 95,
            lock_waits: 1,
            lock_wait_max_us: 2_000,
            lock_wait_total_us: 2_000,
        };
        let v: serde_json::Value = serde_json::from_str(&w.json_line(42, true)).unwrap();
        assert_eq!(v["pid"], 42);
        assert_eq!(v["final"], true);
        assert_eq!(v["rows"], 3);
        assert_eq!(v["commit_p99_us"], 90);
        assert_eq!(v["lock_wait_max_us"], 2_000);
    }
}
