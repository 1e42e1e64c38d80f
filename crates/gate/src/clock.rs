//! Wall-clock time as the audit log, approvals, grants and policy writes stamp it: milliseconds
//! since the Unix epoch. A leaf module, so whatever needs the time imports nothing else for it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, in milliseconds since the Unix epoch (0 for a clock set before it).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `ms` (since the Unix epoch) as RFC 3339 text to the second, as held calls and tasks show it.
pub fn rfc3339(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}
