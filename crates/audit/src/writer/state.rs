//! The read-write connection and what writes through it: transactions, the health they
//! publish, probes and reopening. Used under [`super::Shared`]'s lock, by the writer thread or by
//! a caller committing on its own thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, ErrorCode, TransactionBehavior};

use super::{finish_complete, guarded, uncopied, Reply, Write, FAILING_BUSY_TIMEOUT};
use crate::checkpoint::Checkpointer;
use crate::connection::{self, Target, BUSY_TIMEOUT};
use crate::error::AuditError;
use crate::health::{FaultKind, HealthCell};
use crate::record::NewDecision;
use crate::waits::WaitCounters;

const INSERT_SQL: &str = "INSERT INTO decisions (time_ms, session, client_name, client_version, server, tool, \
     arguments, arguments_digest, decision, decided_by, rule, reason, wait_ms, request_id, original_arguments, method) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";

/// The first outcome wins: an outcome, once recorded, is never rewritten. Only a decision's
/// row gets one (a row of its own, so the decision's row and its arguments are not rewritten).
const COMPLETE_SQL: &str = "INSERT INTO outcomes (id, outcome, upstream_ms) \
     SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM decisions WHERE id = ?1) \
     ON CONFLICT (id) DO NOTHING";

const ANSWER_SQL: &str = "INSERT INTO answers (id, bytes, excerpt, findings) VALUES (?1, ?2, ?3, ?4) \
     ON CONFLICT (id) DO NOTHING";

/// Each write's own result, when the transaction as a whole committed.
type Results = Vec<Result<i64, AuditError>>;

pub(super) struct WriterState {
    pub(super) target: Target,
    /// `None` until the database could be opened (see [`super::AuditWriter::open_fail_closed`]).
    conn: Option<Connection>,
    pub(super) health: Arc<HealthCell>,
    /// Set after an error that a fresh connection may cure; cleared by a successful reopen.
    needs_reopen: bool,
    /// The busy timeout while writes work ([`BUSY_TIMEOUT`]; tests shorten it).
    busy_timeout: Duration,
    /// The busy timeout the connection has now (`busy_timeout`, or [`FAILING_BUSY_TIMEOUT`]
    /// while failing), which [`WriterState::begin`] puts back after its no-wait try.
    applied_timeout: Duration,
    /// Where commit and lock waits are counted (shared with [`super::Shared`], which reads them).
    waits: Arc<WaitCounters>,
    pub(super) checkpointer: Option<Checkpointer>,
    /// Transactions committed, wherever; so tests can see group commit happen.
    pub(super) commits: u64,
    /// Times an outcome had to wake the thread; for tests.
    #[cfg(test)]
    pub(super) wakes: u64,
}

impl WriterState {
    pub(super) fn new(
        target: Target,
        conn: Option<Connection>,
        health: Arc<HealthCell>,
        waits: Arc<WaitCounters>,
    ) -> Self {
        WriterState {
            target,
            conn,
            health,
            needs_reopen: false,
            busy_timeout: BUSY_TIMEOUT,
            applied_timeout: BUSY_TIMEOUT,
            waits,
            checkpointer: None,
            commits: 0,
            #[cfg(test)]
            wakes: 0,
        }
    }

    /// A caller may commit on its own thread only on a connection known to work: no fault, no
    /// reopen pending. Everything else — failing, recovering, probing — is the writer thread's.
    pub(super) fn can_commit_here(&self) -> bool {
        self.conn.is_some() && !self.needs_reopen && !self.health.is_failing()
    }

    /// One transaction on the caller's thread, where waiting is not allowed: a lock held by
    /// another connection fails it at once (busy timeout 0) instead of blocking an async
    /// runtime's thread for seconds. On any error of the whole group nothing is committed, the
    /// health is left alone, and the caller hands the writes to the writer thread, which retries
    /// with the full busy timeout and reports a real fault as it always has.
    pub(super) fn commit_here(&mut self, writes: &[Write]) -> Result<Results, AuditError> {
        let resting = self.applied_timeout;
        self.apply_busy_timeout(Duration::ZERO);
        let result = self.transact(writes, false);
        self.apply_busy_timeout(resting);
        result
    }

    /// Commits `writes` together and returns each one's reply, updating the health. The writer
    /// thread's way: it waits for locks and turns errors into the failing state.
    pub(super) fn commit_group(&mut self, writes: Vec<Write>) -> Vec<Reply> {
        if writes.is_empty() {
            return Vec::new();
        }
        let results = self.connection().and_then(|()| self.transact(&writes, true));
        // `NoSuchRow` and `AlreadyCompleted` are the caller's mistakes, not a sick database.
        let failure = match &results {
            Err(err) => Some(err.clone()),
            Ok(each) => each
                .iter()
                .filter_map(|r| r.as_ref().err())
                .find(|err| is_database_fault(err))
                .cloned(),
        };
        // A full disk is judged by the records, which gate the calls: on a nearly full disk an
        // outcome may need a page a record does not (or fit where a record cannot), and judging by
        // it made the state flap, one log line per call. An outcome that does not fit is warned
        // about on its own.
        let records = writes.iter().any(|w| matches!(w, Write::Record { .. }));
        let full = |err: &AuditError| FaultKind::of(err) == FaultKind::Full;
        let failing_full = self.health.fault().is_some_and(|f| f.kind == FaultKind::Full);
        match failure {
            Some(err) if !records && full(&err) => {}
            Some(err) => self.failed(&err),
            None if !records && failing_full => {}
            None => self.succeeded(),
        }
        replies(writes, results)
    }

    /// Makes sure there is a connection worth writing on: opens one if there is none or the last
    /// error spoiled it.
    fn connection(&mut self) -> Result<(), AuditError> {
        if self.conn.is_none() || self.needs_reopen {
            self.reopen()?;
        }
        Ok(())
    }

    /// A write of its own while failing, to notice the fix without waiting for a call: sets
    /// `user_version` to its own value, which rewrites the database header page, so it needs the
    /// write lock, a writable file and room for a log frame, like a record.
    pub(super) fn probe(&mut self) {
        // A probe writes one page; a full disk may have room for that and not for a record, and
        // a probe that "recovers" would only make the state flap. A full disk is seen to be fixed
        // by the next record that fits.
        if self.health.fault().is_some_and(|f| f.kind == FaultKind::Full) {
            return;
        }
        let result = self.connection().and_then(|()| {
            let conn = self.conn.as_mut().ok_or(AuditError::WriterGone)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
            tx.pragma_update(None, "user_version", version)?;
            tx.commit()?;
            Ok(())
        });
        match result {
            Ok(()) => self.succeeded(),
            Err(err) => {
                tracing::debug!(error = %err, "audit database still cannot be written");
                self.failed(&err);
            }
        }
    }

    fn failed(&mut self, err: &AuditError) {
        if is_connection_fault(err) {
            self.needs_reopen = true;
        }
        if !self.health.is_failing() {
            self.apply_busy_timeout(FAILING_BUSY_TIMEOUT);
        }
        self.health.failed(err);
    }

    fn succeeded(&mut self) {
        if self.health.is_failing() {
            self.apply_busy_timeout(self.busy_timeout);
        }
        self.health.succeeded();
    }

    /// The busy timeout while writes work.
    #[cfg(test)]
    pub(super) fn set_busy_timeout(&mut self, timeout: Duration) {
        self.busy_timeout = timeout;
        self.apply_busy_timeout(timeout);
    }

    fn apply_busy_timeout(&mut self, timeout: Duration) {
        self.applied_timeout = timeout;
        if let Some(conn) = &self.conn {
            if let Err(err) = conn.busy_timeout(timeout) {
                tracing::debug!(error = %err, "cannot change the audit busy timeout");
            }
        }
    }

    /// Runs every write in one `BEGIN IMMEDIATE … COMMIT`. A write whose statement fails gets its
    /// error while the others still commit, unless the failure aborted the whole transaction
    /// (SQLite does that for I/O errors, a full disk and the like) or the commit itself fails;
    /// then the whole group fails (`Err`), because none of it is durable.
    ///
    /// `wait`: whether the transaction may wait for another connection's write lock (the writer
    /// thread's way; its busy timeout applies), or must fail at once (a caller's thread, busy
    /// timeout already zero). Waits are counted in [`WaitCounters`]: each committed record's
    /// time since `record`, and each wait for the lock.
    fn transact(&mut self, writes: &[Write], wait: bool) -> Result<Results, AuditError> {
        if wait {
            self.begin_waiting(writes)?;
        } else {
            begin(self.conn.as_ref().ok_or(AuditError::WriterGone)?)?;
        }
        let conn = self.conn.as_ref().ok_or(AuditError::WriterGone)?;
        let tx = Open(conn);
        let mut results = Vec::with_capacity(writes.len());
        for write in writes {
            let result = execute(conn, write);
            if result.is_err() && conn.is_autocommit() {
                // The transaction is gone (rolled back by SQLite): the group failed.
                return result.map(|_| Vec::new());
            }
            results.push(result);
        }
        tx.commit()?;
        self.commits += 1;
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.committed();
        }
        let now = Instant::now();
        for (write, result) in writes.iter().zip(&results) {
            if let (Write::Record { since, .. }, Ok(_)) = (write, result) {
                self.waits.committed(now.saturating_duration_since(*since));
            }
        }
        Ok(results)
    }

    /// `BEGIN IMMEDIATE` on the writer thread, waiting up to the busy timeout for the write lock,
    /// and counting the wait if there was one: first a try that does not wait (busy timeout zero,
    /// no sleep), then, if the lock is held, the waiting one. The wait runs from the first time
    /// any of `writes` found the lock held (a caller's try before it was handed over, or this
    /// try) until the lock is taken or the timeout gives up.
    fn begin_waiting(&mut self, writes: &[Write]) -> Result<(), AuditError> {
        let resting = self.applied_timeout;
        let conn = self.conn.as_ref().ok_or(AuditError::WriterGone)?;
        let found_busy = writes
            .iter()
            .filter_map(|w| match w {
                Write::Record { busy_since, .. } => *busy_since,
                Write::Complete { .. } => None,
            })
            .min();
        conn.busy_timeout(Duration::ZERO)?;
        let tried_at = Instant::now();
        let first = begin(conn);
        conn.busy_timeout(resting)?;
        let result = match first {
            Err(err) if err.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => {
                let result = begin(conn);
                self.waits.lock_waited(found_busy.unwrap_or(tried_at).elapsed());
                result
            }
            other => {
                if let (Ok(()), Some(since)) = (&other, found_busy) {
                    // A caller found the lock held; it was free by the time the thread tried.
                    self.waits.lock_waited(since.elapsed());
                }
                other
            }
        };
        Ok(result?)
    }

    /// Replaces the connection with a fresh one. The old one is kept until the new one is open, so
    /// an in-memory database is never left without a connection (it would be freed), and a failed
    /// reopen leaves the writer exactly as it was, to try again later.
    fn reopen(&mut self) -> Result<(), AuditError> {
        let conn = connection::open_writer(&self.target)?;
        self.conn = Some(conn);
        // Still failing until a write works: keep refusing fast.
        let timeout = if self.health.is_failing() {
            FAILING_BUSY_TIMEOUT
        } else {
            self.busy_timeout
        };
        self.apply_busy_timeout(timeout);
        self.needs_reopen = false;
        tracing::info!(path = %self.target.path().display(), "opened the audit database afresh");
        Ok(())
    }

    /// Closes the connection (the writer thread, stopping).
    pub(super) fn close(&mut self) {
        self.conn = None;
        drop(self.checkpointer.take());
    }
}

/// `BEGIN IMMEDIATE` from the connection's statement cache. rusqlite's `Transaction` parses and
/// prepares `BEGIN` and `COMMIT` again for every transaction (`execute_batch`); cached, they are
/// prepared once per connection.
fn begin(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    Ok(())
}

/// A transaction begun by [`begin`]: [`commit`](Open::commit) it, or it is rolled back when
/// dropped (an early return), as rusqlite's `Transaction` does.
struct Open<'c>(&'c Connection);

impl Open<'_> {
    fn commit(self) -> rusqlite::Result<()> {
        self.0.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
        // `self` dropped here: the connection is in autocommit again, so nothing to roll back.
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // Still open: an error returned early, or the commit failed without ending it.
        if !self.0.is_autocommit() {
            if let Err(err) = self.0.execute_batch("ROLLBACK") {
                tracing::debug!(error = %err, "audit transaction rollback failed");
            }
        }
    }
}

/// Pairs each write with its result: the group's error for all when the group failed.
pub(super) fn replies(writes: Vec<Write>, results: Result<Results, AuditError>) -> Vec<Reply> {
    match results {
        Err(err) => writes.into_iter().map(|w| w.reply(Err(err.clone()))).collect(),
        Ok(results) => {
            let mut results = results.into_iter();
            writes
                .into_iter()
                .map(|w| w.reply(results.next().unwrap_or(Err(AuditError::WriterGone))))
                .collect()
        }
    }
}

impl Write {
    fn reply(self, result: Result<i64, AuditError>) -> Reply {
        match self {
            Write::Record { done, .. } => Reply::Record(done, result),
            Write::Complete { id, done, .. } => Reply::Complete(id, done, result.map(|_| ())),
        }
    }
}

impl Reply {
    pub(super) fn deliver(self) {
        match self {
            Reply::Record(done, result) => guarded(move || done(result)),
            Reply::Complete(id, done, result) => finish_complete(id, done, result),
        }
    }
}

/// A decision whose arguments are this large is inserted without SQLite's copy of them
/// ([`uncopied`]); smaller ones use the cached statement, whose preparation is what costs there.
pub(super) const UNCOPIED_MIN_BYTES: usize = 64 * 1024;

/// [`INSERT_SQL`] for a row with large arguments: the same columns, the texts bound in place.
fn insert_uncopied(
    conn: &Connection,
    row: &NewDecision,
    arguments: &str,
    original: Option<&str>,
) -> rusqlite::Result<()> {
    use uncopied::Param::{Int, Text};
    uncopied::execute(
        conn,
        INSERT_SQL,
        &[
            Int(row.time_ms),
            Text(&row.session),
            row.client_name.as_deref().into(),
            row.client_version.as_deref().into(),
            Text(&row.server),
            Text(&row.tool),
            Text(arguments),
            Text(&row.arguments_digest),
            Text(row.decision.as_str()),
            Text(row.decided_by.as_str()),
            row.rule.as_deref().into(),
            row.reason.as_deref().into(),
            row.wait_ms.into(),
            row.request_id.as_deref().into(),
            original.into(),
            Text(row.method.as_str()),
        ],
    )
}

/// One write's statement. Records return the new row id; completions return 0.
fn execute(conn: &Connection, write: &Write) -> Result<i64, AuditError> {
    match write {
        Write::Record {
            row,
            arguments_json,
            original_json,
            ..
        } => {
            let original = original_json.as_deref();
            if arguments_json.as_str().len() + original.map_or(0, str::len) >= UNCOPIED_MIN_BYTES {
                insert_uncopied(conn, row, arguments_json.as_str(), original)?;
                return Ok(conn.last_insert_rowid());
            }
            let mut stmt = conn.prepare_cached(INSERT_SQL)?;
            stmt.execute(params![
                row.time_ms,
                row.session,
                row.client_name,
                row.client_version,
                row.server,
                row.tool,
                arguments_json.as_str(),
                row.arguments_digest,
                row.decision.as_str(),
                row.decided_by.as_str(),
                row.rule,
                row.reason,
                row.wait_ms,
                row.request_id,
                original_json,
                row.method.as_str(),
            ])?;
            Ok(conn.last_insert_rowid())
        }
        Write::Complete {
            id,
            outcome,
            upstream_ms,
            answer,
            ..
        } => {
            let changed = conn
                .prepare_cached(COMPLETE_SQL)?
                .execute(params![id, outcome.as_str(), upstream_ms])?;
            if changed == 1 {
                if let Some(answer) = answer {
                    let findings = serde_json::to_string(&answer.findings).unwrap_or_else(|_| "[]".to_owned());
                    conn.prepare_cached(ANSWER_SQL)?
                        .execute(params![id, answer.bytes, answer.excerpt, findings])?;
                }
                return Ok(0);
            }
            let exists = conn
                .prepare_cached("SELECT 1 FROM decisions WHERE id = ?1")?
                .exists([id])?;
            Err(if exists {
                AuditError::AlreadyCompleted { id: *id }
            } else {
                AuditError::NoSuchRow { id: *id }
            })
        }
    }
}

/// A failure of the database rather than of the caller (`NoSuchRow`, `AlreadyCompleted`).
fn is_database_fault(err: &AuditError) -> bool {
    err.sqlite_code().is_some()
        || matches!(
            err,
            AuditError::ReadOnly { .. }
                | AuditError::Open { .. }
                | AuditError::SchemaTooNew { .. }
                | AuditError::SchemaTooOld { .. }
        )
}

/// Errors after which the connection itself may be stale: the file became read-only (a connection
/// opened read-only stays so), was moved or deleted, or the OS reported an I/O error. `BUSY` and
/// `FULL` are not here: the same connection works again once the lock or the space is released.
fn is_connection_fault(err: &AuditError) -> bool {
    matches!(err, AuditError::ReadOnly { .. })
        || matches!(
            err.sqlite_code(),
            Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::SystemIoFailure | ErrorCode::NotADatabase)
        )
}
