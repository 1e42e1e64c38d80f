//! The read side: filtered, newest-first pages of decisions for the viewer and the CLI.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rusqlite::types::Value as SqlValue;
use rusqlite::{params_from_iter, Connection, Row};

use crate::connection::{self, Target};
use crate::error::AuditError;
use crate::record::{AuditRow, Decision, Method};
use crate::search;

/// Which rows to read. Every field narrows the result; the default matches everything.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct AuditFilter {
    /// Exact server name.
    pub server: Option<String>,
    /// Exact tool name (or URI, or prompt name, as the `tool` column holds).
    pub tool: Option<String>,
    /// Exact kind of request.
    pub method: Option<Method>,
    /// Exact decision.
    pub decision: Option<Decision>,
    /// Rows at or after this time (Unix ms, inclusive).
    pub since_ms: Option<i64>,
    /// Rows before this time (Unix ms, exclusive), so adjacent windows do not overlap.
    pub until_ms: Option<i64>,
    /// Substring of the (redacted) arguments, ASCII case-insensitive (as SQL `LIKE`), every
    /// character matching itself. A row matches when it is in the JSON text as the client spelled it, or in the
    /// arguments with every string decoded, whatever escapes the client used: `/home/u/.ssh`
    /// finds `"\u002fhome\u002fu\u002f.ssh"`, `say "hi"` finds `"say \"hi\""` (see `search`).
    pub text: Option<String>,
    /// Only requests whose answer had findings.
    pub with_findings: bool,
    /// Keyset cursor: only rows strictly older than this `(time_ms, id)`, i.e. after it in
    /// newest-first order. Pass the last row's [`AuditRow::cursor`] to get the next page.
    pub before: Option<(i64, i64)>,
}

/// A reader over the audit database with its own read-only connection. `Send + Sync`: queries from
/// several threads take turns on the connection, which is enough for a viewer and a CLI; it
/// never blocks the writer (WAL).
pub struct AuditStore {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for AuditStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditStore").finish_non_exhaustive()
    }
}

/// What [`AuditStore::heads_after`] reads of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowHead {
    pub id: i64,
    pub server: String,
    pub tool: String,
    pub decision: Decision,
    pub method: Method,
}

const COLUMNS: &str = "id, time_ms, session, client_name, client_version, server, tool, arguments, \
     arguments_digest, decision, decided_by, rule, reason, wait_ms, outcome, upstream_ms, request_id, original_arguments, \
     method, answer, findings, answer_bytes";

impl AuditStore {
    /// Opens the database at `path` read-only. A missing file is [`AuditError::Missing`]; the
    /// store never creates one.
    pub fn open(path: &Path) -> Result<AuditStore, AuditError> {
        Self::open_target(&Target::File(path.to_path_buf()))
    }

    pub(crate) fn open_target(target: &Target) -> Result<AuditStore, AuditError> {
        let conn = connection::open_reader(target)?;
        search::register(&conn)?;
        Ok(AuditStore { conn: Mutex::new(conn) })
    }

    /// Up to `limit` rows matching `filter`, newest first (by `time_ms`, then `id`).
    pub fn query(&self, filter: &AuditFilter, limit: usize) -> Result<Vec<AuditRow>, AuditError> {
        let (sql, params) = select_sql(filter, limit);
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(decode(row)?);
        }
        Ok(out)
    }

    /// The latest `limit` calls of one tool of one server, newest first: what a decision about
    /// that tool would have matched (a dry run counts them).
    pub fn calls_of(&self, server: &str, tool: &str, limit: usize) -> Result<Vec<AuditRow>, AuditError> {
        let filter = AuditFilter {
            server: Some(server.to_owned()),
            tool: Some(tool.to_owned()),
            ..AuditFilter::default()
        };
        self.query(&filter, limit)
    }

    /// The row with this id, if there is one.
    pub fn get(&self, id: i64) -> Result<Option<AuditRow>, AuditError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM calls WHERE id = ?1"))?;
        let mut rows = stmt.query([id])?;
        match rows.next()? {
            Some(row) => Ok(Some(decode(row)?)),
            None => Ok(None),
        }
    }

    /// Rows with an id above `after`, oldest first, at most `limit`, read to their heads only
    /// (id, server, tool, decision: never the arguments, which may be megabytes): what a process
    /// that follows the audit announces of rows other processes commit.
    pub fn heads_after(&self, after: i64, limit: usize) -> Result<Vec<RowHead>, AuditError> {
        let conn = self.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT id, server, tool, decision, method FROM decisions WHERE id > ?1 ORDER BY id LIMIT ?2",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = stmt.query(rusqlite::params![after, limit])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let decision: String = row.get(3)?;
            let method: String = row.get(4)?;
            out.push(RowHead {
                id,
                server: row.get(1)?,
                tool: row.get(2)?,
                decision: decision
                    .parse()
                    .map_err(|err| AuditError::invalid(id, "decision", &err))?,
                method: method.parse().map_err(|err| AuditError::invalid(id, "method", &err))?,
            });
        }
        Ok(out)
    }

    /// The highest row id, 0 for an empty log.
    pub fn last_id(&self) -> Result<i64, AuditError> {
        let conn = self.lock();
        let id: Option<i64> = conn.query_row("SELECT max(id) FROM decisions", [], |row| row.get(0))?;
        Ok(id.unwrap_or(0))
    }

    /// How many rows match `filter` (including its `before` cursor).
    pub fn count(&self, filter: &AuditFilter) -> Result<u64, AuditError> {
        let (conditions, params) = where_clause(filter);
        let conn = self.lock();
        // Every filter is on the decision's columns, so the count needs no outcomes.
        let mut stmt = conn.prepare_cached(&format!("SELECT count(*) FROM decisions{conditions}"))?;
        let n: i64 = stmt.query_row(params_from_iter(params), |row| row.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a read-only connection inconsistent.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection's `cache_size` pragma (negative: KiB).
    #[cfg(test)]
    pub(crate) fn cache_size(&self) -> i64 {
        self.lock()
            .pragma_query_value(None, "cache_size", |row| row.get(0))
            .unwrap()
    }

    /// Row `id`'s `arguments` column as stored, byte for byte.
    #[cfg(test)]
    pub(crate) fn stored_arguments_text(&self, id: i64) -> String {
        self.lock()
            .query_row("SELECT arguments FROM decisions WHERE id = ?1", [id], |row| row.get(0))
            .unwrap()
    }

    /// `EXPLAIN QUERY PLAN` of the statement `query` would run, one line per plan step.
    #[cfg(test)]
    pub(crate) fn query_plan(&self, filter: &AuditFilter) -> Result<Vec<String>, AuditError> {
        let (sql, params) = select_sql(filter, 100);
        let conn = self.lock();
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        let details = stmt.query_map(params_from_iter(params), |row| row.get::<_, String>(3))?;
        Ok(details.collect::<Result<_, _>>()?)
    }
}

/// The SQL text depends only on which filters are set, not on their values, so there are few
/// distinct statements and each is prepared once per connection.
fn select_sql(filter: &AuditFilter, limit: usize) -> (String, Vec<SqlValue>) {
    let (conditions, mut params) = where_clause(filter);
    params.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
    let sql = format!("SELECT {COLUMNS} FROM calls{conditions} ORDER BY time_ms DESC, id DESC LIMIT ?");
    (sql, params)
}

/// ` WHERE …` (or nothing) and its parameters, in order. Every condition is an equality or a range
/// on indexed columns except `text`, which is checked on rows the index walk yields.
fn where_clause(filter: &AuditFilter) -> (String, Vec<SqlValue>) {
    let mut conditions: Vec<&str> = Vec::new();
    let mut params = Vec::new();
    if let Some(method) = filter.method {
        conditions.push("method = ?");
        params.push(SqlValue::Text(method.as_str().to_owned()));
    }
    if let Some(server) = &filter.server {
        conditions.push("server = ?");
        params.push(SqlValue::Text(server.clone()));
    }
    if let Some(tool) = &filter.tool {
        conditions.push("tool = ?");
        params.push(SqlValue::Text(tool.clone()));
    }
    if let Some(decision) = filter.decision {
        conditions.push("decision = ?");
        params.push(SqlValue::Text(decision.as_str().to_owned()));
    }
    if let Some(since) = filter.since_ms {
        conditions.push("time_ms >= ?");
        params.push(SqlValue::Integer(since));
    }
    if let Some(until) = filter.until_ms {
        conditions.push("time_ms < ?");
        params.push(SqlValue::Integer(until));
    }
    if let Some((time_ms, id)) = filter.before {
        // A row value comparison is what lets SQLite turn the cursor into an index range.
        conditions.push("(time_ms, id) < (?, ?)");
        params.push(SqlValue::Integer(time_ms));
        params.push(SqlValue::Integer(id));
    }
    if filter.with_findings {
        conditions.push("id IN (SELECT id FROM answers WHERE findings <> '[]')");
    }
    if let Some(text) = &filter.text {
        conditions.push(search::CONDITION);
        params.push(SqlValue::Text(text.clone()));
    }
    if conditions.is_empty() {
        (String::new(), params)
    } else {
        (format!(" WHERE {}", conditions.join(" AND ")), params)
    }
}

/// Reads a row selected with [`COLUMNS`], in that order.
fn decode(row: &Row<'_>) -> Result<AuditRow, AuditError> {
    let id: i64 = row.get(0)?;
    let arguments: String = row.get(7)?;
    let decision: String = row.get(9)?;
    let decided_by: String = row.get(10)?;
    let outcome: Option<String> = row.get(14)?;
    let method: String = row.get(18)?;
    Ok(AuditRow {
        id,
        time_ms: row.get(1)?,
        session: row.get(2)?,
        client_name: row.get(3)?,
        client_version: row.get(4)?,
        server: row.get(5)?,
        method: method.parse().map_err(|err| AuditError::invalid(id, "method", &err))?,
        tool: row.get(6)?,
        arguments: serde_json::from_str(&arguments).map_err(|err| AuditError::InvalidRow {
            id,
            column: "arguments",
            detail: err.to_string(),
        })?,
        arguments_digest: row.get(8)?,
        decision: decision
            .parse()
            .map_err(|err| AuditError::invalid(id, "decision", &err))?,
        decided_by: decided_by
            .parse()
            .map_err(|err| AuditError::invalid(id, "decided_by", &err))?,
        rule: row.get(11)?,
        reason: row.get(12)?,
        wait_ms: row.get(13)?,
        outcome: outcome
            .map(|o| o.parse())
            .transpose()
            .map_err(|err| AuditError::invalid(id, "outcome", &err))?,
        upstream_ms: row.get(15)?,
        request_id: row.get(16)?,
        original_arguments: json_column(row, 17, id, "original_arguments")?,
        answer: row.get(19)?,
        findings: json_column(row, 20, id, "findings")?,
        answer_bytes: row.get(21)?,
    })
}

/// A nullable column holding JSON text, read into `T`.
fn json_column<T: serde::de::DeserializeOwned>(
    row: &Row<'_>,
    index: usize,
    id: i64,
    column: &'static str,
) -> Result<Option<T>, AuditError> {
    row.get::<_, Option<String>>(index)?
        .map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|err| AuditError::InvalidRow {
            id,
            column,
            detail: err.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_shape_depends_only_on_which_filters_are_set() {
        let a = AuditFilter {
            server: Some("a".into()),
            before: Some((1, 2)),
            ..Default::default()
        };
        let b = AuditFilter {
            server: Some("b".into()),
            before: Some((3, 4)),
            ..Default::default()
        };
        assert_eq!(select_sql(&a, 10).0, select_sql(&b, 99).0);
    }
}
