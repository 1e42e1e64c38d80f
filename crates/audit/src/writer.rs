//! The single writer: one read-write connection, committed on by the caller's own thread when
//! nobody else is writing, and by a dedicated std thread in groups (group commit) otherwise.
//!
//! Why a thread and not only a lock around a connection: SQLite allows one writer at a time
//! anyway, and a dedicated thread lets many concurrent `record` calls share one commit instead of
//! queueing for one each. Why commit on the caller's thread at all: when the writer is idle, the
//! hand-off costs two cross-thread wakes (the caller wakes the writer, the writer's callback wakes
//! the caller back), ~30–50 µs on a VM, more than the commit itself (~40 µs).
//!
//! So [`AuditWriter::record`] first tries to commit **here**: when no write is queued for the
//! thread (no group forming), the connection's lock is free at once (`try_lock`, never a wait) and
//! the database is healthy, it runs the transaction on the calling thread with a busy timeout of
//! zero, and `done` runs before `record` returns. Anything else — a group forming, the thread
//! committing, a fault, a lock held by another process, a full disk — goes to the thread as
//! before, which waits for locks, groups, publishes the health and retries. A failed attempt here
//! commits nothing and changes nothing: the thread's attempt decides, so failing closed is exactly
//! what it was. The cost of trying here is the commit's time on the caller's thread (an async
//! worker, ~40 µs, the same order as one wake).
//!
//! Outcomes: fire-and-forget ones ([`AuditWriter::complete`] without a callback) go to a mailbox
//! (`mailbox.rs`) that wakes nobody; they ride in the next decision's transaction, or the thread's
//! tick (every [`COALESCE_WAIT`] while the writer is in use) commits them once they have waited
//! [`COALESCE_WAIT`]. So an outcome is committed within 2 × [`COALESCE_WAIT`] of its post when no
//! decision follows, and before the writer stops when the last handle is dropped. The tick stops
//! after [`IDLE_TICKS`] ticks with nothing done; from then on the first post wakes the thread.
//! WAL checkpoints run on their own thread (`checkpoint.rs`), so no commit waits for one.
//!
//! Failure handling: an error fails the commands it touched and nothing else. The thread never
//! stops on an error (only when every [`AuditWriter`] handle is gone), callbacks that panic are
//! caught, and an error that suggests the connection itself went bad (read-only, I/O error, file
//! moved) makes the thread open a fresh connection before the next batch. While writes fail the
//! thread also probes the database every [`PROBE_EVERY`] with a small real write, so the health
//! it publishes (`health.rs`) turns good again as soon as the cause is fixed, without waiting for
//! a call (except for a full disk, which the next record that fits clears), and waits only
//! [`FAILING_BUSY_TIMEOUT`] for a lock, so refused calls are refused fast.

mod state;
#[cfg(test)]
mod tests;
mod uncopied;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::checkpoint::Checkpointer;
use crate::connection::{self, Target};
use crate::error::AuditError;
use crate::health::{AuditFault, HealthCell, HealthListener};
use crate::mailbox::{Mailbox, Posted};
use crate::record::{NewDecision, Outcome};
use crate::redact::{needs_redaction, redacted_json};
use crate::store::AuditStore;
use crate::waits::{WaitCounters, WaitsFile, WriteWaits};
use state::WriterState;

/// Called with the new row's id once the transaction holding it has committed, or with the error.
pub type RecordDone = Box<dyn FnOnce(Result<i64, AuditError>) + Send>;
/// Called once an outcome has been committed, or with the error.
pub type CompleteDone = Box<dyn FnOnce(Result<(), AuditError>) + Send>;

/// The most commands committed in one transaction, so a steady stream of records cannot hold the
/// callbacks of the first ones back indefinitely.
const MAX_BATCH: usize = 256;

/// How long a fire-and-forget outcome waits for a decision to share a transaction with, and the
/// writer thread's tick while it is in use. A gateway forwarding calls back to back records the
/// next decision well within this; an idle one commits the outcome alone after it.
pub(crate) const COALESCE_WAIT: Duration = Duration::from_millis(5);

/// Ticks with nothing committed or posted after which the writer thread sleeps with no deadline
/// (100 ms): an idle gateway's writer costs no wake-ups.
const IDLE_TICKS: u32 = 20;

/// The largest row (its arguments' text, as stored) committed on a caller's thread. Writing a
/// bigger one (a 15 MiB argument takes tens of ms) would hold an async worker thread that long;
/// it goes to the writer thread, where only the call itself waits.
const HERE_MAX_BYTES: usize = 64 * 1024;

/// While writes fail, how often the thread tries a write by itself to notice the fix.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The busy timeout while writes fail. A lock already held past the normal busy timeout is not a
/// passing contention; calls meanwhile are refused after this instead of hanging for seconds each.
const FAILING_BUSY_TIMEOUT: Duration = Duration::from_millis(200);

enum Command {
    Write(Write),
    /// An outcome was posted while the thread slept with no deadline: start ticking.
    Wake,
    /// Runs on the writer thread between transactions, holding the connection; for tests.
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
        /// When `record` began: its commit wait runs from here ([`WriteWaits`]).
        since: Instant,
        /// When an attempt for it first found the write lock held by another connection (a
        /// caller's try, which hands it to the thread): its lock wait runs from here.
        busy_since: Option<Instant>,
    },
    Complete {
        id: i64,
        outcome: Outcome,
        upstream_ms: i64,
        /// What came back, kept beside the outcome in the same transaction.
        answer: Option<Box<crate::AnswerRecord>>,
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
    fn of(
        arguments: &serde_json::Value,
        sent: Option<bytes::Bytes>,
        extra_keys: &[String],
    ) -> serde_json::Result<Self> {
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

/// Handle to the writer. Cheap to clone (the clones share one connection and one thread). The
/// thread stops when the last clone is dropped, and that drop blocks until everything already
/// queued or waiting in the mailbox has been committed and answered, so shutting down loses
/// nothing.
#[derive(Clone)]
pub struct AuditWriter {
    inner: Arc<Inner>,
}

struct Inner {
    target: Target,
    shared: Arc<Shared>,
    /// `Option` only so `Drop` can close the channel before joining the thread.
    tx: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
}

/// What the callers and the writer thread share.
struct Shared {
    /// The connection and what writes through it. The thread holds it for each batch; a caller
    /// only ever `try_lock`s it, so no caller waits for another's commit here.
    state: Mutex<WriterState>,
    health: Arc<HealthCell>,
    /// Fire-and-forget outcomes waiting for a transaction.
    outcomes: Mailbox<Write>,
    /// Writes sent to the thread and not yet taken by it: while there are any, a group is
    /// forming, and a caller joins it rather than commit ahead of it.
    queued: AtomicUsize,
    /// Bumped by every commit and every posted outcome: the thread ticks while this moves.
    activity: AtomicU64,
    /// Commit and lock waits ([`AuditWriter::write_waits`]); also held by the state, which counts.
    waits: Arc<WaitCounters>,
    /// Where the waits are written when the thread stops or goes idle ([`crate::waits::WAITS_ENV`]).
    waits_file: WaitsFile,
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
        Self::start(Target::File(path.to_path_buf()), true, WaitsFile::from_env())
    }

    /// Like [`open`](Self::open), but a database that cannot be written yet (read-only, locked,
    /// on a full disk, a newer schema) does not stop the start: the writer begins in the failing
    /// state, every record fails with the reason (so the gateway refuses every call), and it
    /// retries until the database can be written. Fails only if the thread cannot start.
    pub fn open_fail_closed(path: &std::path::Path) -> Result<AuditWriter, AuditError> {
        Self::start(Target::File(path.to_path_buf()), false, WaitsFile::from_env())
    }

    /// A private in-memory database, for tests. Unlike SQLite's `:memory:` it can be read through
    /// [`AuditWriter::store`] on a separate connection, the same way a file is, and it lives until
    /// the writer and every store opened from it are dropped.
    pub fn open_in_memory() -> Result<AuditWriter, AuditError> {
        Self::start(Target::new_memory(), true, WaitsFile::from_env())
    }

    fn start(target: Target, strict: bool, waits_file: WaitsFile) -> Result<AuditWriter, AuditError> {
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
        let waits = Arc::new(WaitCounters::new());
        let shared = Arc::new(Shared {
            state: Mutex::new(WriterState::new(target.clone(), conn, health.clone(), waits.clone())),
            health,
            outcomes: Mailbox::new(),
            queued: AtomicUsize::new(0),
            activity: AtomicU64::new(0),
            waits,
            waits_file,
        });
        // Unbounded on purpose: a full queue would have to drop a decision row or block the
        // caller, and both are worse than memory. It holds at most one record or completion per
        // call in flight, which the gateway's session and stream limits bound.
        let (tx, rx) = mpsc::channel();
        let on_thread = shared.clone();
        let thread_target = target.clone();
        let thread = std::thread::Builder::new()
            .name("portcullis-audit-writer".to_owned())
            .spawn(move || {
                // Started on the writer thread so the checkpointer is stopped (and joined) by it.
                // Callers may commit on their own threads before this runs (the idle fast
                // path), and those commits found no checkpointer to tell: one checkpoint at start
                // copies whatever they logged, instead of waiting for the next commit.
                if let Target::File(path) = &thread_target {
                    let checkpointer = Checkpointer::start(path.clone());
                    if let Some(checkpointer) = &checkpointer {
                        checkpointer.committed();
                    }
                    on_thread.lock_state().checkpointer = checkpointer;
                }
                let _closer = CloseOnExit(&on_thread);
                run(&on_thread, &rx);
            })
            .map_err(|err| AuditError::Thread(Arc::new(err)))?;
        Ok(AuditWriter {
            inner: Arc::new(Inner {
                target,
                shared,
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
        self.inner.shared.health.fault()
    }

    /// Calls `listener` on every change between working and failing (on the writer thread; keep it
    /// short). Replaces an earlier listener. A fault that exists already is not replayed: read
    /// [`fault`](Self::fault) after setting the listener.
    pub fn on_health_change(&self, listener: HealthListener) {
        self.inner.shared.health.set_listener(listener);
    }

    /// Records a decision. `done` runs after the transaction containing the row has committed,
    /// with the row id, or with the error if it did not: on the calling thread before `record`
    /// returns when the row was committed here (see the module doc), else on the writer thread.
    /// Keep `done` short (send on a channel) and free of locks the caller holds. If the writer
    /// has stopped, `done` runs at once on the calling thread with [`AuditError::WriterGone`].
    ///
    /// Redaction and JSON encoding happen here, on the caller's thread, to keep the writer's
    /// critical path to the insert itself.
    pub fn record(&self, mut row: NewDecision, done: RecordDone) {
        let since = Instant::now();
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
            since,
            busy_since: None,
        };
        match self.inner.shared.commit_here(write) {
            Ok(replies) => replies.into_iter().for_each(Reply::deliver),
            Err(write) => self.send_write(write),
        }
    }

    /// How long this writer's records waited from [`record`](Self::record) until committed, and
    /// how often and how long its transactions waited for another connection's write lock (another
    /// process writing the same file), since it was opened. Never waits for a commit: the figures
    /// are counters, read as they stand. See `waits.rs`.
    pub fn write_waits(&self) -> WriteWaits {
        self.inner.shared.waits.snapshot()
    }

    /// Records how a forwarded call ended: fills `outcome` and `upstream_ms` of row `id`, once.
    /// With `done: None` it is fire-and-forget: it waits in the mailbox, wakes nobody (unless the
    /// writer is idle), is committed with the next decision or within 2 × [`COALESCE_WAIT`], and a
    /// failure is logged. With `done` it goes to the writer thread at once. A second completion
    /// of the same row fails with [`AuditError::AlreadyCompleted`] and leaves the first in place.
    pub fn complete(&self, id: i64, outcome: Outcome, upstream_ms: i64, done: Option<CompleteDone>) {
        self.post_complete(Write::Complete {
            id,
            outcome,
            upstream_ms,
            answer: None,
            done,
        });
    }

    /// [`complete`](Self::complete), fire-and-forget, with what came back: the `answers` row is
    /// written in the outcome's transaction, so a row never has one without the other.
    pub fn complete_with_answer(&self, id: i64, outcome: Outcome, upstream_ms: i64, answer: crate::AnswerRecord) {
        self.post_complete(Write::Complete {
            id,
            outcome,
            upstream_ms,
            answer: Some(Box::new(answer)),
            done: None,
        });
    }

    fn post_complete(&self, write: Write) {
        if !write.can_wait() {
            return self.send_write(write);
        }
        match self.inner.shared.outcomes.post(write) {
            Posted::Queued => {}
            Posted::WakeWriter => {
                self.inner.shared.activity.fetch_add(1, Ordering::Relaxed);
                // If the thread is gone, `CloseOnExit` has taken (and logged) what waits.
                let _ = self.send(Command::Wake);
            }
            Posted::Closed(write) => write.fail(AuditError::WriterGone),
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

    /// Queues a write for the thread; answers it with [`AuditError::WriterGone`] if the thread
    /// has stopped.
    fn send_write(&self, write: Write) {
        let queued = &self.inner.shared.queued;
        queued.fetch_add(1, Ordering::AcqRel);
        if let Err(Command::Write(write)) = self.send(Command::Write(write)) {
            queued.fetch_sub(1, Ordering::AcqRel);
            write.fail(AuditError::WriterGone);
        }
    }

    /// Queues a command; hands it back if the writer thread has stopped.
    fn send(&self, cmd: Command) -> Result<(), Command> {
        match &self.inner.tx {
            Some(tx) => tx.send(cmd).map_err(|mpsc::SendError(cmd)| cmd),
            None => Err(cmd),
        }
    }

    /// Shortens the lock wait so lock tests do not wait the product's busy timeout.
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

impl Shared {
    /// The writer thread's way in: waits. A panic while the connection was held (a bug) leaves
    /// no transaction open (rusqlite rolls back on drop), so the state is still usable.
    fn lock_state(&self) -> MutexGuard<'_, WriterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Commits `record`, with the outcomes waiting, on the calling thread if nobody else is
    /// writing; else hands it back for the thread. See the module doc for when and why.
    fn commit_here(&self, record: Write) -> Result<Vec<Reply>, Write> {
        if record.stored_bytes() > HERE_MAX_BYTES || self.queued.load(Ordering::Acquire) != 0 {
            return Err(record);
        }
        // Busy (the thread is committing) or poisoned: the thread's way.
        let Ok(mut state) = self.state.try_lock() else {
            return Err(record);
        };
        if !state.can_commit_here() {
            return Err(record);
        }
        let taken_at = Instant::now();
        let mut writes = self.outcomes.take();
        writes.push(record);
        match state.commit_here(&writes) {
            Ok(results) => {
                drop(state);
                self.activity.fetch_add(1, Ordering::Relaxed);
                Ok(state::replies(writes, Ok(results)))
            }
            Err(err) => {
                drop(state);
                tracing::debug!(error = %err, "audit commit on the caller's thread failed; the writer thread takes it");
                let mut record = writes.pop();
                if err.sqlite_code() == Some(rusqlite::ErrorCode::DatabaseBusy) {
                    if let Some(Write::Record { busy_since, .. }) = &mut record {
                        *busy_since = Some(taken_at);
                    }
                }
                self.outcomes.put_back(writes, taken_at);
                record.map_or(Ok(Vec::new()), Err)
            }
        }
    }

    /// One batch from the channel: its writes, and every outcome waiting, in one transaction
    /// (split only around test controls). Replies are delivered with the connection released.
    fn run_batch(&self, batch: &mut Vec<Command>) {
        let mut replies = Vec::new();
        let mut writes = Vec::new();
        {
            let mut state = self.lock_state();
            for cmd in batch.drain(..) {
                match cmd {
                    Command::Write(write) => writes.push(write),
                    Command::Wake => {
                        #[cfg(test)]
                        {
                            state.wakes += 1;
                        }
                    }
                    #[cfg(test)]
                    Command::Control(f) => {
                        replies.extend(self.commit_with_outcomes(&mut state, std::mem::take(&mut writes)));
                        f(&mut state);
                    }
                }
            }
            replies.extend(self.commit_with_outcomes(&mut state, writes));
        }
        replies.into_iter().for_each(Reply::deliver);
    }

    /// `writes` plus the waiting outcomes; outcomes alone are left to wait for company.
    fn commit_with_outcomes(&self, state: &mut WriterState, mut writes: Vec<Write>) -> Vec<Reply> {
        if writes.is_empty() {
            return Vec::new();
        }
        writes.append(&mut self.outcomes.take());
        self.activity.fetch_add(1, Ordering::Relaxed);
        state.commit_group(writes)
    }

    /// A tick: outcomes that waited long enough are committed alone; while failing, a probe
    /// when one is due. Takes the connection only for that, so a tick with nothing to do never
    /// turns a caller's commit away.
    fn tick(&self, pace: &mut Pace) {
        let due = self.outcomes.take_if_waited(COALESCE_WAIT);
        let replies = if due.is_empty() {
            if self.health.is_failing() && pace.probe_due() {
                self.lock_state().probe();
            }
            Vec::new()
        } else {
            self.activity.fetch_add(1, Ordering::Relaxed);
            self.lock_state().commit_group(due)
        };
        replies.into_iter().for_each(Reply::deliver);
    }

    /// Every handle is gone: what still waits is committed, then the file is closed.
    fn shut_down(&self) {
        let replies = {
            let mut state = self.lock_state();
            let rest = self.outcomes.close();
            let replies = state.commit_group(rest);
            state.close();
            replies
        };
        replies.into_iter().for_each(Reply::deliver);
        self.waits_file.append(&self.waits.snapshot(), true);
    }

    /// The writer went idle: its figures so far, in case the process exits without dropping it
    /// (then no final line comes). Only when something was counted since the last line.
    fn idle(&self, written: &mut u64) {
        let now = self.waits.activity();
        if now != *written {
            *written = now;
            self.waits_file.append(&self.waits.snapshot(), false);
        }
    }
}

/// Makes sure a writer thread that ends by a panic (a bug) still refuses later outcomes and
/// says which were lost, instead of letting them wait forever.
struct CloseOnExit<'a>(&'a Shared);

impl Drop for CloseOnExit<'_> {
    fn drop(&mut self) {
        for write in self.0.outcomes.close() {
            write.fail(AuditError::WriterGone);
        }
    }
}

/// When the writer thread wakes by itself: ticks while the writer is in use, probes while it
/// fails, nothing at all while idle and healthy.
struct Pace {
    seen: u64,
    idle_ticks: u32,
    next_probe: Instant,
}

impl Pace {
    fn new() -> Self {
        // Asleep from the start: nothing to tick for yet.
        Pace {
            seen: 0,
            idle_ticks: IDLE_TICKS,
            next_probe: Instant::now() + PROBE_EVERY,
        }
    }

    /// How long the thread may wait for a command; `None`: no deadline.
    fn wait(&mut self, shared: &Shared) -> Option<Duration> {
        let activity = shared.activity.load(Ordering::Relaxed);
        if activity != self.seen {
            self.seen = activity;
            self.idle_ticks = 0;
        }
        // Not ticking only once nothing waits in the mailbox, which from then on wakes the thread
        // when an outcome is posted.
        let ticking = self.idle_ticks < IDLE_TICKS || !shared.outcomes.sleep();
        let tick = ticking.then_some(COALESCE_WAIT);
        let probe = shared
            .health
            .is_failing()
            .then(|| self.next_probe.saturating_duration_since(Instant::now()));
        match (tick, probe) {
            (Some(tick), Some(probe)) => Some(tick.min(probe)),
            (tick, probe) => tick.or(probe),
        }
    }

    /// Counts a tick with nothing done; true when it is the one after which the thread sleeps.
    fn ticked(&mut self) -> bool {
        self.idle_ticks = self.idle_ticks.saturating_add(1);
        self.idle_ticks == IDLE_TICKS
    }

    fn probe_due(&mut self) -> bool {
        let now = Instant::now();
        if now < self.next_probe {
            return false;
        }
        self.next_probe = now + PROBE_EVERY;
        true
    }
}

fn run(shared: &Shared, rx: &Receiver<Command>) {
    let mut pace = Pace::new();
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut waits_written = 0;
    loop {
        let first = match pace.wait(shared) {
            None => match rx.recv() {
                Ok(cmd) => cmd,
                Err(_) => break,
            },
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(cmd) => cmd,
                Err(RecvTimeoutError::Timeout) => {
                    if pace.ticked() {
                        shared.idle(&mut waits_written);
                    }
                    shared.tick(&mut pace);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            },
        };
        shared.outcomes.awake();
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(cmd) => batch.push(cmd),
                Err(_) => break,
            }
        }
        let writes = batch.iter().filter(|cmd| matches!(cmd, Command::Write(_))).count();
        shared.queued.fetch_sub(writes, Ordering::AcqRel);
        shared.run_batch(&mut batch);
    }
    // Every handle is gone: what still waits is committed before the file is closed.
    shared.shut_down();
    tracing::debug!("audit writer stopped: every handle dropped");
}

/// The answer for one write, delivered after the transaction ends.
enum Reply {
    Record(RecordDone, Result<i64, AuditError>),
    Complete(i64, Option<CompleteDone>, Result<(), AuditError>),
}

impl Write {
    /// The bytes of text the write stores (a record's arguments, and the original ones).
    fn stored_bytes(&self) -> usize {
        match self {
            Write::Record {
                arguments_json,
                original_json,
                ..
            } => arguments_json.as_str().len() + original_json.as_ref().map_or(0, String::len),
            Write::Complete { .. } => 0,
        }
    }

    /// A fire-and-forget outcome: nobody waits for its commit, so it may wait for company.
    fn can_wait(&self) -> bool {
        matches!(self, Write::Complete { done: None, .. })
    }

    /// Answers a write that will not be attempted.
    fn fail(self, err: AuditError) {
        match self {
            Write::Record { done, .. } => guarded(move || done(Err(err))),
            Write::Complete { id, done, .. } => finish_complete(id, done, Err(err)),
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
