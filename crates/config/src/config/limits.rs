//! The `limits` object of `portcullis.json`: how much any one client, user or server may make the
//! gateway hold. Every default is far above what one person's clients use, and low enough that
//! nobody — another local user without the token included — can exhaust the machine through it.

use portcullis_wire::MAX_MESSAGE;
use serde::Deserialize;

/// `stream_buffer_bytes` unset: two largest messages (the gateway's stream budget).
pub const DEFAULT_STREAM_BUFFER_BYTES: usize = 2 * MAX_MESSAGE;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    max_sessions_per_server: Option<u64>,
    max_sessions: Option<u64>,
    max_connections: Option<u64>,
    max_connections_per_foreign_user: Option<u64>,
    max_foreign_connections: Option<u64>,
    header_read_timeout_secs: Option<u64>,
    stream_buffer_bytes: Option<u64>,
    answer_excerpt_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Legacy sessions open at once per server. Each stdio one is a child process (a node server
    /// is ~60 MB): 32 is more clients than anyone runs against one server.
    pub max_sessions_per_server: usize,
    /// Legacy sessions open at once, all servers together.
    pub max_sessions: usize,
    /// Open connections from the gateway's own user. Every held call and open stream is one;
    /// a busy agent fleet uses tens.
    pub max_connections: usize,
    /// Open connections from each other local user (or an unknown owner). Others have no token,
    /// so they need none; a few keep an honest misconfiguration debuggable.
    pub max_connections_per_foreign_user: usize,
    /// Open connections from all other users together. A separate pool from the owner's, so
    /// others cannot exhaust it.
    pub max_foreign_connections: usize,
    /// How long a connection may take to send a request's headers. Real clients send them at
    /// once; only a client holding connections half-open takes longer.
    pub header_read_timeout_secs: u64,
    /// Bytes buffered per stream for a client that is slow to read; at least one largest
    /// message ([`MAX_MESSAGE`]).
    pub stream_buffer_bytes: usize,
    /// How much of each answer the audit keeps, in bytes (the redacted excerpt beside its
    /// findings); 0 keeps none, only the findings.
    pub answer_excerpt_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_sessions_per_server: 32,
            max_sessions: 256,
            max_connections: 8192,
            max_connections_per_foreign_user: 16,
            max_foreign_connections: 64,
            header_read_timeout_secs: 10,
            stream_buffer_bytes: DEFAULT_STREAM_BUFFER_BYTES,
            answer_excerpt_bytes: DEFAULT_ANSWER_EXCERPT_BYTES,
        }
    }
}

/// `answer_excerpt_bytes` unset: a few KiB, the start of a long answer.
const DEFAULT_ANSWER_EXCERPT_BYTES: usize = 4096;
/// The largest excerpt accepted: the audit keeps an excerpt, never the whole of a large answer.
const MAX_ANSWER_EXCERPT: u64 = 64 * 1024;

/// The largest stream buffer accepted: a gigabyte per stream is no bound at all.
const MAX_STREAM_BUFFER: u64 = 1 << 30;

impl RawLimits {
    /// The limits, or the key that is out of range and why.
    pub(super) fn resolve(self) -> Result<Limits, (&'static str, String)> {
        let d = Limits::default();
        let count = |key, value: Option<u64>, default: usize| -> Result<usize, (&'static str, String)> {
            match value {
                None => Ok(default),
                Some(n @ 1..=1_000_000) => Ok(usize::try_from(n).unwrap_or(default)),
                Some(n) => Err((key, format!("must be between 1 and 1000000, found {n}"))),
            }
        };
        let stream_buffer_bytes = match self.stream_buffer_bytes {
            None => d.stream_buffer_bytes,
            Some(n) if (MAX_MESSAGE as u64..=MAX_STREAM_BUFFER).contains(&n) => {
                usize::try_from(n).unwrap_or(d.stream_buffer_bytes)
            }
            Some(n) => {
                return Err((
                    "stream_buffer_bytes",
                    format!("must be between {MAX_MESSAGE} (one largest message) and {MAX_STREAM_BUFFER}, found {n}"),
                ))
            }
        };
        let header_read_timeout_secs = match self.header_read_timeout_secs {
            None => d.header_read_timeout_secs,
            Some(n @ 1..=300) => n,
            Some(n) => {
                return Err((
                    "header_read_timeout_secs",
                    format!("must be between 1 and 300, found {n}"),
                ))
            }
        };
        let answer_excerpt_bytes = match self.answer_excerpt_bytes {
            None => d.answer_excerpt_bytes,
            Some(n @ 0..=MAX_ANSWER_EXCERPT) => usize::try_from(n).unwrap_or(d.answer_excerpt_bytes),
            Some(n) => {
                return Err((
                    "answer_excerpt_bytes",
                    format!("must be between 0 and {MAX_ANSWER_EXCERPT}, found {n}"),
                ))
            }
        };
        Ok(Limits {
            max_sessions_per_server: count(
                "max_sessions_per_server",
                self.max_sessions_per_server,
                d.max_sessions_per_server,
            )?,
            max_sessions: count("max_sessions", self.max_sessions, d.max_sessions)?,
            max_connections: count("max_connections", self.max_connections, d.max_connections)?,
            max_connections_per_foreign_user: count(
                "max_connections_per_foreign_user",
                self.max_connections_per_foreign_user,
                d.max_connections_per_foreign_user,
            )?,
            max_foreign_connections: count(
                "max_foreign_connections",
                self.max_foreign_connections,
                d.max_foreign_connections,
            )?,
            header_read_timeout_secs,
            stream_buffer_bytes,
            answer_excerpt_bytes,
        })
    }
}
