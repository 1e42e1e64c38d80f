//! A statement whose text parameters SQLite reads where they are, for rows with large arguments.
//!
//! rusqlite binds every text as `SQLITE_TRANSIENT`: SQLite copies it before the statement runs.
//! For a 15 MiB argument that copy sits beside the message the gateway still holds (it forwards
//! it after the commit) and the record SQLite builds from the row: three copies at the commit,
//! the gateway's peak for such a call. Bound as `SQLITE_STATIC`, SQLite reads the caller's bytes
//! while it builds the record, and the copy is never made.
//!
//! `SQLITE_STATIC` is a promise that the bytes outlive the statement's use of them. [`execute`]
//! keeps it by construction: it borrows the parameters for its whole body, and the statement is
//! finalized (by [`Stmt`]'s `Drop`) before it returns, on every path.
#![allow(unsafe_code)] // The sqlite3 C calls below; every `unsafe` block says why it holds.

use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use rusqlite::{ffi, Connection};

/// One parameter, borrowed for the statement's run.
pub(super) enum Param<'a> {
    Int(i64),
    Text(&'a str),
    Null,
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(text: Option<&'a str>) -> Self {
        text.map_or(Param::Null, Param::Text)
    }
}

impl From<Option<i64>> for Param<'_> {
    fn from(n: Option<i64>) -> Self {
        n.map_or(Param::Null, Param::Int)
    }
}

/// Prepares `sql`, binds `params` (`?1`, `?2`, … in order) without copying their text, runs it
/// to completion and finalizes it. For statements that return no rows (an `INSERT`).
pub(super) fn execute(conn: &Connection, sql: &str, params: &[Param<'_>]) -> rusqlite::Result<()> {
    // SAFETY: the handle is used only on this thread, while `conn` is borrowed, and not closed.
    let db = unsafe { conn.handle() };
    let stmt = Stmt::prepare(db, sql)?;
    for (index, param) in params.iter().enumerate() {
        let index = c_int::try_from(index + 1).map_err(|_| misuse("too many parameters"))?;
        stmt.bind(index, param)?;
    }
    stmt.run()
}

/// A prepared statement, finalized when dropped.
struct Stmt {
    db: *mut ffi::sqlite3,
    raw: *mut ffi::sqlite3_stmt,
}

impl Stmt {
    fn prepare(db: *mut ffi::sqlite3, sql: &str) -> rusqlite::Result<Stmt> {
        let len = c_int::try_from(sql.len()).map_err(|_| misuse("statement too long"))?;
        let mut raw = ptr::null_mut();
        // SAFETY: `db` is an open connection; `sql` is valid for `len` bytes (no NUL needed with
        // an explicit length); `raw` receives the statement or stays null on error.
        let rc =
            unsafe { ffi::sqlite3_prepare_v2(db, sql.as_ptr().cast::<c_char>(), len, &raw mut raw, ptr::null_mut()) };
        if rc != ffi::SQLITE_OK || raw.is_null() {
            return Err(error(db, if rc == ffi::SQLITE_OK { ffi::SQLITE_MISUSE } else { rc }));
        }
        Ok(Stmt { db, raw })
    }

    fn bind(&self, index: c_int, param: &Param<'_>) -> rusqlite::Result<()> {
        let text_len = match *param {
            Param::Text(text) => c_int::try_from(text.len()).map_err(|_| misuse("text too long"))?,
            _ => 0,
        };
        // SAFETY: `self.raw` is a live statement and `index` one of its parameters. A text is
        // bound `SQLITE_STATIC`: it is borrowed by `execute` for longer than this statement
        // lives (see the module doc); its length is given, so no NUL terminator is read.
        let rc = unsafe {
            match *param {
                Param::Int(n) => ffi::sqlite3_bind_int64(self.raw, index, n),
                Param::Null => ffi::sqlite3_bind_null(self.raw, index),
                Param::Text(text) => ffi::sqlite3_bind_text(
                    self.raw,
                    index,
                    text.as_ptr().cast::<c_char>(),
                    text_len,
                    ffi::SQLITE_STATIC(),
                ),
            }
        };
        self.check(rc)
    }

    fn run(&self) -> rusqlite::Result<()> {
        // SAFETY: a live statement with every parameter bound.
        match unsafe { ffi::sqlite3_step(self.raw) } {
            ffi::SQLITE_DONE => Ok(()),
            ffi::SQLITE_ROW => Err(misuse("the statement returned rows")),
            rc => Err(error(self.db, rc)),
        }
    }

    fn check(&self, rc: c_int) -> rusqlite::Result<()> {
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(error(self.db, rc))
        }
    }
}

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: finalized once, here; nothing uses `raw` after. Its result repeats the last
        // step's error, already reported.
        unsafe { ffi::sqlite3_finalize(self.raw) };
    }
}

/// The connection's error for `rc`, as rusqlite reports errors (so the writer classifies a full
/// disk or a busy database the same way whichever path the row took).
fn error(db: *mut ffi::sqlite3, rc: c_int) -> rusqlite::Error {
    // SAFETY: `db` is open; the extended code and message describe its most recent failure,
    // and the message is copied out before any other call on the connection.
    let (code, message) = unsafe {
        let code = ffi::sqlite3_extended_errcode(db);
        let message = ffi::sqlite3_errmsg(db);
        let message = (!message.is_null()).then(|| CStr::from_ptr(message).to_string_lossy().into_owned());
        (if code == ffi::SQLITE_OK { rc } else { code }, message)
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), message)
}

fn misuse(why: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_MISUSE), Some(why.to_owned()))
}
