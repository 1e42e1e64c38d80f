//! WAL checkpoints on their own thread, so a commit never waits for one.
//!
//! Why: SQLite's automatic checkpoint runs inside the commit that crosses the threshold, on the
//! writer thread, and copies the log into the database with two fsyncs. That one commit took
//! milliseconds (the audit commit's p99 was 4 ms against a p50 of 50 µs), and every call queued
//! behind the writer waited with it. Here the writer only flags "there is something to
//! checkpoint"; this thread runs a `PASSIVE` checkpoint on its own connection at most every
//! [`INTERVAL`]. A passive checkpoint never takes the write lock, so commits go on meanwhile, and
//! the next writer restarts the log from its start once everything is copied, which keeps the
//! `-wal` file small.
//!
//! The writer's connection keeps a high `wal_autocheckpoint` as a backstop (see
//! `connection::configure_writer`): if this thread cannot checkpoint (its connection fails), the
//! log still cannot grow without bound.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::connection::BUSY_TIMEOUT;

/// How long commits accumulate before a checkpoint: long enough that one checkpoint copies many
/// commits, short enough that the `-wal` file stays a few hundred KiB under steady load.
const INTERVAL: Duration = Duration::from_millis(100);

/// The writer's side: one atomic swap per commit, and a channel send at most once per interval.
pub(crate) struct Checkpointer {
    dirty: Arc<AtomicBool>,
    /// `Option` only so `Drop` can close the channel before joining the thread.
    tx: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread; `None` if it cannot be spawned (the backstop then checkpoints inline).
    pub(crate) fn start(path: PathBuf) -> Option<Checkpointer> {
        let dirty = Arc::new(AtomicBool::new(false));
        // At most one wake-up is pending (sent only when the dirty flag turns on), and dropping
        // the sender stops the thread: no bound needed.
        let (tx, rx) = mpsc::channel();
        let flag = dirty.clone();
        let thread = std::thread::Builder::new()
            .name("portcullis-audit-checkpoint".to_owned())
            .spawn(move || run(&path, &flag, &rx));
        match thread {
            Ok(thread) => Some(Checkpointer {
                dirty,
                tx: Some(tx),
                thread: Some(thread),
            }),
            Err(err) => {
                tracing::warn!(error = %err, "cannot start the audit checkpoint thread; checkpoints run on the writer");
                None
            }
        }
    }

    /// Called by the writer after each commit.
    pub(crate) fn committed(&self) {
        if !self.dirty.swap(true, Ordering::AcqRel) {
            if let Some(tx) = &self.tx {
                let _ = tx.send(());
            }
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("audit checkpoint thread panicked");
            }
        }
    }
}

fn run(path: &std::path::Path, dirty: &AtomicBool, rx: &Receiver<()>) {
    let mut conn: Option<Connection> = None;
    while rx.recv().is_ok() {
        // Let commits accumulate. Nothing else is sent while `dirty` is set, so this wait ends
        // by timeout, or early when the writer shuts down.
        let stopping = matches!(rx.recv_timeout(INTERVAL), Err(RecvTimeoutError::Disconnected));
        dirty.store(false, Ordering::Release);
        checkpoint(path, &mut conn);
        if stopping {
            break;
        }
    }
}

fn checkpoint(path: &std::path::Path, conn: &mut Option<Connection>) {
    if conn.is_none() {
        match open(path) {
            Ok(c) => *conn = Some(c),
            Err(err) => {
                tracing::debug!(error = %err, "audit checkpoint connection cannot open; will retry");
                return;
            }
        }
    }
    let Some(c) = conn.as_ref() else { return };
    if let Err(err) = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        // A full disk or a read-only file fails the writer too, which reports it; here a fresh
        // connection next time is all that can help.
        tracing::debug!(error = %err, "audit WAL checkpoint failed; will retry");
        *conn = None;
    }
}

fn open(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        crate::connection::sqlite_path(path),
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}
