//! Decisions per time bucket for the viewer's chart, oldest bucket first, counted with the
//! store's indexed `count` (a range read per bucket and decision, no row is loaded).

use std::collections::HashMap;

use serde::Serialize;

use crate::error::AuditError;
use crate::record::Decision;
use crate::store::{AuditFilter, AuditStore};

/// Most buckets returned; a longer span keeps the newest.
pub const MAX_BUCKETS: i64 = 500;

// One bar of the chart: how many calls of each decision fell in `[start_ms, start_ms + width)`;
// a decision with no call there is left out. (No doc comments: ts-rs would copy them into the
// generated `ipc.ts`.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HistogramBucket {
    pub start_ms: i64,
    pub counts: HashMap<Decision, u64>,
}

/// What the histogram needs from the store (a trait so the bucketing is tested on its own).
pub(crate) trait Counter {
    fn count(&self, filter: &AuditFilter) -> Result<u64, AuditError>;
}

impl Counter for AuditStore {
    fn count(&self, filter: &AuditFilter) -> Result<u64, AuditError> {
        AuditStore::count(self, filter)
    }
}

impl AuditStore {
    /// Buckets of `bucket_ms` (at least a second) from the filter's `since_ms` (else the oldest
    /// matching row) to its `until_ms` (else `now_ms`), at most [`MAX_BUCKETS`]. The keyset
    /// cursor `before` is ignored.
    pub fn histogram(
        &self,
        filter: &AuditFilter,
        bucket_ms: i64,
        now_ms: i64,
    ) -> Result<Vec<HistogramBucket>, AuditError> {
        histogram(self, filter, bucket_ms, now_ms)
    }
}

fn histogram(
    store: &dyn Counter,
    filter: &AuditFilter,
    bucket_ms: i64,
    now_ms: i64,
) -> Result<Vec<HistogramBucket>, AuditError> {
    let bucket_ms = bucket_ms.max(1000);
    let base = AuditFilter {
        before: None,
        ..filter.clone()
    };
    let until = filter.until_ms.unwrap_or(now_ms);
    let last = (until - 1).div_euclid(bucket_ms) * bucket_ms;
    let mut first = match filter.since_ms {
        Some(since) => since.div_euclid(bucket_ms) * bucket_ms,
        None => oldest_bucket(store, &base, last, bucket_ms)?,
    };
    first = first.max(last - (MAX_BUCKETS - 1) * bucket_ms);
    let mut buckets = Vec::new();
    let mut start = first;
    while start <= last {
        let window = AuditFilter {
            since_ms: Some(filter.since_ms.map_or(start, |s| s.max(start))),
            until_ms: Some(until.min(start + bucket_ms)),
            ..base.clone()
        };
        buckets.push(HistogramBucket {
            start_ms: start,
            counts: counts(store, &window)?,
        });
        start += bucket_ms;
    }
    Ok(buckets)
}

/// The start of the oldest bucket holding a matching row (walking back from `last`).
fn oldest_bucket(store: &dyn Counter, base: &AuditFilter, last: i64, bucket_ms: i64) -> Result<i64, AuditError> {
    let mut first = last;
    for _ in 1..MAX_BUCKETS {
        let older = AuditFilter {
            until_ms: Some(first),
            ..base.clone()
        };
        if store.count(&older)? == 0 {
            break;
        }
        first -= bucket_ms;
    }
    Ok(first)
}

fn counts(store: &dyn Counter, window: &AuditFilter) -> Result<HashMap<Decision, u64>, AuditError> {
    let total = store.count(window)?;
    let mut counts = HashMap::new();
    if total == 0 {
        return Ok(counts);
    }
    if let Some(decision) = window.decision {
        counts.insert(decision, total);
        return Ok(counts);
    }
    let mut seen = 0;
    for &decision in Decision::ALL {
        let n = store.count(&AuditFilter {
            decision: Some(decision),
            ..window.clone()
        })?;
        if n > 0 {
            counts.insert(decision, n);
        }
        seen += n;
        if seen >= total {
            break;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as (time_ms, decision); counts them like the store would.
    struct Rows(Vec<(i64, Decision)>);
    impl Counter for Rows {
        fn count(&self, f: &AuditFilter) -> Result<u64, AuditError> {
            Ok(self
                .0
                .iter()
                .filter(|(t, d)| {
                    f.since_ms.is_none_or(|s| *t >= s)
                        && f.until_ms.is_none_or(|u| *t < u)
                        && f.decision.is_none_or(|x| x == *d)
                })
                .count() as u64)
        }
    }

    #[test]
    fn buckets_run_from_the_oldest_row_to_now_with_counts_per_decision() {
        let rows = Rows(vec![
            (1_000, Decision::Allowed),
            (1_500, Decision::Denied),
            (3_200, Decision::Allowed),
        ]);
        let b = histogram(&rows, &AuditFilter::default(), 1_000, 4_000).unwrap();
        assert_eq!(
            b.iter().map(|b| b.start_ms).collect::<Vec<_>>(),
            vec![1_000, 2_000, 3_000]
        );
        assert_eq!(
            b[0].counts,
            HashMap::from([(Decision::Allowed, 1), (Decision::Denied, 1)])
        );
        assert!(b[1].counts.is_empty());
        assert_eq!(b[2].counts, HashMap::from([(Decision::Allowed, 1)]));
    }

    #[test]
    fn a_time_range_bounds_the_buckets_and_their_counts() {
        let rows = Rows(vec![
            (500, Decision::Allowed),
            (1_200, Decision::Allowed),
            (2_600, Decision::Rejected),
        ]);
        let filter = AuditFilter {
            since_ms: Some(1_100),
            until_ms: Some(2_500),
            ..AuditFilter::default()
        };
        let b = histogram(&rows, &filter, 1_000, 9_999).unwrap();
        assert_eq!(b.iter().map(|b| b.start_ms).collect::<Vec<_>>(), vec![1_000, 2_000]);
        assert_eq!(b[0].counts, HashMap::from([(Decision::Allowed, 1)]));
        assert!(b[1].counts.is_empty(), "the row at 2600 is past until");
    }

    #[test]
    fn a_long_span_keeps_the_newest_buckets() {
        let rows = Rows(vec![(0, Decision::Allowed)]);
        let filter = AuditFilter {
            since_ms: Some(0),
            ..AuditFilter::default()
        };
        let b = histogram(&rows, &filter, 1_000, 10_000_000).unwrap();
        assert_eq!(i64::try_from(b.len()).unwrap(), MAX_BUCKETS);
        assert_eq!(b.last().unwrap().start_ms, 9_999_000);
    }
}
