//! Forward-only schema migrations, tracked in `PRAGMA user_version`.
//!
//! Migration `n` moves the schema from version `n - 1` to `n`. Each runs in its own
//! `BEGIN IMMEDIATE` transaction together with the `user_version` bump, so a crash leaves the
//! database at a whole version, and two processes opening the same file at once do not both apply
//! it (the second re-reads the version under the write lock and skips). There are no down
//! migrations: a database from a newer build is refused by readers and the writer alike
//! ([`AuditError::SchemaTooNew`]) rather than guessed at.
//!
//! Adding a value to a stored vocabulary (`Decision`, `DecidedBy`, `Outcome`) is also a migration
//! (its SQL may be empty), so an older CLI refuses the file with a clear message instead of failing
//! on the first unknown row.

use rusqlite::{Connection, TransactionBehavior};

use crate::error::AuditError;

/// One step of the schema history.
pub(crate) struct Migration {
    /// The `user_version` after this step.
    pub(crate) version: i64,
    /// A few words for the log.
    pub(crate) name: &'static str,
    pub(crate) sql: &'static str,
}

/// The schema history, oldest first. Append only; never edit a step that has shipped.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "decisions table and viewer indexes",
        // STRICT so a wrong type from a future bug is an error, not a silently coerced value.
        // No CHECK on the vocabulary columns: SQLite cannot alter a CHECK without rebuilding the
        // table, and the Rust enums already guard what is written.
        //
        // Every index ends in (time_ms, id) so that, after the equality columns, rows come out in
        // keyset order: `ORDER BY time_ms DESC, id DESC` with `(time_ms, id) < (?, ?)` is a backwards
        // index range scan with no sort, whatever the page.
        sql: "
        CREATE TABLE decisions (
            id               INTEGER PRIMARY KEY,
            time_ms          INTEGER NOT NULL,
            session          TEXT    NOT NULL,
            client_name      TEXT,
            client_version   TEXT,
            server           TEXT    NOT NULL,
            tool             TEXT    NOT NULL,
            arguments        TEXT    NOT NULL,
            arguments_digest TEXT    NOT NULL,
            decision         TEXT    NOT NULL,
            decided_by       TEXT    NOT NULL,
            rule             TEXT,
            reason           TEXT,
            wait_ms          INTEGER,
            outcome          TEXT,
            upstream_ms      INTEGER,
            request_id       TEXT
        ) STRICT;
        -- no filter, or only time / text filters
        CREATE INDEX decisions_time ON decisions (time_ms DESC, id DESC);
        -- server alone: the two server indexes below would need a sort for this filter
        CREATE INDEX decisions_server_time ON decisions (server, time_ms, id);
        CREATE INDEX decisions_server_decision ON decisions (server, decision, time_ms, id);
        CREATE INDEX decisions_server_tool ON decisions (server, tool, time_ms, id);
        CREATE INDEX decisions_decision ON decisions (decision, time_ms, id);
    ",
    },
    Migration {
        version: 2,
        name: "original arguments of calls approved with edits",
        // NULL for every call that ran as it was asked; `arguments` holds what ran.
        sql: "ALTER TABLE decisions ADD COLUMN original_arguments TEXT;",
    },
    Migration {
        version: 3,
        name: "outcomes in their own table, and the calls view",
        // A call's outcome arrives after its decision row. Filled in by an UPDATE, it made SQLite
        // rewrite the whole row, arguments and all: for a 15 MiB call another two copies of them in
        // the gateway's memory and 15 MiB more in the log. As a row of its own it is a few bytes.
        // `calls` reads as the one table did; readers query it, the writer inserts into the tables.
        sql: "
        CREATE TABLE outcomes (
            id          INTEGER PRIMARY KEY,
            outcome     TEXT    NOT NULL,
            upstream_ms INTEGER NOT NULL
        ) STRICT;
        INSERT INTO outcomes (id, outcome, upstream_ms)
            SELECT id, outcome, coalesce(upstream_ms, 0) FROM decisions WHERE outcome IS NOT NULL;
        ALTER TABLE decisions DROP COLUMN outcome;
        ALTER TABLE decisions DROP COLUMN upstream_ms;
        CREATE VIEW calls AS
            SELECT decisions.*, outcomes.outcome, outcomes.upstream_ms
            FROM decisions LEFT JOIN outcomes ON outcomes.id = decisions.id;
    ",
    },
    Migration {
        version: 4,
        name: "the kind of request decided (method)",
        // Additive with a default: a writer of the previous version (a `connect` started before
        // the upgrade) inserts without naming the column and only ever records tool calls, which
        // is what the default says. `calls` selects `decisions.*`, so it has the column too.
        sql: "ALTER TABLE decisions ADD COLUMN method TEXT NOT NULL DEFAULT 'tools/call';",
    },
    Migration {
        version: 5,
        name: "what came back: answer excerpts and findings",
        // A table of its own, written with the outcome: an answer arrives after its decision, and
        // a row of the decisions table is never rewritten (migration 3). `findings` is a JSON
        // array; `calls` gains the three columns, NULL for requests without a recorded answer.
        sql: "
        CREATE TABLE answers (
            id       INTEGER PRIMARY KEY,
            bytes    INTEGER NOT NULL,
            excerpt  TEXT    NOT NULL,
            findings TEXT    NOT NULL
        ) STRICT;
        DROP VIEW calls;
        CREATE VIEW calls AS
            SELECT decisions.*, outcomes.outcome, outcomes.upstream_ms,
                   answers.excerpt AS answer, answers.findings AS findings, answers.bytes AS answer_bytes
            FROM decisions
            LEFT JOIN outcomes ON outcomes.id = decisions.id
            LEFT JOIN answers ON answers.id = decisions.id;
    ",
    },
];

/// The schema version this build writes and reads.
#[allow(clippy::cast_possible_wrap, reason = "a handful of migrations, far below i64::MAX")]
pub(crate) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database up to [`SCHEMA_VERSION`]. Cheap when it is already there (one pragma read,
/// no write lock), so every open calls it.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), AuditError> {
    let found = user_version(conn)?;
    check_not_newer(found)?;
    for step in MIGRATIONS.iter().filter(|m| m.version > found) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have applied this step while we waited for the write lock.
        let current = user_version(&tx)?;
        check_not_newer(current)?;
        if current >= step.version {
            continue;
        }
        tx.execute_batch(step.sql)?;
        tx.pragma_update(None, "user_version", step.version)?;
        tx.commit()?;
        tracing::info!(
            version = step.version,
            name = step.name,
            "applied audit database migration"
        );
    }
    Ok(())
}

/// For read-only connections, which cannot migrate: the schema must be exactly this build's.
pub(crate) fn check_current(conn: &Connection) -> Result<(), AuditError> {
    let found = user_version(conn)?;
    check_not_newer(found)?;
    if found < SCHEMA_VERSION {
        return Err(AuditError::SchemaTooOld {
            found,
            expected: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn check_not_newer(found: i64) -> Result<(), AuditError> {
    if found > SCHEMA_VERSION {
        return Err(AuditError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn user_version(conn: &Connection) -> Result<i64, AuditError> {
    Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Connection {
        Connection::open_in_memory().unwrap()
    }

    #[test]
    fn versions_are_contiguous_from_one() {
        for (i, step) in MIGRATIONS.iter().enumerate() {
            assert_eq!(
                step.version,
                i64::try_from(i).unwrap() + 1,
                "migration `{}` is out of sequence",
                step.name
            );
        }
    }

    #[test]
    fn migrate_reaches_the_schema_version_and_is_idempotent() {
        let mut conn = memory();
        migrate(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        conn.execute_batch("INSERT INTO decisions (time_ms, session, server, tool, arguments, arguments_digest, decision, decided_by) VALUES (1, 's', 'srv', 't', '{}', 'd', 'allowed', 'policy')")
            .unwrap();
        migrate(&mut conn).unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM decisions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1, "a second migrate must not touch existing rows");
        check_current(&conn).unwrap();
    }

    /// A `connect` started before the upgrade keeps inserting without the column, and only ever
    /// records tool calls: that is what its rows read as.
    #[test]
    fn rows_from_a_writer_that_predates_the_method_column_read_as_tool_calls() {
        let mut conn = memory();
        let tx = conn.transaction().unwrap();
        for step in &MIGRATIONS[..3] {
            tx.execute_batch(step.sql).unwrap();
        }
        tx.pragma_update(None, "user_version", 3).unwrap();
        tx.commit().unwrap();
        let old_insert = "INSERT INTO decisions (time_ms, session, server, tool, arguments, arguments_digest, decision, decided_by) \
             VALUES (1, 's', 'srv', 't', '{}', 'd', 'allowed', 'policy')";
        conn.execute_batch(old_insert).unwrap();
        migrate(&mut conn).unwrap();
        conn.execute_batch(old_insert).unwrap();
        let methods: Vec<String> = conn
            .prepare("SELECT method FROM calls ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(methods, ["tools/call", "tools/call"]);
    }

    #[test]
    fn outcomes_recorded_before_version_3_move_to_their_table() {
        let mut conn = memory();
        let tx = conn.transaction().unwrap();
        for step in &MIGRATIONS[..2] {
            tx.execute_batch(step.sql).unwrap();
        }
        tx.pragma_update(None, "user_version", 2).unwrap();
        tx.commit().unwrap();
        conn.execute_batch(
            "INSERT INTO decisions (id, time_ms, session, server, tool, arguments, arguments_digest, decision, decided_by, outcome, upstream_ms)
                 VALUES (1, 1, 's', 'srv', 't', '{}', 'd', 'allowed', 'policy', 'ok', 42);
             INSERT INTO decisions (id, time_ms, session, server, tool, arguments, arguments_digest, decision, decided_by)
                 VALUES (2, 2, 's', 'srv', 't', '{}', 'd', 'denied', 'policy');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let rows: Vec<(i64, Option<String>, Option<i64>)> = conn
            .prepare("SELECT id, outcome, upstream_ms FROM calls ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows, vec![(1, Some("ok".into()), Some(42)), (2, None, None)]);
        let columns: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('decisions')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            !columns.iter().any(|c| c == "outcome" || c == "upstream_ms"),
            "{columns:?}"
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let mut conn = memory();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        assert!(matches!(migrate(&mut conn), Err(AuditError::SchemaTooNew { .. })));
        assert!(matches!(check_current(&conn), Err(AuditError::SchemaTooNew { .. })));
    }

    #[test]
    fn readers_refuse_an_unmigrated_database() {
        let conn = memory();
        assert!(matches!(
            check_current(&conn),
            Err(AuditError::SchemaTooOld { found: 0, .. })
        ));
    }
}
