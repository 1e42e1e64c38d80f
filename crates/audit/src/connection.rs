//! Where the database lives and how connections to it are opened and configured.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::AuditError;
use crate::migration;

/// How long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The writer checkpoints by itself only when the log reaches this many pages (~40 MiB); normally
/// the checkpoint thread has reset it long before.
const WAL_BACKSTOP_PAGES: i64 = 10_000;

/// The page size of a database this build creates. A commit writes every page it changed to the
/// log whole (a frame per page, checksummed), and a decision changes about seven pages (the
/// table's leaf, one leaf per index, the outcome's leaf), each a few hundred bytes of news: with
/// 1 KiB pages a commit writes ~7 KiB of log instead of ~28 KiB, which is most of its CPU (see
/// `benches/commit_cpu.rs`). An existing database keeps the page size it was created with: in WAL
/// mode it cannot change without a `VACUUM` out of WAL, and a database written by an older build
/// works the same with 4 KiB pages.
pub(crate) const NEW_PAGE_SIZE: i64 = 1024;

/// Statements are cached per connection; the reader has one shape per filter combination.
const STATEMENT_CACHE: usize = 64;

/// A reader's page cache, in KiB (SQLite's default is 2 MiB per connection). Readers serve the
/// viewer's pages of the newest rows and the CLI's queries, which the OS page cache serves as
/// well; a resident app kept each reader's cache filling for weeks as the log grew (the desktop
/// soak's rise). The writer keeps the default: its commits touch the index pages every time.
const READER_CACHE_KIB: i64 = 512;

/// A database the writer and readers can each open their own connection to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    File(PathBuf),
    /// A process-wide named in-memory database (SQLite's `memdb` VFS with a name starting with
    /// `/`). Unlike `:memory:` it can be opened by several connections, with ordinary file
    /// locking, so tests exercise the same writer/reader split as a file. It lives while at least
    /// one connection is open.
    Memory(String),
}

impl Target {
    pub(crate) fn new_memory() -> Target {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Target::Memory(format!("file:/portcullis-audit-{}-{n}?vfs=memdb", std::process::id()))
    }

    /// For error messages.
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            Target::File(path) => path.clone(),
            Target::Memory(uri) => PathBuf::from(uri),
        }
    }

    fn open(&self, flags: OpenFlags) -> rusqlite::Result<Connection> {
        match self {
            Target::File(path) => Connection::open_with_flags(sqlite_path(path), flags),
            Target::Memory(uri) => Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI),
        }
    }

    /// The writer's connection: on a file, through [`crate::wal_batch`] where it is available
    /// (each commit's log frames in one write), else as [`Target::open`].
    fn open_writing(&self, flags: OpenFlags) -> rusqlite::Result<Connection> {
        #[cfg(unix)]
        if let (Target::File(path), Some(vfs)) = (self, crate::wal_batch::vfs()) {
            return Connection::open_with_flags_and_vfs(sqlite_path(path), flags, vfs);
        }
        self.open(flags)
    }

    fn open_error(&self) -> impl FnOnce(rusqlite::Error) -> AuditError + '_ {
        move |source| AuditError::Open {
            path: self.path(),
            source: Arc::new(source),
        }
    }
}

/// The bundled SQLite is built with `SQLITE_USE_URI`, so a relative path spelled `file:…` would be
/// parsed as a URI; `./` keeps it a path.
pub(crate) fn sqlite_path(path: &Path) -> PathBuf {
    if path.is_relative() && path.to_str().is_some_and(|s| s.starts_with("file:")) {
        Path::new(".").join(path)
    } else {
        path.to_path_buf()
    }
}

/// Opens the writer's connection: creates the file if needed, applies the pragmas, refuses a
/// read-only file, and migrates.
pub(crate) fn open_writer(target: &Target) -> Result<Connection, AuditError> {
    if let Target::File(path) = target {
        create_private(path);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = target.open_writing(flags).map_err(target.open_error())?;
    // SQLite silently falls back to read-only when the file's permissions forbid writing. Checked
    // before anything reads the file: the first read creates the `-wal` and `-shm` files, and on a
    // read-only database they would be created read-only too and outlive the fix of the main file.
    if conn.is_readonly("main").map_err(target.open_error())? {
        return Err(read_only(target));
    }
    configure_writer(target, &conn).map_err(target.open_error())?;
    // The main file can be writable while a leftover `-wal` or `-shm` is not, and then every write
    // fails. An empty write transaction finds out now, with the path, instead of at every record.
    conn.execute_batch("BEGIN IMMEDIATE; COMMIT")
        .map_err(|err| match err.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ReadOnly) => read_only(target),
            _ => target.open_error()(err),
        })?;
    migration::migrate(&mut conn).map_err(|err| match err {
        AuditError::Sqlite(source) => AuditError::Open {
            path: target.path(),
            source,
        },
        other => other,
    })?;
    Ok(conn)
}

fn read_only(target: &Target) -> AuditError {
    AuditError::ReadOnly { path: target.path() }
}

fn configure_writer(target: &Target, conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Before anything writes the file (switching to WAL writes its header): only a database with
    // no page yet takes a page size. On any other the pragma would change nothing, and reading
    // `page_count` first keeps that plain.
    let pages: i64 = conn.pragma_query_value(None, "page_count", |row| row.get(0))?;
    if pages == 0 {
        conn.pragma_update(None, "page_size", NEW_PAGE_SIZE)?;
    }
    // WAL: readers never block the writer and a commit appends to the log instead of rewriting
    // pages. With synchronous=NORMAL a commit does not fsync, so it survives a crash of the process
    // (the design's requirement) but the last commits may be lost on power failure.
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if matches!(target, Target::File(_)) && !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(%mode, path = %target.path().display(), "audit database is not in WAL mode; readers will block the writer");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Checkpoints run on their own thread (`checkpoint.rs`) so commits never wait for one. The
    // automatic checkpoint stays as a backstop at a high mark, in case that thread cannot keep up.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_BACKSTOP_PAGES)?;
    Ok(())
}

/// Opens a reader's connection: read-only, and the schema must be this build's.
pub(crate) fn open_reader(target: &Target) -> Result<Connection, AuditError> {
    if let Target::File(path) = target {
        match std::fs::metadata(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(AuditError::Missing { path: path.clone() });
            }
            _ => {}
        }
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = target.open(flags).map_err(target.open_error())?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(target.open_error())?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // A negative cache_size is in KiB rather than pages.
    conn.pragma_update(None, "cache_size", -READER_CACHE_KIB)
        .map_err(target.open_error())?;
    migration::check_current(&conn).map_err(|err| match err {
        AuditError::Sqlite(source) => AuditError::Open {
            path: target.path(),
            source,
        },
        other => other,
    })?;
    Ok(conn)
}

/// The database holds what agents asked tools to do; keep it to its owner. SQLite creates the
/// `-wal` and `-shm` files with the main file's mode, so setting it once here covers them.
/// Best effort: if this fails, SQLite's own open reports the real problem.
#[cfg(unix)]
fn create_private(path: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

#[cfg(not(unix))]
fn create_private(_path: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Decision;
    use crate::store::{AuditFilter, AuditStore};
    use crate::tests::sample;
    use crate::AuditWriter;

    fn page_size(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .pragma_query_value(None, "page_size", |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_new_database_gets_the_small_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        let writer = AuditWriter::open(&path).unwrap();
        writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
        drop(writer);
        assert_eq!(page_size(&path), NEW_PAGE_SIZE);
        // Opened again, it keeps them (and nothing tries to change them).
        AuditWriter::open(&path)
            .unwrap()
            .record_blocking(sample("s", "t", Decision::Allowed, 2))
            .unwrap();
        assert_eq!(page_size(&path), NEW_PAGE_SIZE);
    }

    #[test]
    fn an_empty_file_left_by_a_crash_gets_them_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        std::fs::write(&path, b"").unwrap();
        drop(AuditWriter::open(&path).unwrap());
        assert_eq!(page_size(&path), NEW_PAGE_SIZE);
    }

    /// A database an older build made: 4 KiB pages, the first schema version, WAL, a row in it.
    fn old_database(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "page_size", 4096).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch(migration::MIGRATIONS[0].sql).unwrap();
        conn.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO decisions (time_ms, session, server, tool, arguments, arguments_digest, decision, decided_by, outcome, upstream_ms)
                 VALUES (1, 'old', 's', 't', '{}', 'd', 'allowed', 'policy', 'ok', 7);",
        )
        .unwrap();
    }

    #[test]
    fn an_existing_database_keeps_its_page_size_and_works() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.db");
        old_database(&path);
        let writer = AuditWriter::open(&path).unwrap();
        let id = writer.record_blocking(sample("s", "t", Decision::Denied, 2)).unwrap();
        writer.complete_blocking(id, crate::Outcome::Ok, 3).unwrap();
        drop(writer);
        assert_eq!(page_size(&path), 4096, "an existing database's pages are left alone");
        let store = AuditStore::open(&path).unwrap();
        let rows = store.query(&AuditFilter::default(), 10).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].session, "old", "the old row was migrated, not lost");
        assert_eq!(rows[0].decision, Decision::Denied);
        let integrity: String = Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
    }
}
