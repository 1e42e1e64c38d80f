//! The writer's connection writes each commit's log frames with one `pwrite` instead of two per
//! page: a thin VFS over SQLite's own (`unix`) that gathers the appends to the `-wal` file and
//! writes them together when the commit's last frame is complete.
//!
//! Why: SQLite writes a WAL frame as two `pwrite`s (its 24-byte header, then the page), and a
//! decision's commit changes ~7–11 pages, so ~20 system calls, each with the kernel's fixed cost
//! (file lookup, inode lock, page-cache walk, the dirty marking). They were a third of the
//! commit's CPU (`benches/commit_cpu.rs`, `perf`); one call for the same bytes costs a fraction.
//!
//! What stays exactly as it was: the bytes, their offsets, and when a commit is visible. Only
//! contiguous appends are gathered. The commit frame (the frame whose header carries the
//! database size, non-zero only on a commit) ends a gathering: right after its page is appended,
//! everything gathered is written, and that write's result is the result of the commit frame's
//! own write, so a full disk or an I/O error fails the commit as before, before SQLite publishes
//! it in the shared index (the `-shm` header, written after the frames). Nothing gathered is
//! ever held across anything else: every other operation on the log (read, truncate, sync, size,
//! file control, close) writes what is gathered first and fails if that fails, and so do the
//! database file's shared-memory calls (lock, barrier, unmap) and its close, so frames of a
//! transaction that spilled and then rolled back are written (as today: beyond the log's end,
//! ignored) before the write lock is released, never after another writer may have reused the
//! space. A frame whose header says "commit" is written before `COMMIT` returns, so `record`'s
//! callback still runs only once the row is in the file (a crash of the process after that loses
//! nothing; `synchronous=NORMAL` as before for power loss).
//!
//! Only the writer's connection opens files through it ([`VFS_NAME`]); readers and the
//! checkpointer use SQLite's default VFS and see the frames through the same file, after the
//! commit published them. Unix only (the `unix` VFS); elsewhere the writer uses the default VFS.
#![allow(unsafe_code)] // A VFS is C callbacks over raw pointers; each `unsafe` says why it holds.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::{align_of, size_of};
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name the writer opens its connection with.
pub(crate) const VFS_NAME: &CStr = c"portcullis-wal-batch";

/// The most bytes gathered into one write; an append that would pass it writes what is gathered
/// first (a large row's overflow pages go out in pieces of this size). The `unix` VFS writes at
/// most 128 KiB per call (`seekAndWriteFd` masks the length with `0x1ffff`, as no page is larger
/// than 64 KiB): a longer write would be cut short and reported as a full disk.
const MAX_GATHER: usize = 64 * 1024;

/// Size of a WAL frame header: the page number, the database size for a commit frame, salts and
/// checksums (SQLite's file format, `WAL_FRAME_HDRSIZE`).
const FRAME_HEADER: c_int = 24;

/// Set to `0` in the environment, the writer opens with SQLite's default VFS (each frame two
/// writes, as before this module): a switch for measuring the difference, and a way out.
pub(crate) const WAL_BATCH_ENV: &str = "PORTCULLIS_AUDIT_WAL_BATCH";

/// Registers the VFS once per process. `Some(name)` to open the writer with; `None` if it is
/// switched off ([`WAL_BATCH_ENV`]) or the default VFS is not SQLite's `unix` one (or
/// registration failed): the writer then opens with the default VFS, as before.
pub(crate) fn vfs() -> Option<&'static CStr> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let on = std::env::var_os(WAL_BATCH_ENV).is_none_or(|v| v != "0");
    (on && *REGISTERED.get_or_init(register)).then_some(VFS_NAME)
}

fn register() -> bool {
    // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, a static object owned by SQLite
    // that lives for the process (SQLite never unregisters its built-in VFSes by itself).
    let real = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
    if real.is_null() {
        return false;
    }
    // SAFETY: `real` is a valid, static `sqlite3_vfs` (above); its name is a C string.
    let real_ref = unsafe { &*real };
    if real_ref.zName.is_null() || unsafe { CStr::from_ptr(real_ref.zName) } != c"unix" {
        return false;
    }
    let Ok(real_size) = usize::try_from(real_ref.szOsFile) else {
        return false;
    };
    let Ok(size) = c_int::try_from(real_offset() + real_size) else {
        return false;
    };
    // A copy of the real VFS with its file size, name and `xOpen` replaced: its other methods
    // (delete, access, full path, time, randomness, …) ignore the VFS pointer they are given or
    // read only fields copied here. `pAppData` stays the real one's, which only its own `xOpen`
    // reads, and that is called with `real`.
    let shim = Box::new(ffi::sqlite3_vfs {
        szOsFile: size,
        pNext: ptr::null_mut(),
        zName: VFS_NAME.as_ptr(),
        xOpen: Some(open),
        ..*real_ref
    });
    // Leaked: SQLite keeps the pointer for the rest of the process.
    let shim = Box::into_raw(shim);
    REAL.set(RealVfs(real)).ok();
    // SAFETY: `shim` is a valid `sqlite3_vfs` that is never freed; not made the default.
    unsafe { ffi::sqlite3_vfs_register(shim, 0) == ffi::SQLITE_OK }
}

/// The `unix` VFS (a static SQLite object; a pointer only so it can sit in a static).
struct RealVfs(*mut ffi::sqlite3_vfs);
// SAFETY: the VFS object is immutable and thread-safe by SQLite's contract (its methods are
// called from any thread); we only read it and pass it back to SQLite.
unsafe impl Send for RealVfs {}
// SAFETY: as above.
unsafe impl Sync for RealVfs {}
static REAL: OnceLock<RealVfs> = OnceLock::new();

/// What a file opened through this VFS is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The database file: its shared-memory calls and close first write its log's gathering.
    Db,
    /// The `-wal` file: appends are gathered.
    Wal,
    /// Anything else (temporary files): passed through.
    Other,
}

/// The `sqlite3_file` SQLite allocates for a file of this VFS (`szOsFile` bytes): this header,
/// then, at [`real_offset`], the real VFS's own file object.
#[repr(C)]
struct File {
    /// Must be first: SQLite sees a `*mut sqlite3_file`; `pMethods` points at [`METHODS`].
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    role: Role,
    /// Db: its open `-wal` file, if any. Wal: its database file. Both belong to one connection,
    /// so one thread uses them at a time (the writer's connection is `NO_MUTEX` and always used
    /// under `Shared::state`'s lock).
    link: *mut File,
    /// Wal: bytes appended and not yet written, starting at file offset `at`.
    gathered: Vec<u8>,
    at: i64,
    /// Wal: the last append was a commit frame's header; its page completes the commit.
    commit_next: bool,
}

/// Where the real file object starts inside ours.
const fn real_offset() -> usize {
    let align = if align_of::<u64>() > align_of::<File>() {
        align_of::<u64>()
    } else {
        align_of::<File>()
    };
    size_of::<File>().div_ceil(align) * align
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

/// `xOpen`: opens the real file inside ours, then records what it is.
unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(RealVfs(real_vfs)) = REAL.get() else {
        return ffi::SQLITE_ERROR;
    };
    let me = file.cast::<File>();
    // SAFETY: SQLite gives `szOsFile` bytes at `file`, which `register` sized for a `File` and,
    // at `real_offset()`, the real VFS's object; `sqlite3_file` needs pointer alignment, which
    // SQLite's allocations give, and `real_offset` keeps.
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "real_offset() is a multiple of the File's alignment"
    )]
    let real = unsafe { file.cast::<u8>().add(real_offset()).cast::<ffi::sqlite3_file>() };
    // SAFETY: `real_vfs` is the static `unix` VFS; its `xOpen` fills `real` (its own size).
    let rc = unsafe {
        match (**real_vfs).xOpen {
            Some(x) => x(*real_vfs, name, real, flags, out_flags),
            None => ffi::SQLITE_ERROR,
        }
    };
    // SAFETY: `real` was written by the real `xOpen` (its `pMethods` is set, possibly to NULL).
    let real_opened = unsafe { !(*real).pMethods.is_null() };
    let role = if flags & ffi::SQLITE_OPEN_WAL != 0 {
        Role::Wal
    } else if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        Role::Db
    } else {
        Role::Other
    };
    // SAFETY: `me` points at our (uninitialised) header; written whole, nothing read before.
    unsafe {
        ptr::write(
            me,
            File {
                base: ffi::sqlite3_file {
                    // SQLite calls `xClose` iff `pMethods` is set, even when `xOpen` failed:
                    // set when the real file must be closed.
                    pMethods: if real_opened { &raw const METHODS } else { ptr::null() },
                },
                real,
                role,
                link: ptr::null_mut(),
                gathered: Vec::new(),
                at: 0,
                commit_next: false,
            },
        );
    }
    if rc == ffi::SQLITE_OK && role == Role::Wal && !name.is_null() {
        // SAFETY: for a WAL file's name passed to `xOpen`, SQLite documents that
        // `sqlite3_database_file_object` returns the database's `sqlite3_file`, which was opened
        // through this same VFS by the same pager (so it is one of our `File`s) and outlives the
        // log's handle (the pager closes the log first).
        unsafe {
            let db = ffi::sqlite3_database_file_object(name.cast::<c_char>()).cast::<File>();
            if !db.is_null() && ptr::eq((*db).base.pMethods, &raw const METHODS) && (*db).role == Role::Db {
                (*db).link = me;
                (*me).link = db;
            }
        }
    }
    rc
}

/// Our header behind SQLite's pointer.
///
/// # Safety
/// `file` must be a `File` this VFS opened and not yet closed; SQLite guarantees both for the
/// pointers it passes to the methods, and uses a file from one thread at a time.
unsafe fn me<'a>(file: *mut ffi::sqlite3_file) -> &'a mut File {
    // SAFETY: the caller's promise.
    unsafe { &mut *file.cast::<File>() }
}

/// The real file's methods.
///
/// # Safety
/// `f.real` must be open (its `pMethods` set), which holds for every file SQLite calls into.
unsafe fn real_methods(f: &File) -> &'static ffi::sqlite3_io_methods {
    // SAFETY: the caller's promise; the real methods are a static table of the `unix` VFS.
    unsafe { &*(*f.real).pMethods }
}

impl File {
    /// Writes what is gathered (a log's appends). On failure the bytes are dropped: SQLite
    /// treats the failed write as the transaction's failure, and frames not written are frames
    /// nobody will read (they are beyond the last commit SQLite publishes).
    ///
    /// # Safety
    /// `self.real` must be open.
    unsafe fn flush(&mut self) -> c_int {
        if self.gathered.is_empty() {
            return ffi::SQLITE_OK;
        }
        let Ok(amount) = c_int::try_from(self.gathered.len()) else {
            self.gathered.clear();
            return ffi::SQLITE_IOERR_WRITE;
        };
        // SAFETY: `real` is open (caller); the buffer is valid for `amount` bytes.
        let rc = unsafe {
            match real_methods(self).xWrite {
                Some(x) => x(self.real, self.gathered.as_ptr().cast(), amount, self.at),
                None => ffi::SQLITE_IOERR_WRITE,
            }
        };
        self.gathered.clear();
        rc
    }

    /// A database file: writes its log's gathering (before the shared index moves on).
    ///
    /// # Safety
    /// `self` must be open; `link`, when set, is this connection's open log.
    unsafe fn flush_log(&mut self) -> c_int {
        if self.role == Role::Db && !self.link.is_null() {
            // SAFETY: `link` is cleared when the log closes (below), so it is open here, and
            // the same connection's thread is the one calling.
            unsafe { (*self.link).flush() }
        } else {
            ffi::SQLITE_OK
        }
    }

    /// The log's own gathering, before any operation other than an append.
    ///
    /// # Safety
    /// `self` must be open.
    unsafe fn flush_own(&mut self) -> c_int {
        if self.role == Role::Wal {
            // SAFETY: the caller's promise.
            unsafe { self.flush() }
        } else {
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file it opened, once, from the connection's thread.
    let f = unsafe { me(file) };
    // SAFETY: `f` is open until the real close below.
    let flushed = unsafe {
        let own = f.flush_own();
        let log = f.flush_log();
        if own == ffi::SQLITE_OK {
            log
        } else {
            own
        }
    };
    if !f.link.is_null() {
        // SAFETY: the linked file is open (each side clears the other's link when it closes).
        unsafe { (*f.link).link = ptr::null_mut() };
        f.link = ptr::null_mut();
    }
    // SAFETY: the real file is open; closing it is its last use.
    let rc = unsafe {
        match real_methods(f).xClose {
            Some(x) => x(f.real),
            None => ffi::SQLITE_OK,
        }
    };
    // SAFETY: our header was written by `open`; dropped once here (frees the buffer).
    unsafe { ptr::drop_in_place(file.cast::<File>()) };
    if flushed == ffi::SQLITE_OK {
        rc
    } else {
        flushed
    }
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, data: *const c_void, amount: c_int, offset: i64) -> c_int {
    // SAFETY: SQLite's pointer to an open file of ours.
    let f = unsafe { me(file) };
    let Ok(len) = usize::try_from(amount) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    if f.role != Role::Wal {
        // SAFETY: forwarded as given.
        return unsafe { forward_write(f, data, amount, offset) };
    }
    // The previous append was a commit frame's header: this is its page, the commit's last write.
    let completes_commit = f.commit_next;
    let contiguous = !f.gathered.is_empty() && i64::try_from(f.gathered.len()).is_ok_and(|n| f.at + n == offset);
    if !contiguous || f.gathered.len() + len > MAX_GATHER {
        // A rewrite in place (a page written twice in one transaction, a checksum fix-up), the
        // start of a new run, or a full buffer: what was gathered goes first, in order.
        // SAFETY: `f` is open.
        let rc = unsafe { f.flush() };
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        if offset < 0 || len > MAX_GATHER {
            f.commit_next = false;
            // SAFETY: forwarded as given.
            return unsafe { forward_write(f, data, amount, offset) };
        }
        f.at = offset;
    }
    // SAFETY: SQLite passes `amount` readable bytes at `data`.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
    f.gathered.extend_from_slice(bytes);
    // A frame header's bytes 4..8 are the database size after the commit, non-zero only in a
    // commit frame: the page that follows it is the transaction's last write.
    f.commit_next = amount == FRAME_HEADER && bytes[4..8] != [0, 0, 0, 0];
    if completes_commit {
        // SAFETY: `f` is open.
        return unsafe { f.flush() };
    }
    ffi::SQLITE_OK
}

/// # Safety
/// `f` open; `data` valid for `amount` bytes.
unsafe fn forward_write(f: &File, data: *const c_void, amount: c_int, offset: i64) -> c_int {
    // SAFETY: the caller's promise.
    unsafe {
        match real_methods(f).xWrite {
            Some(x) => x(f.real, data, amount, offset),
            None => ffi::SQLITE_IOERR_WRITE,
        }
    }
}

/// Defines a method that writes the log's gathering first (failing if that fails), then calls
/// the real one with the same arguments.
macro_rules! flushing {
    ($name:ident, $field:ident, $missing:expr, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            // SAFETY: SQLite's pointer to an open file of ours.
            let f = unsafe { me(file) };
            // SAFETY: `f` is open.
            let rc = unsafe { f.flush_own() };
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            // SAFETY: forwarded as given to the open real file.
            unsafe {
                match real_methods(f).$field {
                    Some(x) => x(f.real $(, $arg)*),
                    None => $missing,
                }
            }
        }
    };
}

/// Defines a method that passes straight through.
macro_rules! passing {
    ($name:ident, $field:ident, $ret:ty, $missing:expr, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> $ret {
            // SAFETY: SQLite's pointer to an open file of ours.
            let f = unsafe { me(file) };
            // SAFETY: forwarded as given to the open real file.
            unsafe {
                match real_methods(f).$field {
                    Some(x) => x(f.real $(, $arg)*),
                    None => $missing,
                }
            }
        }
    };
}

flushing!(read, xRead, ffi::SQLITE_IOERR_READ, (data: *mut c_void, amount: c_int, offset: i64));
flushing!(truncate, xTruncate, ffi::SQLITE_IOERR_TRUNCATE, (size: i64));
flushing!(sync, xSync, ffi::SQLITE_IOERR_FSYNC, (flags: c_int));
flushing!(file_size, xFileSize, ffi::SQLITE_IOERR_FSTAT, (size: *mut i64));
flushing!(file_control, xFileControl, ffi::SQLITE_NOTFOUND, (op: c_int, arg: *mut c_void));
passing!(lock, xLock, c_int, ffi::SQLITE_OK, (level: c_int));
passing!(unlock, xUnlock, c_int, ffi::SQLITE_OK, (level: c_int));
passing!(check_reserved_lock, xCheckReservedLock, c_int, ffi::SQLITE_OK, (out: *mut c_int));
passing!(sector_size, xSectorSize, c_int, 4096, ());
passing!(device_characteristics, xDeviceCharacteristics, c_int, 0, ());
passing!(shm_map, xShmMap, c_int, ffi::SQLITE_IOERR_SHMMAP, (page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void));
passing!(fetch, xFetch, c_int, ffi::SQLITE_OK, (offset: i64, amount: c_int, out: *mut *mut c_void));
passing!(unfetch, xUnfetch, c_int, ffi::SQLITE_OK, (offset: i64, page: *mut c_void));

/// Shared-memory lock (the write lock's release among them): the log's frames go first.
unsafe extern "C" fn shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    // SAFETY: SQLite's pointer to an open file of ours.
    let f = unsafe { me(file) };
    // SAFETY: `f` is open.
    let rc = unsafe { f.flush_log() };
    if rc != ffi::SQLITE_OK && flags & ffi::SQLITE_SHM_LOCK != 0 {
        // Taking a lock with frames not written: refuse. Releasing one goes ahead (SQLite
        // ignores the result, and a lock must not stay held); the frames were beyond the end.
        return rc;
    }
    // SAFETY: forwarded as given.
    unsafe {
        match real_methods(f).xShmLock {
            Some(x) => x(f.real, offset, n, flags),
            None => ffi::SQLITE_IOERR_SHMLOCK,
        }
    }
}

/// The barrier SQLite puts between the two copies of the shared index header when it publishes
/// a commit: nothing gathered may remain when a commit becomes visible.
unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: SQLite's pointer to an open file of ours.
    let f = unsafe { me(file) };
    // Normally empty here: the commit frame's write wrote everything. A failure here cannot be
    // returned, only logged.
    // SAFETY: `f` is open.
    if unsafe { f.flush_log() } != ffi::SQLITE_OK {
        tracing::error!("audit log frames could not be written at the shared-memory barrier");
    }
    // SAFETY: forwarded.
    unsafe {
        if let Some(x) = real_methods(f).xShmBarrier {
            x(f.real);
        }
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: SQLite's pointer to an open file of ours.
    let f = unsafe { me(file) };
    // SAFETY: `f` is open.
    let flushed = unsafe { f.flush_log() };
    // SAFETY: forwarded.
    let rc = unsafe {
        match real_methods(f).xShmUnmap {
            Some(x) => x(f.real, delete),
            None => ffi::SQLITE_OK,
        }
    };
    if flushed == ffi::SQLITE_OK {
        rc
    } else {
        flushed
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::{Connection, OpenFlags};

    use super::*;

    fn through_shim(path: &Path) -> Connection {
        let vfs = vfs().expect("the unix VFS is the default on this platform");
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs(path, flags, vfs).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
        conn
    }

    /// [`through_shim`] on a database with the tests' table `t` (and an index on `v`, which puts
    /// a second page in every commit, when `indexed`).
    fn shim_with_table(path: &Path, indexed: bool) -> Connection {
        let conn = through_shim(path);
        let index = if indexed { " CREATE INDEX t_v ON t (v);" } else { "" };
        conn.execute_batch(&format!("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);{index}"))
            .unwrap();
        conn
    }

    fn plain(path: &Path) -> Connection {
        Connection::open(path).unwrap()
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    fn integrity(conn: &Connection) -> String {
        conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_commit_is_in_the_file_for_other_connections_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = shim_with_table(&path, true);
        let reader = plain(&path);
        for i in 0..200 {
            writer
                .execute("INSERT INTO t (v) VALUES (?1)", [format!("value {i}")])
                .unwrap();
            assert_eq!(count(&reader), i + 1, "commit {i} not visible to another connection");
        }
        // The log holds the frames, as SQLite wrote them: a reader that replays it from the file
        // alone (a fresh connection after the writer is gone, which recovers the index) agrees.
        drop(writer);
        drop(reader);
        let fresh = plain(&path);
        assert_eq!(count(&fresh), 200);
        assert_eq!(integrity(&fresh), "ok");
    }

    #[test]
    fn a_large_transaction_spilled_to_the_log_and_rolled_back_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = shim_with_table(&path, false);
        // A tiny cache: the transaction's pages are written to the log before it ends.
        writer.pragma_update(None, "cache_size", 10).unwrap();
        writer.execute_batch("BEGIN").unwrap();
        for _ in 0..300 {
            writer
                .execute("INSERT INTO t (v) VALUES (?1)", ["x".repeat(3000)])
                .unwrap();
        }
        writer.execute_batch("ROLLBACK").unwrap();
        writer.execute("INSERT INTO t (v) VALUES ('kept')", []).unwrap();
        // Another writer (as another process would) appends after it, then both commit again.
        let other = through_shim(&path);
        other.execute("INSERT INTO t (v) VALUES ('other')", []).unwrap();
        writer.execute("INSERT INTO t (v) VALUES ('kept 2')", []).unwrap();
        let reader = plain(&path);
        assert_eq!(count(&reader), 3);
        assert_eq!(integrity(&reader), "ok");
        drop((writer, other, reader));
        let fresh = plain(&path);
        assert_eq!(count(&fresh), 3);
        assert_eq!(integrity(&fresh), "ok");
    }

    #[test]
    fn a_commit_of_many_megabytes_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = shim_with_table(&path, false);
        let big = "z".repeat(3 << 20);
        writer.execute("INSERT INTO t (v) VALUES (?1)", [&big]).unwrap();
        drop(writer);
        let fresh = plain(&path);
        let stored: String = fresh.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
        assert!(stored == big, "the row came back different");
        assert_eq!(integrity(&fresh), "ok");
    }

    #[test]
    fn writers_through_it_and_checkpoints_interleave_safely() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        drop(shim_with_table(&path, true));
        let threads: Vec<_> = (0..3)
            .map(|n| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let conn = through_shim(&path);
                    // Small: the log is checkpointed and restarted many times meanwhile.
                    conn.pragma_update(None, "wal_autocheckpoint", 20).unwrap();
                    for i in 0..300 {
                        conn.execute("INSERT INTO t (v) VALUES (?1)", [format!("{n}-{i}")])
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let reader = plain(&path);
        assert_eq!(count(&reader), 900);
        assert_eq!(integrity(&reader), "ok");
    }
}
