//! The single writer: one std thread owns the only read-write connection and commits whatever is
//! queued in one transaction (group commit).
//!
//! Why a thread and not a lock around a connection: SQLite allows one writer at a time anyway, and
//! a dedicated thread lets many concurrent `record` calls share one commit instead of queueing for
//! one each. The caller's side of `record` only redacts, serializes and sends on a channel, so it
//! never blocks an async runtime; the reply comes back through a callback (the gateway passes one
//! that completes a oneshot), so this crate needs no runtime of its own.
//!
//! Cost per call: fire-and-forget outcomes ([`AuditWriter::complete`] without a callback) are not
//! committed alone; they wait up to [`COALESCE_WAIT`] for the next record and share its
//! transaction, so a forwarded call costs one commit, not two. WAL checkpoints run on their own
//! thread (`checkpoint.rs`), so no commit waits for one.
//!
//! Failure handling: an error fails the commands it touched and nothing else. The thread never
//! stops on an error (only when every [`AuditWriter`] handle is gone), callbacks that panic are
//! caught, and an error that suggests the connection itself went bad (read-only, I/O error, file
//! moved) makes the thread open a fresh connection before the next batch. While writes fail the
//! thread also probes the database every [`PROBE_EVERY`] with a small real write, so the health
//! it publishes (`health.rs`) turns good again as soon as the cause is fixed, without waiting for
//! a call (except for a full disk, which the next record that fits clears), and waits only
//! [`FAILING_BUSY_TIMEOUT`] for a lock, so refused calls are refused fast.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, TransactionBehavior};

use crate::checkpoint::Checkpointer;
use crate::connection::{self, Target, BUSY_TIMEOUT};
use crate::error::AuditError;
use crate::health::{AuditFault, FaultKind, HealthCell, HealthListener};
use crate::record::{NewDecision, Outcome};
use crate::redact::{needs_redaction, redacted_json};
use crate::store::AuditStore;

/// Called with the new row's id once the transaction holding it has committed, or with the error.
pub type RecordDone = Box<dyn FnOnce(Result<i64, AuditError>) + Send>;
/// Called once an outcome has been committed, or with the error.
pub type CompleteDone = Box<dyn FnOnce(Result<(), AuditError>) + Send>;

/// The most commands committed in one transaction, so a steady stream of records cannot hold the
/// callbacks of the first ones back indefinitely.
const MAX_BATCH: usize = 256;

/// How long a fire-and-forget outcome waits for a record to share a transaction with. A gateway
/// forwarding calls back to back sends the next record well within this; an idle one commits the
/// outcome alone after it.
const COALESCE_WAIT: Duration = Duration::from_millis(5);

/// While writes fail, how often the thread tries a write by itself to notice the fix.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The busy timeout while writes fail. A lock already held past [`BUSY_TIMEOUT`] is not a passing
/// contention; calls meanwhile are refused after this instead of hanging for seconds each.
const FAILING_BUSY_TIMEOUT: Duration = Duration::from_millis(200);

const INSERT_SQL: &str = "INSERT INTO decisions (time_ms, session, client_name, client_version, server, tool, \
     arguments, arguments_digest, decision, decided_by, rule, reason, wait_ms, request_id, original_arguments) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

/// The first outcome wins: an outcome, once recorded, is never rewritten.
const COMPLETE_SQL: &str = "UPDATE decisions SET outcome = ?2, upstream_ms = ?3 WHERE id = ?1 AND outcome IS NULL";

enum Command {
    Write(Write),
    /// Runs on the writer thread between transactions; for tests.
    #[cfg(test)]
    Control(Box<dyn FnOnce(&mut WriterState) + Send>),
}

/// A command that goes into a group commit.
enum Write {
    /// Boxed: a decision is large, and the channel moves every command at least twice.
    Record {
        row: Box<NewDecision>,
        arguments_json: StoredText,
        original_json: Option<String>,
        done: RecordDone,
    },
    Complete {
        id: i64,
        outcome: Outcome,
        upstream_ms: i64,
        done: Option<CompleteDone>,
    },
}

/// A row's `arguments` column as it goes to the database.
enum StoredText {
    /// The client's own text, checked to be UTF-8: nothing in it is redacted.
    AsSent(bytes::Bytes),
    /// The redacted arguments, encoded.
    Redacted(String),
}

impl StoredText {
    /// The client's text when it has nothing to redact, else the redaction, encoded once.
    fn of(arguments: &serde_json::Value, sent: Option<bytes::Bytes>, extra_keys: &[String]) -> serde_json::Result<Self> {
        match sent {
            Some(text) if std::str::from_utf8(&text).is_ok() && !needs_redaction(arguments, extra_keys) => {
                Ok(Self::AsSent(text))
            }
            _ => redacted_json(arguments, extra_keys).map(Self::Redacted),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Checked in `of`; `from_utf8` is a read, not a copy.
            Self::AsSent(text) => std::str::from_utf8(text).unwrap_or("null"),
            Self::Redacted(text) => text,
        }
    }
}

impl Write {
    /// A fire-and-forget outcome: nobody waits for its commit, so it may wait for company.
    fn can_wait(&self) -> bool {
        matches!(self, Write::Complete { done: None, .. })
    }
}

/// Handle to the writer thread. Cheap to clone (the clones share one channel). The thread stops
/// when the last clone is dropped, and that drop blocks until everything already queued has been
/// committed and answered, so shutting down loses nothing.
#[derive(Clone)]
pub struct AuditWriter {
    inner: Arc<Inner>,
}

struct Inner {
    target: Target,
    health: Arc<HealthCell>,
    /// `Option` only so `Drop` can close the channel before joining the thread.
    tx: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop once the queue is drained; joining makes
        // "the last handle is gone" mean "everything queued is committed and the file is closed".
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            // A callback running on the writer thread may drop the last handle; joining
            // ourselves would deadlock, and the loop ends by itself right after.
            if thread.thread().id() != std::thread::current().id() && thread.join().is_err() {
                tracing::error!("audit writer thread panicked");
            }
        }
    }
}

impl std::fmt::Debug for AuditWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditWriter")
            .field("target", &self.inner.target)
            .finish_non_exhaustive()
    }
}

impl AuditWriter {
    /// Opens (creating if needed) the database at `path`, migrates it and starts the writer thread.
    /// The parent directory must exist. Fails if the file cannot be written.
    pub fn open(path: &std::path::Path) -> Result<AuditWriter, AuditError> {
        Self::start(Target::File(path.to_path_buf()), true)
    }

    /// Like [`open`](Self::open), but a database that cannot be written yet (read-only, locked,
    /// on a full disk, a newer schema) does not stop the start: the writer begins in the failing
    /// state, every record fails with the reason (so the gateway refuses every call), and it
    /// retries until the database can be written. Fails only if the thread cannot start.
    pub fn open_fail_closed(path: &std::path::Path) -> Result<AuditWriter, AuditError> {
        Self::start(Target::File(path.to_path_buf()), false)
    }

    /// A private in-memory database, for tests. Unlike SQLite's `:memory:` it can be read through
    /// [`AuditWriter::store`] on a separate connection, the same way a file is, and it lives until
    /// the writer and every store opened from it are dropped.
    pub fn open_in_memory() -> Result<AuditWriter, AuditError> {
        Self::start(Target::new_memory(), true)
    }

    fn start(target: Target, strict: bool) -> Result<AuditWriter, AuditError> {
        let health = HealthCell::new();
        // Opened here rather than on the thread so that a bad path fails `open` itself.
        let conn = match connection::open_writer(&target) {
            Ok(conn) => Some(conn),
            Err(err) if !strict => {
                health.failed(&err);
                None
            }
            Err(err) => return Err(err),
        };
        // Unbounded on purpose: a full queue would have to drop a decision row or block the
        // caller, and both are worse than memory. It holds at most one record or completion per
        // call in flight, which the gateway's session and stream limits bound.
        let (tx, rx) = mpsc::channel();
        let mut state = WriterState::new(target.clone(), conn, health.clone());
        let thread = std::thread::Builder::new()
            .name("portcullis-audit-writer".to_owned())
            .spawn(move || {
                // Started on the writer thread so the checkpointer is stopped (and joined) by it.
                if let Target::File(path) = &state.target {
                    state.checkpointer = Checkpointer::start(path.clone());
                }
                run(state, &rx);
            })
            .map_err(|err| AuditError::Thread(Arc::new(err)))?;
        Ok(AuditWriter {
            inner: Arc::new(Inner {
                target,
                health,
                tx: Some(tx),
                thread: Some(thread),
            }),
        })
    }

    /// A reader on the same database (its own read-only connection).
    pub fn store(&self) -> Result<AuditStore, AuditError> {
        AuditStore::open_target(&self.inner.target)
    }

    /// Why writes are failing right now, or `None` if the last write (or probe) worked.
    pub fn fault(&self) -> Option<AuditFault> {
        self.inner.health.fault()
    }

    /// Calls `listener` on every change between working and failing (on the writer thread; keep it
    /// short). Replaces an earlier listener. A fault that exists already is not replayed: read
    /// [`fault`](Self::fault) after setting the listener.
    pub fn on_health_change(&self, listener: HealthListener) {
        self.inner.health.set_listener(listener);
    }

    /// Queues a decision. `done` runs on the writer thread after the transaction containing the row
    /// has committed, with the row id, or with the error if it did not. Keep `done` short (send on
    /// a channel): it holds up the other callbacks of the batch. If the writer has stopped, `done`
    /// runs at once on the calling thread with [`AuditError::WriterGone`].
    ///
    /// Redaction and JSON encoding happen here, on the caller's thread, to keep the writer's
    /// critical path to the insert itself.
    pub fn record(&self, mut row: NewDecision, done: RecordDone) {
        let arguments_json = match StoredText::of(&row.arguments, row.arguments_text.take(), &row.extra_redact_keys) {
            Ok(text) => text,
            Err(err) => return done(Err(AuditError::Encode(Arc::new(err)))),
        };
        let original_json = match row
            .original_arguments
            .take()
            .map(|original| redacted_json(&original, &row.extra_redact_keys))
        {
            Some(Err(err)) => return done(Err(AuditError::Encode(Arc::new(err)))),
            Some(Ok(json)) => Some(json),
            None => None,
        };
        // The unredacted value must not travel further than this function.
        row.arguments = serde_json::Value::Null;
        let write = Write::Record {
            row: Box::new(row),
            arguments_json,
            original_json,
            done,
        };
        if let Err(Command::Write(Write::Record { done, .. })) = self.send(Command::Write(write)) {
            done(Err(AuditError::WriterGone));
        }
    }

    /// Records how a forwarded call ended: fills `outcome` and `upstream_ms` of row `id`, once.
    /// With `done: None` it is fire-and-forget, a failure is logged, and the write may wait a few
    /// milliseconds to share the next record's transaction. A second completion of the same row
    /// fails with [`AuditError::AlreadyCompleted`] and leaves the first in place.
    pub fn complete(&self, id: i64, outcome: Outcome, upstream_ms: i64, done: Option<CompleteDone>) {
        let write = Write::Complete {
            id,
            outcome,
            upstream_ms,
            done,
        };
        if let Err(Command::Write(Write::Complete { done, .. })) = self.send(Command::Write(write)) {
            finish_complete(id, done, Err(AuditError::WriterGone));
        }
    }

    /// [`record`](Self::record) and wait for the commit. For tests and the CLI; never call it
    /// on an async runtime thread.
    pub fn record_blocking(&self, row: NewDecision) -> Result<i64, AuditError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.record(row, Box::new(move |result| drop(tx.send(result))));
        rx.recv().unwrap_or(Err(AuditError::WriterGone))
    }

    /// [`complete`](Self::complete) and wait for the commit.
    pub fn complete_blocking(&self, id: i64, outcome: Outcome, upstream_ms: i64) -> Result<(), AuditError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.complete(
            id,
            outcome,
            upstream_ms,
            Some(Box::new(move |result| drop(tx.send(result)))),
        );
        rx.recv().unwrap_or(Err(AuditError::WriterGone))
    }

    /// Queues a command; hands it back if the writer thread has stopped, so its callback can be
    /// answered.
    fn send(&self, cmd: Command) -> Result<(), Command> {
        match &self.inner.tx {
            Some(tx) => tx.send(cmd).map_err(|mpsc::SendError(cmd)| cmd),
            None => Err(cmd),
        }
    }

    /// Shortens the lock wait so lock tests do not wait [`BUSY_TIMEOUT`].
    #[cfg(test)]
    pub(crate) fn set_busy_timeout_for_test(&self, timeout: Duration) {
        self.control(move |state| state.set_busy_timeout(timeout)).unwrap_or(());
    }

    /// Runs `f` on the writer thread between transactions and waits for it.
    #[cfg(test)]
    fn control<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut WriterState) -> T + Send + 'static,
    ) -> Result<T, AuditError> {
        let (tx, rx) = mpsc::sync_channel(1);
        if self
            .send(Command::Control(Box::new(move |state| drop(tx.send(f(state))))))
            .is_err()
        {
            return Err(AuditError::WriterGone);
        }
        rx.recv().map_err(|_| AuditError::WriterGone)
    }
}

/// Everything the writer thread owns.
struct WriterState {
    target: Target,
    /// `None` until the database could be opened (see [`AuditWriter::open_fail_closed`]).
    conn: Option<Connection>,
    health: Arc<HealthCell>,
    /// Set after an error that a fresh connection may cure; cleared by a successful reopen.
    needs_reopen: bool,
    /// Fire-and-forget outcomes waiting for the next record's transaction.
    waiting: Vec<Write>,
    checkpointer: Option<Checkpointer>,
    /// Transactions committed, so tests can see group commit happen.
    #[cfg(test)]
    commits: u64,
}

/// The answer for one command, delivered after the transaction ends.
enum Reply {
    Record(RecordDone, Result<i64, AuditError>),
    Complete(i64, Option<CompleteDone>, Result<(), AuditError>),
}

fn run(mut state: WriterState, rx: &Receiver<Command>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        let first = match state.idle_wait() {
            None => match rx.recv() {
                Ok(cmd) => cmd,
                Err(_) => break,
            },
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(cmd) => cmd,
                Err(RecvTimeoutError::Timeout) => {
                    state.on_idle();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(cmd) => batch.push(cmd),
                Err(_) => break,
            }
        }
        state.run_batch(&mut batch);
    }
    // Every handle is gone: what still waits is committed before the file is closed.
    let mut waiting = std::mem::take(&mut state.waiting);
    state.commit_group(&mut waiting);
    tracing::debug!("audit writer stopped: every handle dropped");
}

impl WriterState {
    fn new(target: Target, conn: Option<Connection>, health: Arc<HealthCell>) -> Self {
        WriterState {
            target,
            conn,
            health,
            needs_reopen: false,
            waiting: Vec::new(),
            checkpointer: None,
            #[cfg(test)]
            commits: 0,
        }
    }

    /// How long the thread may wait for a command before it has something to do by itself.
    fn idle_wait(&self) -> Option<Duration> {
        if !self.waiting.is_empty() {
            Some(COALESCE_WAIT)
        } else if self.health.is_failing() {
            Some(PROBE_EVERY)
        } else {
            None
        }
    }

    fn on_idle(&mut self) {
        if self.waiting.is_empty() {
            // A probe writes one page; a full disk may have room for that and not for a record,
            // and a probe that "recovers" would only make the state flap. A full disk is seen
            // to be fixed by the next record that fits.
            if self.health.fault().is_some_and(|f| f.kind == FaultKind::Full) {
                return;
            }
            self.probe();
        } else {
            let mut waiting = std::mem::take(&mut self.waiting);
            self.commit_group(&mut waiting);
        }
    }

    /// Commits the write commands of `batch` together and answers each. Control commands split
    /// the batch so they run outside any transaction. A batch of fire-and-forget outcomes only
    /// joins the waiting ones, to be committed with the next record (or after [`COALESCE_WAIT`]).
    fn run_batch(&mut self, batch: &mut Vec<Command>) {
        let mut writes = std::mem::take(&mut self.waiting);
        for cmd in batch.drain(..) {
            match cmd {
                #[cfg(test)]
                Command::Control(f) => {
                    self.commit_group(&mut writes);
                    f(self);
                }
                Command::Write(write) => writes.push(write),
            }
        }
        if writes.len() < MAX_BATCH && writes.iter().all(Write::can_wait) {
            self.waiting = writes;
            return;
        }
        self.commit_group(&mut writes);
    }

    fn commit_group(&mut self, writes: &mut Vec<Write>) {
        if writes.is_empty() {
            return;
        }
        let replies = match self.connection() {
            Ok(()) => self.apply(writes),
            Err(err) => writes.drain(..).map(|w| w.reply(Err(err.clone()))).collect(),
        };
        // `NoSuchRow` and `AlreadyCompleted` are the caller's mistakes, not a sick database.
        let failure = replies
            .iter()
            .filter_map(Reply::error)
            .find(|err| is_database_fault(err))
            .cloned();
        match failure {
            Some(err) => self.failed(&err),
            None => self.succeeded(),
        }
        for reply in replies {
            reply.deliver();
        }
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
    fn probe(&mut self) {
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
            self.set_busy_timeout(FAILING_BUSY_TIMEOUT);
        }
        self.health.failed(err);
    }

    fn succeeded(&mut self) {
        if self.health.is_failing() {
            self.set_busy_timeout(BUSY_TIMEOUT);
        }
        self.health.succeeded();
    }

    fn set_busy_timeout(&self, timeout: Duration) {
        if let Some(conn) = &self.conn {
            if let Err(err) = conn.busy_timeout(timeout) {
                tracing::debug!(error = %err, "cannot change the audit busy timeout");
            }
        }
    }

    /// Runs every command in one `BEGIN IMMEDIATE … COMMIT`. A command whose statement fails is
    /// answered with its error while the others still commit, unless the failure aborted the
    /// whole transaction (SQLite does that for I/O errors, a full disk and the like) or the
    /// commit itself fails; then every command gets the error, because none of them is durable.
    fn apply(&mut self, writes: &mut Vec<Write>) -> Vec<Reply> {
        let mut results: Vec<Result<i64, AuditError>> = Vec::with_capacity(writes.len());
        let outcome = (|| -> Result<(), AuditError> {
            let conn = self.conn.as_mut().ok_or(AuditError::WriterGone)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for cmd in writes.iter() {
                let result = execute(&tx, cmd);
                if result.is_err() && tx.is_autocommit() {
                    // The transaction is gone; the error is reported for the whole group below.
                    return result.map(|_| ());
                }
                results.push(result);
            }
            tx.commit()?;
            Ok(())
        })();
        if outcome.is_ok() {
            #[cfg(test)]
            {
                self.commits += 1;
            }
            if let Some(checkpointer) = &self.checkpointer {
                checkpointer.committed();
            }
        }
        let group_error = outcome.err();
        writes
            .drain(..)
            .enumerate()
            .map(|(i, write)| {
                let result = match (&group_error, results.get_mut(i)) {
                    (Some(err), _) => Err(err.clone()),
                    (None, Some(result)) => std::mem::replace(result, Ok(0)),
                    (None, None) => Err(AuditError::WriterGone),
                };
                write.reply(result)
            })
            .collect()
    }

    /// Replaces the connection with a fresh one. The old one is kept until the new one is open, so
    /// an in-memory database is never left without a connection (it would be freed), and a failed
    /// reopen leaves the writer exactly as it was, to try again later.
    fn reopen(&mut self) -> Result<(), AuditError> {
        let conn = connection::open_writer(&self.target)?;
        if self.health.is_failing() {
            // Still failing until a write works: keep refusing fast.
            if let Err(err) = conn.busy_timeout(FAILING_BUSY_TIMEOUT) {
                tracing::debug!(error = %err, "cannot change the audit busy timeout");
            }
        }
        self.conn = Some(conn);
        self.needs_reopen = false;
        tracing::info!(path = %self.target.path().display(), "opened the audit database afresh");
        Ok(())
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

/// One command's statement. Records return the new row id; completions return 0.
fn execute(conn: &Connection, write: &Write) -> Result<i64, AuditError> {
    match write {
        Write::Record {
            row,
            arguments_json,
            original_json,
            ..
        } => {
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
            ])?;
            Ok(conn.last_insert_rowid())
        }
        Write::Complete {
            id,
            outcome,
            upstream_ms,
            ..
        } => {
            let changed = conn
                .prepare_cached(COMPLETE_SQL)?
                .execute(params![id, outcome.as_str(), upstream_ms])?;
            if changed == 1 {
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

impl Reply {
    fn error(&self) -> Option<&AuditError> {
        match self {
            Reply::Record(_, Err(err)) | Reply::Complete(_, _, Err(err)) => Some(err),
            _ => None,
        }
    }

    fn deliver(self) {
        match self {
            Reply::Record(done, result) => guarded(move || done(result)),
            Reply::Complete(id, done, result) => finish_complete(id, done, result),
        }
    }
}

fn finish_complete(id: i64, done: Option<CompleteDone>, result: Result<(), AuditError>) {
    match done {
        Some(done) => guarded(move || done(result)),
        None => {
            if let Err(err) = result {
                tracing::warn!(id, error = %err, "could not record the outcome of an audited call");
            }
        }
    }
}

/// A panicking callback is the caller's bug; it must not take the writer, and with it every later
/// record, down.
fn guarded(f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        tracing::error!("an audit callback panicked; the writer carries on");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::record::Decision;
    use crate::store::AuditFilter;
    use crate::tests::{sample, REPLY_TIMEOUT};

    /// Parks the writer thread until the returned sender is dropped or sent to, so that commands
    /// sent meanwhile are all queued when it resumes: a deterministic group.
    fn park(writer: &AuditWriter) -> mpsc::Sender<()> {
        let (release, parked) = mpsc::channel::<()>();
        let (entered_tx, entered) = mpsc::channel();
        let cmd = Command::Control(Box::new(move |_state| {
            entered_tx.send(()).unwrap();
            let _ = parked.recv_timeout(REPLY_TIMEOUT);
        }));
        assert!(writer.send(cmd).is_ok());
        entered.recv_timeout(REPLY_TIMEOUT).unwrap();
        release
    }

    fn commits(writer: &AuditWriter) -> u64 {
        writer.control(|state| state.commits).unwrap()
    }

    #[test]
    fn queued_commands_share_one_transaction() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let store = writer.store().unwrap();
        let start = commits(&writer);
        let release = park(&writer);
        let (tx, rx) = mpsc::channel();
        for i in 0..100 {
            let tx = tx.clone();
            writer.record(
                sample("s", "t", Decision::Allowed, i),
                Box::new(move |r| tx.send(r).unwrap()),
            );
        }
        drop(release);
        for _ in 0..100 {
            rx.recv_timeout(REPLY_TIMEOUT).unwrap().unwrap();
        }
        assert_eq!(
            commits(&writer) - start,
            1,
            "100 queued records must be committed together"
        );
        assert_eq!(store.count(&AuditFilter::default()).unwrap(), 100);
    }

    #[test]
    fn batches_are_capped_so_early_callbacks_are_not_held_back() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let start = commits(&writer);
        let release = park(&writer);
        let (tx, rx) = mpsc::channel();
        let n = i64::try_from(MAX_BATCH).unwrap() * 2 + 1;
        for i in 0..n {
            let tx = tx.clone();
            writer.record(
                sample("s", "t", Decision::Allowed, i),
                Box::new(move |r| tx.send(r).unwrap()),
            );
        }
        drop(release);
        for _ in 0..n {
            rx.recv_timeout(REPLY_TIMEOUT).unwrap().unwrap();
        }
        assert_eq!(commits(&writer) - start, 3);
    }

    #[test]
    fn a_failing_command_does_not_fail_the_rest_of_its_group() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let store = writer.store().unwrap();
        let release = park(&writer);
        let (tx, rx) = mpsc::channel();
        let tx1 = tx.clone();
        writer.record(
            sample("s", "t", Decision::Allowed, 1),
            Box::new(move |r| tx1.send(r.map(|_| ())).unwrap()),
        );
        let tx2 = tx.clone();
        writer.complete(999, Outcome::Ok, 1, Some(Box::new(move |r| tx2.send(r).unwrap())));
        writer.record(
            sample("s", "t", Decision::Allowed, 2),
            Box::new(move |r| tx.send(r.map(|_| ())).unwrap()),
        );
        drop(release);
        let results: Vec<_> = (0..3).map(|_| rx.recv_timeout(REPLY_TIMEOUT).unwrap()).collect();
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(
            matches!(results[1], Err(AuditError::NoSuchRow { id: 999 })),
            "{results:?}"
        );
        assert!(
            !writer.control(|state| state.health.is_failing()).unwrap(),
            "a caller's mistake must not mark the database as failing"
        );
        assert_eq!(store.count(&AuditFilter::default()).unwrap(), 2);
    }

    #[test]
    fn a_panicking_callback_does_not_stop_the_writer() {
        let writer = AuditWriter::open_in_memory().unwrap();
        writer.record(
            sample("s", "t", Decision::Allowed, 1),
            Box::new(|_| panic!("callback bug")),
        );
        writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
        assert_eq!(writer.store().unwrap().count(&AuditFilter::default()).unwrap(), 2);
    }

    /// Another process holding the write lock past the busy timeout fails the records queued
    /// meanwhile; the same connection works once the lock is released.
    #[test]
    fn a_lock_held_past_the_busy_timeout_fails_records_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let writer = AuditWriter::open(&path).unwrap();
        writer.set_busy_timeout_for_test(Duration::from_millis(50));

        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let err = writer
            .record_blocking(sample("s", "t", Decision::Allowed, 1))
            .unwrap_err();
        assert_eq!(err.sqlite_code(), Some(rusqlite::ErrorCode::DatabaseBusy), "{err:?}");
        other.execute_batch("ROLLBACK").unwrap();

        writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
        assert_eq!(writer.store().unwrap().count(&AuditFilter::default()).unwrap(), 1);
    }

    #[test]
    fn dropping_the_last_handle_inside_a_callback_does_not_deadlock() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let release = park(&writer);
        let (tx, rx) = mpsc::channel();
        let last = writer.clone();
        writer.record(
            sample("s", "t", Decision::Allowed, 1),
            Box::new(move |r| {
                drop(last);
                tx.send(r.is_ok()).unwrap();
            }),
        );
        // The writer is parked, so the record is still queued: after this drop the handle inside
        // the callback is the last one, and it is dropped on the writer thread.
        drop(writer);
        drop(release);
        assert_eq!(rx.recv_timeout(REPLY_TIMEOUT), Ok(true));
    }

    /// Proposal 1 of BENCHMARKS.md: the outcome of the previous call rides in the next record's
    /// transaction instead of costing a commit of its own.
    #[test]
    fn a_fire_and_forget_outcome_shares_the_next_records_transaction() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let store = writer.store().unwrap();
        let first = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
        let start = commits(&writer);
        writer.complete(first, Outcome::Ok, 3, None);
        let second = writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
        assert_eq!(commits(&writer) - start, 1, "outcome and record must share one commit");
        let row = store.get(first).unwrap().unwrap();
        assert_eq!((row.outcome, row.upstream_ms), (Some(Outcome::Ok), Some(3)));
        assert!(store.get(second).unwrap().is_some());
    }

    /// With no record coming, the outcome is committed alone once the short wait is over.
    #[test]
    fn a_lone_fire_and_forget_outcome_is_committed_after_the_wait() {
        let writer = AuditWriter::open_in_memory().unwrap();
        let store = writer.store().unwrap();
        let id = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
        writer.complete(id, Outcome::ToolError, 5, None);
        let deadline = std::time::Instant::now() + REPLY_TIMEOUT;
        while store.get(id).unwrap().unwrap().outcome.is_none() {
            assert!(std::time::Instant::now() < deadline, "the outcome was never committed");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(store.get(id).unwrap().unwrap().outcome, Some(Outcome::ToolError));
    }

    /// Shutting down must not lose an outcome that was still waiting for company.
    #[test]
    fn dropping_the_writer_commits_waiting_outcomes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let writer = AuditWriter::open(&path).unwrap();
        let id = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
        writer.complete(id, Outcome::Ok, 1, None);
        drop(writer);
        let row = AuditStore::open(&path).unwrap().get(id).unwrap().unwrap();
        assert_eq!(row.outcome, Some(Outcome::Ok));
    }

    /// Proposal 2 of BENCHMARKS.md: checkpoints happen on their own thread. The main file grows
    /// only when a checkpoint copies pages into it, and these records stay far below the
    /// writer's own backstop, so a main file that catches up with the database proves the
    /// checkpoint thread ran.
    #[test]
    fn the_checkpoint_thread_copies_the_log_into_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let writer = AuditWriter::open(&path).unwrap();
        for i in 0..200 {
            writer.record_blocking(sample("s", "t", Decision::Allowed, i)).unwrap();
        }
        let reader = rusqlite::Connection::open(&path).unwrap();
        let pages: u64 = reader.pragma_query_value(None, "page_count", |r| r.get(0)).unwrap();
        let page_size: u64 = reader.pragma_query_value(None, "page_size", |r| r.get(0)).unwrap();
        let frames_written = 200 * 7;
        assert!(
            frames_written < 10_000,
            "fixture: below the writer's own checkpoint mark"
        );
        let deadline = std::time::Instant::now() + REPLY_TIMEOUT;
        while std::fs::metadata(&path).unwrap().len() < pages * page_size {
            assert!(
                std::time::Instant::now() < deadline,
                "no checkpoint copied the log: main file {} bytes, database {} bytes",
                std::fs::metadata(&path).unwrap().len(),
                pages * page_size
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
