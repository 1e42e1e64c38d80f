//! The writer under real faults, on real files: another process holding the lock, a filesystem
//! with no room left, a read-only filesystem. Each test checks that records fail with the cause
//! while the fault holds (so the gateway refuses the calls), that [`AuditWriter::fault`] says so,
//! that failed records leave no row, and that the writer recovers by itself once the fault is
//! removed — seen first through the health (the probe, no record needed), then by a record (for
//! a full disk, by the record itself).
//!
//! The full and read-only cases need `mount` (tmpfs, bind mounts), which needs root. CI runs as
//! root; elsewhere they fall back to what an ordinary user can do (file modes) or skip with a line
//! on stderr, which under CI is a failure instead (`test_env.rs`).

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::test_env::unmet;
use crate::tests::{sample, REPLY_TIMEOUT};
use crate::{AuditError, AuditFilter, AuditStore, AuditWriter, Decision, FaultKind};

/// Waits (bounded) for the writer's health to match `failing`.
fn wait_health(writer: &AuditWriter, failing: bool) {
    let deadline = Instant::now() + REPLY_TIMEOUT;
    while writer.fault().is_some() != failing {
        assert!(
            Instant::now() < deadline,
            "health never became {}; fault: {:?}",
            if failing { "failing" } else { "good" },
            writer.fault()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn count(path: &Path) -> u64 {
    AuditStore::open(path).unwrap().count(&AuditFilter::default()).unwrap()
}

fn integrity_ok(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let result: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(result, "ok");
}

/// A `python3` child holding `BEGIN EXCLUSIVE` on the database until its stdin closes: a lock
/// held by another process, the way another program (a careless `sqlite3` shell) would.
struct Locker {
    child: Child,
}

impl Locker {
    fn lock(path: &Path) -> Option<Locker> {
        let script = "import sqlite3, sys\n\
                      c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
                      c.execute('BEGIN EXCLUSIVE')\n\
                      print('locked', flush=True)\n\
                      sys.stdin.read()\n";
        let mut child = match Command::new("python3")
            .args(["-c", script])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(err) => {
                unmet(&format!("no python3 to hold the lock from another process ({err})"));
                return None;
            }
        };
        let mut line = String::new();
        // Bounded: the child either prints or exits (EOF).
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "locked", "the locking process failed to take the lock");
        Some(Locker { child })
    }

    fn release(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the locking process failed: {status}");
    }
}

#[test]
fn a_lock_held_by_another_process_fails_records_fast_and_clears_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    // The first record waits the whole busy timeout; 5 s is the product's, not the test's, wait.
    writer.set_busy_timeout_for_test(Duration::from_millis(300));

    let Some(locker) = Locker::lock(&path) else { return };
    // The caller's own attempt (the writer is idle) must not wait for the lock: `record` returns
    // at once, and the answer comes from the writer thread after its busy timeout.
    let (tx, rx) = std::sync::mpsc::channel();
    let t0 = Instant::now();
    writer.record(
        sample("s", "t", Decision::Allowed, 2),
        Box::new(move |r| tx.send(r).unwrap()),
    );
    let returned = t0.elapsed();
    assert!(
        returned < Duration::from_millis(300),
        "record waited {returned:?} for a lock on the caller's thread"
    );
    let err = rx.recv_timeout(REPLY_TIMEOUT).unwrap().unwrap_err();
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "the refusal must come from the writer thread's full wait, not a caller's busy-0 try"
    );
    assert_eq!(FaultKind::of(&err), FaultKind::Locked, "{err:?}");
    let fault = writer.fault().expect("a failed record must mark the writer as failing");
    assert_eq!(fault.kind, FaultKind::Locked);
    assert!(
        fault.summary().starts_with("locked by another process: "),
        "{}",
        fault.summary()
    );

    // While failing, a call is refused after the short wait, not the full busy timeout.
    let t0 = Instant::now();
    assert!(writer.record_blocking(sample("s", "t", Decision::Allowed, 3)).is_err());
    assert!(t0.elapsed() < Duration::from_secs(3), "took {:?}", t0.elapsed());

    locker.release();
    wait_health(&writer, false);
    writer.record_blocking(sample("s", "t", Decision::Allowed, 4)).unwrap();
    assert_eq!(count(&path), 2, "the refused records must leave no row");
    integrity_ok(&path);
}

/// A mount made for one test and undone when it ends.
struct Mount {
    at: PathBuf,
}

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Option<Mount> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount { at: at.to_owned() })
    }

    fn bind(from: &Path, at: &Path) -> Option<Mount> {
        let ok = Command::new("mount")
            .arg("--bind")
            .arg(from)
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount { at: at.to_owned() })
    }

    fn remount(&self, mode: &str) -> bool {
        Command::new("mount")
            .args(["-o", &format!("remount,bind,{mode}")])
            .arg(&self.at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// Writes until the filesystem refuses: ENOSPC, for real.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5a_u8; 16 * 1024];
    loop {
        match file.write_all(&chunk) {
            Ok(()) => {}
            Err(err) if err.raw_os_error() == Some(28) => break,
            Err(err) => panic!("filling the filesystem failed otherwise: {err}"),
        }
    }
    // Whatever is still buffered in the page cache is accounted already on tmpfs.
    let _ = file.sync_all();
}

/// A writer on `audit.db` in a 4 MiB tmpfs mounted at `dir`, or `None` where mounting is not allowed.
fn writer_on_small_tmpfs(dir: &Path) -> Option<(Mount, std::path::PathBuf, AuditWriter)> {
    let mount = Mount::tmpfs(dir, "4m")?;
    let path = dir.join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    Some((mount, path, writer))
}

#[test]
fn a_full_filesystem_fails_records_and_the_writer_recovers_once_space_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_mount, path, writer)) = writer_on_small_tmpfs(dir.path()) else {
        return unmet("cannot mount a tmpfs here (needs root)");
    };
    for i in 0..20 {
        writer.record_blocking(sample("s", "t", Decision::Allowed, i)).unwrap();
    }
    let filler = dir.path().join("filler");
    fill(&filler);

    // Writes that fit in log space SQLite already owns still succeed, and are durable; the first
    // one that needs more space fails. Bounded: the log is far smaller than this many records.
    let mut written: u64 = 20;
    let err = loop {
        match writer.record_blocking(sample("s", "t", Decision::Allowed, i64::try_from(written).unwrap())) {
            Ok(_) => written += 1,
            Err(err) => break err,
        }
        assert!(written < 5_000, "the full filesystem never failed a record");
    };
    eprintln!("full filesystem: {written} records committed in all before the first refusal: {err}");
    assert_eq!(FaultKind::of(&err), FaultKind::Full, "{err:?}");
    assert_eq!(writer.fault().map(|f| f.kind), Some(FaultKind::Full));
    assert!(writer.record_blocking(sample("s", "t", Decision::Allowed, -1)).is_err());

    std::fs::remove_file(&filler).unwrap();
    // No probe for a full disk (it could fit where a record does not): the next record clears it.
    writer.record_blocking(sample("s", "t", Decision::Allowed, -2)).unwrap();
    assert!(writer.fault().is_none(), "a record that fits ends the fault");
    drop(writer);
    assert_eq!(count(&path), written + 1, "refused records must leave no row");
    integrity_ok(&path);
}

/// Root ignores file modes, so as root the database is made read-only for real with a read-only
/// bind mount of its directory; as another user, with file modes.
#[test]
fn a_read_only_database_at_start_fails_closed_and_recovers_when_made_writable() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    {
        let writer = AuditWriter::open(&real.join("audit.db")).unwrap();
        writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    }
    let view = dir.path().join("view");
    std::fs::create_dir(&view).unwrap();
    let (path, mount) = if let Some(mount) = Mount::bind(&real, &view).filter(|m| m.remount("ro")) {
        (view.join("audit.db"), Some(mount))
    } else {
        let path = real.join("audit.db");
        crate::tests::chmod(&path, 0o444);
        if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
            return unmet(
                "neither a read-only bind mount (needs root) nor file modes (they do not bind root) \
                 make the database read-only here",
            );
        }
        (path, None)
    };

    let writer = AuditWriter::open_fail_closed(&path).unwrap();
    let fault = writer
        .fault()
        .expect("a read-only database must start in the failing state");
    assert_eq!(fault.kind, FaultKind::ReadOnly, "{:?}", fault.error);
    let err = writer
        .record_blocking(sample("s", "t", Decision::Allowed, 2))
        .unwrap_err();
    assert!(matches!(err, AuditError::ReadOnly { .. }), "{err:?}");
    assert!(err.to_string().contains("read-only"), "{err}");

    match &mount {
        Some(mount) => assert!(mount.remount("rw"), "making the mount writable again failed"),
        None => crate::tests::chmod(&path, 0o600),
    }
    wait_health(&writer, false);
    writer.record_blocking(sample("s", "t", Decision::Allowed, 3)).unwrap();
    drop(writer);
    assert_eq!(count(&path), 2, "the refused record must leave no row");
    integrity_ok(&path);
    drop(mount);
}

/// A row with large arguments takes its own insert path (bound without SQLite's copy,
/// `writer/uncopied.rs`); on a full disk it fails as `Full` like any other, leaves no row, and
/// the next large row after space is freed is committed whole.
#[test]
fn a_large_row_on_a_full_filesystem_is_refused_as_full_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_mount, path, writer)) = writer_on_small_tmpfs(dir.path()) else {
        return unmet("cannot mount a tmpfs here (needs root)");
    };
    writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    let filler = dir.path().join("filler");
    fill(&filler);
    let large = |time_ms: i64| {
        let mut row = sample("s", "t", Decision::Allowed, time_ms);
        row.arguments = serde_json::json!({ "blob": "y".repeat(256 * 1024) });
        row
    };
    let err = writer.record_blocking(large(2)).unwrap_err();
    assert_eq!(FaultKind::of(&err), FaultKind::Full, "{err:?}");
    assert_eq!(err.sqlite_code(), Some(rusqlite::ErrorCode::DiskFull), "{err:?}");

    std::fs::remove_file(&filler).unwrap();
    let id = writer.record_blocking(large(3)).unwrap();
    assert!(writer.fault().is_none(), "a record that fits ends the fault");
    let stored = writer.store().unwrap().get(id).unwrap().unwrap();
    assert_eq!(stored.arguments["blob"].as_str().map(str::len), Some(256 * 1024));
    drop(writer);
    assert_eq!(count(&path), 2, "the refused row left nothing");
    integrity_ok(&path);
}
