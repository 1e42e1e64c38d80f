//! The writer's own behaviour: group commit, commits on the caller's thread, outcomes that
//! ride along, shutdown.

use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::record::Decision;
use crate::store::AuditFilter;
use crate::tests::{sample, REPLY_TIMEOUT};
use crate::waits::{WaitsFile, WriteWaits};

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

/// Waits (bounded) until outcome `id` is in the database; returns how long that took.
fn wait_for_outcome(store: &AuditStore, id: i64) -> Duration {
    let t0 = std::time::Instant::now();
    while store.get(id).unwrap().unwrap().outcome.is_none() {
        assert!(
            t0.elapsed() < REPLY_TIMEOUT,
            "the outcome of row {id} was never committed"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    t0.elapsed()
}

fn wakes(writer: &AuditWriter) -> u64 {
    writer.control(|state| state.wakes).unwrap()
}

/// Point 2 of issue 14: with nobody else writing, a decision is committed on the caller's
/// thread, and `done` has run when `record` returns — no hand-off to the writer thread and back.
#[test]
fn a_record_on_an_idle_writer_is_committed_on_the_callers_thread() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    let (tx, rx) = mpsc::channel();
    writer.record(
        sample("s", "t", Decision::Allowed, 1),
        Box::new(move |r| tx.send((std::thread::current().id(), r)).unwrap()),
    );
    let (thread, result) = rx
        .try_recv()
        .expect("the record must be committed before `record` returns");
    assert_eq!(thread, std::thread::current().id());
    let id = result.unwrap();
    assert!(store.get(id).unwrap().is_some(), "the row is committed and readable");
}

/// Point 1 of issue 14: an outcome posted while the writer is in use wakes nobody, and with no
/// later call it is still committed, by the writer's tick, within the stated bound.
#[test]
fn an_outcome_with_no_later_call_is_committed_by_the_tick_without_a_wake() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    // After a first outcome (which may have woken the idle thread) the thread ticks.
    let first = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    writer.complete(first, Outcome::Ok, 1, None);
    wait_for_outcome(&store, first);
    let woken = wakes(&writer);

    let second = writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
    writer.complete(second, Outcome::ToolError, 2, None);
    let took = wait_for_outcome(&store, second);
    assert_eq!(
        wakes(&writer),
        woken,
        "an outcome posted while the writer ticks wakes nobody"
    );
    eprintln!(
        "outcome committed by the tick {took:?} after its post (bound {:?})",
        COALESCE_WAIT * 2
    );
    // The bound is 2 × COALESCE_WAIT plus scheduling; a second is far past it on any machine,
    // and far below "never" (no tick) or "at the next call" (there is none).
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(store.get(second).unwrap().unwrap().outcome, Some(Outcome::ToolError));
}

/// A writer that has gone idle (no tick) is woken by an outcome rather than leaving it waiting.
#[test]
fn an_idle_writer_is_woken_by_an_outcome() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    let id = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    let deadline = std::time::Instant::now() + REPLY_TIMEOUT;
    while !writer.inner.shared.outcomes.is_asleep() {
        assert!(std::time::Instant::now() < deadline, "the writer never went idle");
        std::thread::sleep(Duration::from_millis(5));
    }
    writer.complete(id, Outcome::Ok, 1, None);
    wait_for_outcome(&store, id);
    assert_eq!(wakes(&writer), 1);
}

/// Outcomes carried by the next decision committed on the caller's thread: one commit for both.
///
/// Deterministic: the writer thread is held inside a reply callback (which runs with the
/// connection released, so a caller may commit), where it can neither tick the outcome away nor
/// take the record. The commit count is read from the state directly for the same reason.
#[test]
fn a_waiting_outcome_rides_with_a_record_committed_on_the_callers_thread() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    let first = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    let holder = writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
    // A completion with a callback goes to the writer thread, which runs the callback after the
    // commit: the thread stays there until `release`.
    let (entered_tx, entered) = mpsc::channel();
    let (release, held) = mpsc::channel::<()>();
    writer.complete(
        holder,
        Outcome::Ok,
        1,
        Some(Box::new(move |r| {
            entered_tx.send(r).unwrap();
            let _ = held.recv_timeout(REPLY_TIMEOUT);
        })),
    );
    entered.recv_timeout(REPLY_TIMEOUT).unwrap().unwrap();
    let start = writer.inner.shared.lock_state().commits;

    writer.complete(first, Outcome::Ok, 3, None);
    let (tx, rx) = mpsc::channel();
    writer.record(
        sample("s", "t", Decision::Allowed, 3),
        Box::new(move |r| tx.send(r).unwrap()),
    );
    rx.try_recv()
        .expect("the record must be committed on the caller's thread before `record` returns")
        .unwrap();
    let end = writer.inner.shared.lock_state().commits;
    drop(release);
    assert_eq!(end - start, 1, "outcome and record must share one commit");
    assert_eq!(store.get(first).unwrap().unwrap().outcome, Some(Outcome::Ok));
}

/// A writer thread that died (a bug) fails closed: records are refused with `WriterGone`, and
/// nothing is committed on the caller's thread on a connection nobody can vouch for.
#[test]
fn a_crashed_writer_thread_refuses_every_record() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    let crashed = writer.control(|_state| -> () { panic!("writer bug (this panic is the test)") });
    assert!(matches!(crashed, Err(AuditError::WriterGone)), "{crashed:?}");
    let err = writer
        .record_blocking(sample("s", "t", Decision::Allowed, 1))
        .unwrap_err();
    assert!(matches!(err, AuditError::WriterGone), "{err:?}");
    let err = writer.complete_blocking(1, Outcome::Ok, 1).unwrap_err();
    assert!(matches!(err, AuditError::WriterGone), "{err:?}");
    writer.complete(1, Outcome::Ok, 1, None);
    assert_eq!(store.count(&AuditFilter::default()).unwrap(), 0);
}

/// A large row is not written on the caller's thread (it would hold an async worker for the
/// whole insert): it goes to the writer thread, and `done` runs there.
#[test]
fn a_large_row_is_committed_by_the_writer_thread() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let mut row = sample("s", "t", Decision::Allowed, 1);
    row.arguments = serde_json::json!({ "blob": "x".repeat(HERE_MAX_BYTES + 1) });
    let (tx, rx) = mpsc::channel();
    writer.record(
        row,
        Box::new(move |r| tx.send((std::thread::current().id(), r)).unwrap()),
    );
    let (thread, result) = rx.recv_timeout(REPLY_TIMEOUT).unwrap();
    result.unwrap();
    assert_ne!(thread, std::thread::current().id(), "committed on the caller's thread");
}

/// Rows with large arguments are inserted through `uncopied` (their texts bound in place);
/// what is stored is what the cached statement stores for a small row: every column, the
/// redaction, NULLs, the edited call's original, and a client's own text kept as sent.
#[test]
fn a_row_with_large_arguments_is_stored_like_any_other() {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    let blob = "z".repeat(state::UNCOPIED_MIN_BYTES);
    let mut row = sample("srv", "write", Decision::Approved, 7);
    row.client_version = None;
    row.reason = Some("looked fine".to_owned());
    row.wait_ms = Some(42);
    row.arguments = serde_json::json!({ "blob": blob, "token": "secret-1" });
    row.original_arguments = Some(serde_json::json!({ "blob": "", "token": "secret-0" }));
    let id = writer.record_blocking(row.clone()).unwrap();
    let stored = store.get(id).unwrap().unwrap();
    assert_eq!(
        stored.arguments,
        serde_json::json!({ "blob": blob, "token": crate::redact::REDACTED })
    );
    assert_eq!(
        stored.original_arguments,
        Some(serde_json::json!({ "blob": "", "token": crate::redact::REDACTED }))
    );
    assert_eq!(
        (
            stored.time_ms,
            stored.session.as_str(),
            stored.client_name.as_deref(),
            stored.client_version
        ),
        (7, "sess-1", Some("claude-code"), None)
    );
    assert_eq!((stored.server.as_str(), stored.tool.as_str()), ("srv", "write"));
    assert_eq!(
        (stored.decision, stored.decided_by),
        (Decision::Approved, row.decided_by)
    );
    assert_eq!(
        (stored.rule, stored.reason, stored.wait_ms),
        (row.rule, row.reason, Some(42))
    );
    assert_eq!(
        (stored.request_id, stored.arguments_digest),
        (row.request_id, row.arguments_digest)
    );

    // The client's own bytes, nothing to redact: stored byte for byte (spacing and key order).
    let sent = format!("{{ \"b\": 1,  \"a\": \"{blob}\" }}");
    let mut row = sample("srv", "write", Decision::Allowed, 8);
    row.arguments = serde_json::from_str(&sent).unwrap();
    row.arguments_text = Some(bytes::Bytes::from(sent.clone()));
    let id = writer.record_blocking(row).unwrap();
    assert_eq!(store.stored_arguments_text(id), sent);
}

/// `uncopied` reports SQLite's own errors, as rusqlite would, so the writer's fault handling
/// (busy, full, read-only) reads them the same.
#[test]
fn uncopied_statements_report_sqlites_errors() {
    use uncopied::Param;
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE t (a TEXT NOT NULL, b INTEGER) STRICT")
        .unwrap();
    uncopied::execute(
        &conn,
        "INSERT INTO t VALUES (?1, ?2)",
        &[Param::Text("x"), Param::Int(2)],
    )
    .unwrap();
    let (a, b): (String, i64) = conn
        .query_row("SELECT a, b FROM t", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!((a.as_str(), b), ("x", 2));

    let err = uncopied::execute(&conn, "INSERT INTO t VALUES (?1, ?2)", &[Param::Null, Param::Int(1)]).unwrap_err();
    assert_eq!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ConstraintViolation),
        "{err}"
    );
    assert!(err.to_string().contains("NOT NULL"), "{err}");
    let err = uncopied::execute(&conn, "INSERT INTO nowhere VALUES (?1)", &[Param::Int(1)]).unwrap_err();
    assert!(err.to_string().contains("no such table"), "{err}");
    let err = uncopied::execute(&conn, "SELECT 1", &[]).unwrap_err();
    assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::ApiMisuse), "{err}");
    conn.execute_batch("PRAGMA query_only = ON").unwrap();
    let err = uncopied::execute(&conn, "INSERT INTO t VALUES (?1, ?2)", &[Param::Text("y"), Param::Null]).unwrap_err();
    assert_eq!(err.sqlite_error_code(), Some(rusqlite::ErrorCode::ReadOnly), "{err}");
    assert_eq!(
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
            .unwrap(),
        1
    );
}

/// A writer on a file of its own in `dir`.
fn on_file(dir: &std::path::Path, waits_file: WaitsFile) -> AuditWriter {
    AuditWriter::start(Target::File(dir.join("audit.db")), true, waits_file).unwrap()
}

#[test]
fn records_committed_without_contention_count_their_commit_wait_and_no_lock_wait() {
    let writer = AuditWriter::open_in_memory().unwrap();
    assert_eq!(writer.write_waits(), WriteWaits::default());
    let t0 = Instant::now();
    for i in 0..20 {
        let id = writer.record_blocking(sample("s", "t", Decision::Allowed, i)).unwrap();
        writer.complete(id, Outcome::Ok, 1, None);
    }
    let bound = u64::try_from(t0.elapsed().as_micros()).unwrap();
    let waits = writer.write_waits();
    assert_eq!(waits.rows, 20, "{waits:?}");
    assert_eq!(waits.lock_waits, 0, "{waits:?}");
    assert!(waits.commit_p50_us <= waits.commit_p99_us, "{waits:?}");
    assert!(waits.commit_p99_us <= waits.commit_max_us, "{waits:?}");
    assert!(
        waits.commit_max_us <= bound,
        "{waits:?}: longer than the whole loop ({bound} µs)"
    );
}

#[test]
fn a_record_that_waits_for_another_connections_write_lock_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let writer = on_file(dir.path(), WaitsFile::at(dir.path().join("unused.jsonl")));
    // The thread is in its loop and idle, so the next record is tried on this thread first.
    writer.control(|_| ()).unwrap();
    writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    assert_eq!(writer.write_waits().lock_waits, 0);

    let other = rusqlite::Connection::open(dir.path().join("audit.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (tx, rx) = mpsc::channel();
    writer.record(
        sample("s", "t", Decision::Allowed, 2),
        Box::new(move |r| tx.send(r).unwrap()),
    );
    // `record` has returned: its try on this thread found the lock held, and the writer thread
    // now waits for it. From here until the release the lock is held for certain.
    let held_from = Instant::now();
    let hold = Duration::from_millis(150);
    assert!(
        matches!(rx.recv_timeout(hold), Err(mpsc::RecvTimeoutError::Timeout)),
        "a record was committed while another connection held the write lock"
    );
    other.execute_batch("COMMIT").unwrap();
    let held = u64::try_from(held_from.elapsed().as_micros()).unwrap();
    rx.recv_timeout(REPLY_TIMEOUT).unwrap().unwrap();

    let waits = writer.write_waits();
    assert_eq!(waits.rows, 2, "{waits:?}");
    assert!(waits.lock_waits >= 1, "{waits:?}");
    assert!(
        waits.lock_wait_max_us >= held,
        "{waits:?}: the lock was held {held} µs while the record waited"
    );
    assert!(waits.lock_wait_total_us >= waits.lock_wait_max_us, "{waits:?}");
    assert!(waits.commit_max_us >= held, "{waits:?}: held {held} µs");
}

#[test]
fn a_lock_wait_that_times_out_is_counted_too() {
    let dir = tempfile::tempdir().unwrap();
    let writer = on_file(dir.path(), WaitsFile::at(dir.path().join("unused.jsonl")));
    writer.set_busy_timeout_for_test(Duration::from_millis(100));
    let other = rusqlite::Connection::open(dir.path().join("audit.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let t0 = Instant::now();
    let err = writer
        .record_blocking(sample("s", "t", Decision::Allowed, 1))
        .unwrap_err();
    let bound = u64::try_from(t0.elapsed().as_micros()).unwrap();
    assert_eq!(err.sqlite_code(), Some(rusqlite::ErrorCode::DatabaseBusy), "{err:?}");
    other.execute_batch("ROLLBACK").unwrap();
    let waits = writer.write_waits();
    assert_eq!(waits.rows, 0, "a refused record is not a committed row: {waits:?}");
    assert_eq!(waits.lock_waits, 1, "{waits:?}");
    assert!(
        (100_000..=bound).contains(&waits.lock_wait_max_us),
        "{waits:?}: the busy timeout is 100 ms, the call took {bound} µs"
    );
}

/// The lines in `path`, parsed.
fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_waits_are_appended_to_the_file_when_the_writer_stops() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("waits.jsonl");
    std::fs::write(&file, "{\"pid\": 1, \"final\": true, \"rows\": 9}\n").unwrap();
    let writer = on_file(dir.path(), WaitsFile::at(file.clone()));
    for i in 0..3 {
        writer.record_blocking(sample("s", "t", Decision::Allowed, i)).unwrap();
    }
    let expected = writer.write_waits();
    drop(writer);
    let lines = lines(&file);
    let last = lines.last().unwrap();
    assert_eq!(lines[0]["rows"], 9, "earlier lines are kept: {lines:?}");
    assert_eq!(last["pid"], std::process::id());
    assert_eq!(last["final"], true);
    assert_eq!(last["rows"], 3);
    assert_eq!(last["commit_max_us"], expected.commit_max_us);
    assert_eq!(last["lock_waits"], 0);
}

#[test]
fn an_idle_writer_leaves_its_waits_so_far_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("waits.jsonl");
    let writer = on_file(dir.path(), WaitsFile::at(file.clone()));
    let id = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    // The outcome wakes the thread, which ticks and then goes idle (IDLE_TICKS × COALESCE_WAIT):
    // the event is the line's appearance, waited for with a bound.
    writer.complete(id, Outcome::Ok, 1, None);
    let deadline = Instant::now() + REPLY_TIMEOUT;
    while lines(&file).is_empty() {
        assert!(Instant::now() < deadline, "no line from an idle writer");
        std::thread::yield_now();
    }
    let line = lines(&file)[0].clone();
    assert_eq!(line["final"], false);
    assert_eq!(line["rows"], 1);
    // A process that exits without dropping its writer leaves this line; one that drops it adds
    // the final one.
    drop(writer);
    let all = lines(&file);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["final"], true);
}
