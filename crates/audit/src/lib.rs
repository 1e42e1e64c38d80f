//! `portcullis-audit`: the durable record of every `tools/call` decision, in SQLite.
//!
//! The gateway records a decision — and waits for it to be committed — before it forwards or
//! answers the call (DESIGN §6), then adds the upstream outcome when the call returns. The viewer
//! and `portcullis audit` read it back in filtered, newest-first pages.
//!
//! # Main types
//!
//! * [`AuditWriter`] — the one writer. [`record`](AuditWriter::record) a [`NewDecision`],
//!   [`complete`](AuditWriter::complete) it with an [`Outcome`].
//! * [`AuditStore`] — a reader: [`query`](AuditStore::query) with an [`AuditFilter`],
//!   [`get`](AuditStore::get), [`count`](AuditStore::count); rows come back as [`AuditRow`].
//!   [`histogram`](AuditStore::histogram) counts decisions per time bucket for the viewer's chart.
//! * [`neutralize`] — agent- and server-chosen text made safe to show: terminal, CSV, notification markup.
//! * [`redact()`] and [`is_secret_key`] — what is hidden before anything is written.
//! * [`AuditError`] — everything above can fail with it.
//!
//! # The store
//!
//! A view, `calls`, one row per decided call: the table `decisions` (created by migration 1 in
//! `migration.rs`), written once when the call is decided, joined with `outcomes` (migration 3),
//! a row of a few bytes added when a forwarded call returns — not an update of the decision's
//! row, which SQLite would rewrite whole, arguments and all. Readers query `calls`:
//!
//! | column | type | |
//! |---|---|---|
//! | `id` | INTEGER PRIMARY KEY | rowid; ties on `time_ms` are ordered by it |
//! | `time_ms` | INTEGER | Unix ms, from the caller |
//! | `session`, `client_name`, `client_version` | TEXT | who asked (names may be NULL) |
//! | `server`, `tool` | TEXT | what was called |
//! | `arguments` | TEXT | the arguments as JSON, **redacted** |
//! | `arguments_digest` | TEXT | `hmac-sha256:<hex>` of the unredacted canonical arguments, keyed per install (`digest.key`) |
//! | `decision`, `decided_by` | TEXT | [`Decision`], [`DecidedBy`] in snake_case |
//! | `rule`, `reason`, `wait_ms` | TEXT, TEXT, INTEGER | why, and how long it was held; NULL if none |
//! | `outcome`, `upstream_ms` | TEXT, INTEGER | [`Outcome`], from `outcomes`; NULL until the forwarded call returns |
//! | `request_id` | TEXT | the JSON-RPC id as JSON text (`7` vs `"7"`) |
//! | `original_arguments` | TEXT | redacted JSON of what the agent asked, when a person approved with edits (`arguments` is what ran) |
//!
//! Indexes, each ending in `(time_ms, id)` so every filter below is an index range read backwards
//! with no sort, and keyset pagination (`(time_ms, id) < (?, ?)`) costs the same on page 1000 as
//! on page 1: `decisions_time (time_ms DESC, id DESC)` for no filter, time and text filters;
//! `decisions_server_time (server, …)`, `decisions_server_decision (server, decision, …)`,
//! `decisions_server_tool (server, tool, …)` and `decisions_decision (decision, …)` for the
//! viewer's server / decision / tool filters. A test checks the plans with `EXPLAIN QUERY PLAN`.
//!
//! The schema version is `PRAGMA user_version`; migrations are forward-only and run when the
//! writer opens the file. Readers never migrate: they refuse an older or newer schema with a
//! message that says what to do.
//!
//! Connections use WAL, `synchronous=NORMAL`, `busy_timeout=5000` and `foreign_keys=ON`. A new
//! file is created with mode 0600 on Unix (the `-wal`/`-shm` files inherit it), and with 1 KiB
//! pages (`connection::NEW_PAGE_SIZE`: a commit writes each page it changed to the log, so
//! smaller pages are less to write and checksum); a database made by an older build keeps its
//! 4 KiB pages and works the same. On Unix the writer's connection goes through a thin VFS
//! (`wal_batch.rs`) that writes each commit's log frames with one `pwrite` instead of two per
//! page, before the commit returns (`PORTCULLIS_AUDIT_WAL_BATCH=0` turns it off).
//!
//! # The writer
//!
//! [`AuditWriter`] holds the only read-write connection, behind a lock, and a dedicated std
//! thread (`portcullis-audit-writer`) fed by a `std::sync::mpsc` channel. A `record` is committed
//! on the **caller's thread** when nobody else is writing (nothing queued for the thread, the
//! lock free at once, the database healthy), with a busy timeout of zero there, so `done` runs
//! before `record` returns and the call costs no hand-off between threads. Otherwise — a group
//! forming, a fault, a lock held elsewhere, a full disk — it goes to the thread, which takes
//! whatever is queued (up to 256 commands), runs it in one `BEGIN IMMEDIATE … COMMIT` (group
//! commit, prepared cached statements), then calls each command's callback; a failed attempt on
//! the caller's thread commits nothing and leaves the verdict to the thread. Redaction and JSON
//! encoding happen on the caller's thread. No async runtime is involved; the gateway's callback
//! completes a oneshot.
//!
//! Fire-and-forget outcomes wake nobody: they wait in a mailbox and ride in the next decision's
//! transaction, or the thread's tick (every 5 ms while the writer is in use, none while idle)
//! commits them once they have waited 5 ms, so an outcome is durable within **10 ms** of its
//! post when no call follows (plus the commit itself), and before the writer stops when the last
//! handle is dropped. A forwarded call costs one commit. WAL checkpoints run on a second thread
//! (`portcullis-audit-checkpoint`, `PRAGMA wal_checkpoint(PASSIVE)` at most every 100 ms) so no
//! commit waits for one; the writer's own automatic checkpoint stays only as a backstop at
//! 10,000 pages.
//!
//! [`AuditWriter::write_waits`] counts, per writer, how long each record waited from `record`
//! until committed (a histogram: p50, p99, max) and how often and how long its transactions
//! waited for another connection's write lock (another `portcullis connect` writing the same
//! file). With `PORTCULLIS_AUDIT_WAITS=FILE` in the environment the writer appends them to FILE
//! as a JSON line when it stops, and when it goes idle (`waits.rs`).
//!
//! # When the database cannot be written
//!
//! A record that fails (locked by another process past the busy timeout, disk full, read-only,
//! I/O error) is answered with the error and the writer enters the failing state:
//! [`AuditWriter::fault`] says why and since when, one line is logged, and the listener set with
//! [`AuditWriter::on_health_change`] hears of it. While failing, locks are waited for only 200 ms,
//! and the thread probes the database every second with a small real write (reopening it first
//! if the connection went bad); the first write that works (probe or record) ends the state with
//! one more log line. A full disk is not probed — a one-page probe may fit where a record does
//! not, and the state would flap — so the next record that fits ends it. Nothing needs a restart.
//! [`AuditWriter::open_fail_closed`] starts in the failing state when the file cannot be opened
//! for writing at all, instead of failing.

//! # Invariants
//!
//! * A `record` callback receives `Ok(id)` only after the transaction holding the row has
//!   committed; anything else it receives is an error, and the row must be treated as not written
//!   (the gateway then fails closed).
//! * Unredacted arguments never reach SQLite: the writer stores [`redact()`]'s output, or the
//!   client's own text of the arguments when [`needs_redaction`] finds nothing in them to hide.
//! * A row's `outcome` is written at most once; later completions fail with
//!   [`AuditError::AlreadyCompleted`].
//! * A decision is committed on a caller's thread only with the connection's lock taken without
//!   waiting and the database healthy; a caller never waits for a lock there (another
//!   process's, or the thread's).
//! * The writer thread does not stop on errors or panicking callbacks. After an error that a new
//!   connection may cure (read-only file, I/O error, file moved) it reopens before the next batch,
//!   so writes resume once the file is fixed. It stops only when the last handle is dropped, after
//!   committing everything already queued and every outcome waiting. If it died anyway (a bug),
//!   every later record fails with [`AuditError::WriterGone`] (nothing is committed on a
//!   caller's thread then either).
//! * Nothing here depends on tokio or Tauri.
//!
//! # Tests
//!
//! [`AuditWriter::open_in_memory`] gives a private named in-memory database (SQLite's `memdb`
//! VFS), which [`AuditWriter::store`] can read through a second connection, so unit tests use the
//! same writer/reader split as production without touching the disk. The fault tests
//! (`fault_tests.rs`) use real conditions: another process holding the lock, a small tmpfs filled
//! up, a read-only bind mount (root) or file mode (other users). A test whose precondition is
//! missing fails under CI and says `skipped: <reason>` elsewhere (`test_env.rs`).

mod answer;
mod checkpoint;
mod connection;
mod error;
pub mod export;
mod health;
mod histogram;
mod mailbox;
mod migration;
pub mod neutralize;
mod record;
mod redact;
mod search;
mod store;
mod waits;
#[cfg(unix)]
mod wal_batch;
mod writer;

// The faults are made with Unix file modes and mounts. (Two attributes: clippy's test-code
// allowances see `#[cfg(test)]` alone, not inside `all(..)`.)
#[cfg(test)]
#[cfg(unix)]
mod fault_tests;
#[cfg(test)]
mod golden_tests;
#[cfg(test)]
#[cfg(unix)]
mod test_env;
#[cfg(test)]
mod tests;

pub use answer::{AnswerFinding, AnswerRecord, FindingLocation};
pub use error::AuditError;
pub use health::{AuditFault, FaultKind, HealthListener};
pub use histogram::{HistogramBucket, MAX_BUCKETS};
pub use record::{AuditRow, DecidedBy, Decision, Method, NewDecision, Outcome, UnknownValue};
pub use redact::{is_secret_key, needs_redaction, redact, redacted_json, REDACTED, SECRET_WORDS};
pub use store::{AuditFilter, AuditStore, RowHead};
pub use waits::{WriteWaits, WAITS_ENV};
pub use writer::{AuditWriter, CompleteDone, RecordDone};
