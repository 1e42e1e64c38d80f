//! Store-level tests: the writer and a reader on the same database, as the gateway and the viewer
//! use them.

use std::collections::HashSet;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rstest::rstest;
use serde_json::json;

use crate::{
    AuditError, AuditFilter, AuditRow, AuditStore, AuditWriter, DecidedBy, Decision, NewDecision, Outcome, REDACTED,
};

/// Bound for every wait on a callback: far above any real commit, so hitting it means a lost reply.
pub(crate) const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn sample(server: &str, tool: &str, decision: Decision, time_ms: i64) -> NewDecision {
    NewDecision {
        method: crate::Method::ToolsCall,
        time_ms,
        session: "sess-1".to_owned(),
        client_name: Some("claude-code".to_owned()),
        client_version: Some("1.0.0".to_owned()),
        server: server.to_owned(),
        tool: tool.to_owned(),
        arguments: json!({ "path": format!("/srv/{tool}"), "n": time_ms }),
        arguments_digest: format!("sha256:{time_ms}"),
        decision,
        decided_by: DecidedBy::Policy,
        rule: Some(format!("tools.{tool}")),
        reason: None,
        wait_ms: None,
        request_id: Some(time_ms.to_string()),
        arguments_text: None,
        original_arguments: None,
        extra_redact_keys: Vec::new(),
    }
}

fn memory() -> (AuditWriter, AuditStore) {
    let writer = AuditWriter::open_in_memory().unwrap();
    let store = writer.store().unwrap();
    (writer, store)
}

fn ids(rows: &[AuditRow]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

#[test]
fn record_then_query_roundtrips_every_column_with_arguments_redacted() {
    let (writer, store) = memory();
    let mut row = sample("github", "create_issue", Decision::Approved, 1_700_000_000_123);
    row.decided_by = DecidedBy::User;
    row.client_version = None;
    row.reason = Some("approved once".to_owned());
    row.wait_ms = Some(1234);
    row.request_id = Some("\"req-7\"".to_owned());
    row.arguments = json!({ "title": "bug", "auth": { "token": "ghp_x" }, "X-Tenant": "acme" });
    row.extra_redact_keys = vec!["x-tenant".to_owned()];
    let id = writer.record_blocking(row.clone()).unwrap();

    let expected = AuditRow {
        method: crate::Method::ToolsCall,
        id,
        time_ms: row.time_ms,
        session: row.session.clone(),
        client_name: row.client_name.clone(),
        client_version: None,
        server: "github".to_owned(),
        tool: "create_issue".to_owned(),
        arguments: json!({ "title": "bug", "auth": REDACTED, "X-Tenant": REDACTED }),
        arguments_digest: row.arguments_digest.clone(),
        decision: Decision::Approved,
        decided_by: DecidedBy::User,
        rule: row.rule.clone(),
        reason: Some("approved once".to_owned()),
        wait_ms: Some(1234),
        outcome: None,
        upstream_ms: None,
        request_id: Some("\"req-7\"".to_owned()),
        original_arguments: None,
        answer: None,
        findings: None,
        answer_bytes: None,
    };
    assert_eq!(
        store.query(&AuditFilter::default(), 10).unwrap(),
        vec![expected.clone()]
    );
    assert_eq!(store.get(id).unwrap(), Some(expected));
    assert_eq!(store.get(id + 1).unwrap(), None);
}

#[test]
fn unredacted_secrets_never_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    let mut row = sample("db", "query", Decision::Allowed, 1);
    row.arguments = json!({ "sql": "select 1", "password": "hunter2-unique-marker" });
    writer.record_blocking(row).unwrap();
    drop(writer);
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(wal) = std::fs::read(dir.path().join("audit.db-wal")) {
        bytes.extend(wal);
    }
    let needle = b"hunter2-unique-marker";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "a secret value was written to disk"
    );
}

/// The arguments' own text goes to the database as it came when nothing in it is redacted (no
/// second copy of a large call); with a secret in it, only the redaction is written.
#[test]
fn the_client_text_is_stored_as_sent_only_when_nothing_in_it_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    let stored = |text: &'static str| {
        let mut row = sample("db", "query", Decision::Allowed, 1);
        row.arguments = serde_json::from_str(text).unwrap();
        row.arguments_text = Some(bytes::Bytes::from_static(text.as_bytes()));
        let id = writer.record_blocking(row).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row("SELECT arguments FROM decisions WHERE id = ?1", [id], |r| {
            r.get::<_, String>(0)
        })
        .unwrap()
    };
    let plain = r#"{ "n": 100000000000000000001, "q": "\u0041 b" }"#;
    assert_eq!(stored(plain), plain, "every digit and escape as the client wrote them");
    let secret = r#"{"sql": "select 1", "password": "hunter2-unique-marker"}"#;
    assert_eq!(stored(secret), r#"{"sql":"select 1","password":"[redacted]"}"#);
    let escaped = r#"{"p\u0061ssword": "hunter2-unique-marker"}"#;
    assert_eq!(
        stored(escaped),
        r#"{"password":"[redacted]"}"#,
        "the key as a reader sees it"
    );
    let url = r#"{"u": "https://me:hunter2-unique-marker@example.com/x"}"#;
    assert_eq!(stored(url), r#"{"u":"https://me:[redacted]@example.com/x"}"#);
    drop(writer);
    let mut bytes = std::fs::read(&path).unwrap();
    if let Ok(wal) = std::fs::read(dir.path().join("audit.db-wal")) {
        bytes.extend(wal);
    }
    let needle = b"hunter2-unique-marker";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "a secret value was written to disk"
    );
}

#[test]
fn jsonl_form_uses_the_column_names_in_order() {
    let (writer, store) = memory();
    let id = writer
        .record_blocking(sample("s", "t", Decision::RateLimited, 5))
        .unwrap();
    writer.complete_blocking(id, Outcome::ToolError, 9).unwrap();
    let row = store.get(id).unwrap().unwrap();
    let value = serde_json::to_value(&row).unwrap();
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, AuditRow::COLUMNS);
    assert_eq!(value["decision"], "rate_limited");
    assert_eq!(value["outcome"], "tool_error");
    assert_eq!(serde_json::from_value::<AuditRow>(value).unwrap(), row);
}

/// Rows 1..=8, newest last; the filter tests below name the rows they expect by this index.
fn filter_fixture() -> (AuditWriter, AuditStore, Vec<i64>) {
    let (writer, store) = memory();
    let rows = [
        sample("github", "create_issue", Decision::Allowed, 100),
        sample("github", "create_issue", Decision::Denied, 200),
        sample("github", "delete_repo", Decision::Denied, 300),
        sample("fs", "read_file", Decision::Allowed, 400),
        sample("fs", "write_file", Decision::TimedOut, 500),
        sample("fs", "read_file", Decision::Allowed, 600),
        sample("github", "create_issue", Decision::Approved, 700),
        {
            let mut r = sample("fs", "write_file", Decision::Denied, 800);
            r.arguments = json!({ "path": "/tmp/50%_off\\sale" });
            r
        },
    ];
    let ids = rows.into_iter().map(|r| writer.record_blocking(r).unwrap()).collect();
    (writer, store, ids)
}

#[rstest]
#[case::everything(AuditFilter::default(), &[8, 7, 6, 5, 4, 3, 2, 1])]
#[case::server(AuditFilter { server: Some("fs".into()), ..Default::default() }, &[8, 6, 5, 4])]
#[case::tool(AuditFilter { tool: Some("create_issue".into()), ..Default::default() }, &[7, 2, 1])]
#[case::decision(AuditFilter { decision: Some(Decision::Denied), ..Default::default() }, &[8, 3, 2])]
#[case::server_decision(
    AuditFilter { server: Some("github".into()), decision: Some(Decision::Denied), ..Default::default() },
    &[3, 2]
)]
#[case::server_tool(
    AuditFilter { server: Some("fs".into()), tool: Some("read_file".into()), ..Default::default() },
    &[6, 4]
)]
#[case::since_inclusive(AuditFilter { since_ms: Some(600), ..Default::default() }, &[8, 7, 6])]
#[case::until_exclusive(AuditFilter { until_ms: Some(300), ..Default::default() }, &[2, 1])]
#[case::window(AuditFilter { since_ms: Some(300), until_ms: Some(600), ..Default::default() }, &[5, 4, 3])]
#[case::text(AuditFilter { text: Some("READ_FILE".into()), ..Default::default() }, &[6, 4])]
#[case::text_metacharacters_are_literal(AuditFilter { text: Some("50%_off".into()), ..Default::default() }, &[8])]
#[case::text_percent_alone_is_literal(AuditFilter { text: Some("%".into()), ..Default::default() }, &[8])]
#[case::text_backslash_is_literal(AuditFilter { text: Some(r"off\\sale".into()), ..Default::default() }, &[8])]
#[case::text_backslash_decoded(AuditFilter { text: Some(r"off\sale".into()), ..Default::default() }, &[8])]
#[case::no_match(AuditFilter { server: Some("nope".into()), ..Default::default() }, &[])]
#[case::all_together(
    AuditFilter {
        method: None,
        server: Some("github".into()),
        tool: Some("create_issue".into()),
        decision: Some(Decision::Denied),
        since_ms: Some(100),
        until_ms: Some(701),
        text: Some("create".into()),
        with_findings: false,
        before: Some((700, i64::MAX)),
    },
    &[2]
)]
fn filters_select_the_matching_rows_newest_first(#[case] filter: AuditFilter, #[case] expected: &[usize]) {
    let (_writer, store, row_ids) = filter_fixture();
    let expected: Vec<i64> = expected.iter().map(|n| row_ids[n - 1]).collect();
    assert_eq!(ids(&store.query(&filter, 100).unwrap()), expected, "query({filter:?})");
    assert_eq!(
        store.count(&filter).unwrap(),
        expected.len() as u64,
        "count({filter:?})"
    );
}

/// Rows stored with the client's own text, paths spelled with JSON escapes, newest last.
fn escaped_fixture() -> (AuditWriter, AuditStore, Vec<i64>) {
    let (writer, store) = memory();
    let texts: [&'static str; 5] = [
        r#"{"path":"\u002fhome\u002fu\u002f.ssh\u002fid_ed25519"}"#,
        r#"{"path":"/home/u/.ss\u0068/config"}"#,
        r#"{"path":"/home/u/notes.txt"}"#,
        r#"{"path":"C:\\Users\\u\\.ssh","q":"say \"hi\"\u2028"}"#,
        r#"{"path":"\u002fhome\u002fv\u002f.ssh"}"#,
    ];
    let ids = texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let mut row = sample(
                "fs",
                "read_file",
                Decision::Allowed,
                100 * (i64::try_from(i).unwrap() + 1),
            );
            row.arguments = serde_json::from_str(text).unwrap();
            row.arguments_text = Some(bytes::Bytes::from_static(text.as_bytes()));
            writer.record_blocking(row).unwrap()
        })
        .collect::<Vec<_>>();
    assert!(
        store.stored_arguments_text(ids[0]).contains(r"\u002f"),
        "the fixture must store the client's escapes for the search to have something to decode"
    );
    (writer, store, ids)
}

#[rstest]
#[case::escaped_solidus("/home/u/.ssh", &[2, 1])]
#[case::escaped_letter(".ssh/config", &[2])]
#[case::case_insensitive("/HOME/U/.SSH", &[2, 1])]
#[case::raw_spelling_still_found(r"\u002fhome\u002fu", &[1])]
#[case::plain_row("notes.txt", &[3])]
#[case::decoded_backslashes(r"C:\Users\u\.ssh", &[4])]
#[case::json_backslashes(r"C:\\Users", &[4])]
#[case::decoded_quote_and_separator("say \"hi\"\u{2028}", &[4])]
#[case::across_key_and_value(r#""path":"/home/v"#, &[5])]
#[case::no_match("/home/w", &[])]
fn text_finds_decoded_values_whatever_the_escapes(#[case] text: &str, #[case] expected: &[usize]) {
    let (_writer, store, row_ids) = escaped_fixture();
    let filter = AuditFilter {
        text: Some(text.into()),
        ..AuditFilter::default()
    };
    let expected: Vec<i64> = expected.iter().map(|n| row_ids[n - 1]).collect();
    assert_eq!(ids(&store.query(&filter, 100).unwrap()), expected, "query({text:?})");
    assert_eq!(store.count(&filter).unwrap(), expected.len() as u64, "count({text:?})");
}

#[test]
fn limit_caps_the_page() {
    let (_writer, store, row_ids) = filter_fixture();
    assert_eq!(
        ids(&store.query(&AuditFilter::default(), 3).unwrap()),
        vec![row_ids[7], row_ids[6], row_ids[5]]
    );
    assert!(store.query(&AuditFilter::default(), 0).unwrap().is_empty());
}

/// What the keeper's follower reads of rows other processes commit: the heads after an id,
/// oldest first, bounded.
#[test]
fn heads_after_an_id_come_oldest_first_and_bounded() {
    let (_writer, store, row_ids) = filter_fixture();
    assert_eq!(store.last_id().unwrap(), row_ids[7]);
    let heads = store.heads_after(row_ids[5], 10).unwrap();
    assert_eq!(
        heads.iter().map(|h| h.id).collect::<Vec<_>>(),
        vec![row_ids[6], row_ids[7]]
    );
    assert_eq!(
        (heads[0].server.as_str(), heads[0].tool.as_str(), heads[0].decision),
        ("github", "create_issue", Decision::Approved)
    );
    assert_eq!(store.heads_after(0, 2).unwrap().len(), 2, "bounded");
    assert!(store.heads_after(row_ids[7], 10).unwrap().is_empty());
}

#[test]
fn calls_of_one_tool_come_newest_first_and_bounded() {
    let (_writer, store, row_ids) = filter_fixture();
    assert_eq!(
        ids(&store.calls_of("github", "create_issue", 10).unwrap()),
        vec![row_ids[6], row_ids[1], row_ids[0]]
    );
    assert_eq!(
        ids(&store.calls_of("github", "create_issue", 2).unwrap()),
        vec![row_ids[6], row_ids[1]]
    );
    assert!(
        store.calls_of("fs", "create_issue", 10).unwrap().is_empty(),
        "another server's tool"
    );
}

#[rstest]
#[case::no_filter(AuditFilter::default())]
#[case::server_decision(AuditFilter { server: Some("a".into()), decision: Some(Decision::Denied), ..Default::default() })]
#[case::with_window(AuditFilter { since_ms: Some(2), until_ms: Some(9), ..Default::default() })]
fn keyset_pages_with_equal_times_have_no_duplicates_or_gaps(
    #[case] filter: AuditFilter,
    #[values(1, 3, 7)] page: usize,
) {
    let (writer, store) = memory();
    // Many rows share a time_ms, so the cursor must break ties on id.
    for i in 0..60_i64 {
        let server = if i % 3 == 0 { "b" } else { "a" };
        let decision = if i % 2 == 0 {
            Decision::Denied
        } else {
            Decision::Allowed
        };
        writer.record_blocking(sample(server, "t", decision, i / 7)).unwrap();
    }
    let everything = store.query(&filter, 1000).unwrap();
    assert!(everything.len() > page, "fixture too small for the page size");

    let mut paged = Vec::new();
    let mut cursor = AuditFilter { ..filter.clone() };
    loop {
        let rows = store.query(&cursor, page).unwrap();
        assert!(rows.len() <= page);
        let Some(last) = rows.last() else { break };
        cursor.before = Some(last.cursor());
        paged.extend(rows);
    }
    assert_eq!(
        ids(&paged),
        ids(&everything),
        "paging must visit every row exactly once, in order"
    );
    let unique: HashSet<i64> = ids(&paged).into_iter().collect();
    assert_eq!(unique.len(), paged.len());
    for pair in paged.windows(2) {
        assert!(pair[0].cursor() > pair[1].cursor(), "newest first by (time_ms, id)");
    }
}

#[test]
fn complete_fills_the_outcome_once() {
    let (writer, store) = memory();
    let id = writer.record_blocking(sample("s", "t", Decision::Allowed, 1)).unwrap();
    writer.complete_blocking(id, Outcome::Ok, 42).unwrap();
    let row = store.get(id).unwrap().unwrap();
    assert_eq!((row.outcome, row.upstream_ms), (Some(Outcome::Ok), Some(42)));

    let second = writer.complete_blocking(id, Outcome::Failure, 7);
    assert!(matches!(second, Err(AuditError::AlreadyCompleted { id: got }) if got == id));
    let row = store.get(id).unwrap().unwrap();
    assert_eq!(
        (row.outcome, row.upstream_ms),
        (Some(Outcome::Ok), Some(42)),
        "the first outcome stays"
    );

    assert!(matches!(
        writer.complete_blocking(id + 100, Outcome::Ok, 1),
        Err(AuditError::NoSuchRow { .. })
    ));
}

#[test]
fn fire_and_forget_complete_is_committed_before_later_commands() {
    let (writer, store) = memory();
    let id = writer.record_blocking(sample("s", "t", Decision::Approved, 1)).unwrap();
    writer.complete(id, Outcome::Cancelled, 3, None);
    // The channel is FIFO, so once a later record is committed the completion is too.
    writer.record_blocking(sample("s", "t", Decision::Allowed, 2)).unwrap();
    assert_eq!(store.get(id).unwrap().unwrap().outcome, Some(Outcome::Cancelled));
}

#[test]
fn concurrent_records_from_many_threads_all_commit_and_all_callbacks_fire() {
    const THREADS: i64 = 8;
    const PER_THREAD: i64 = 250;
    let (writer, store) = memory();
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let writer = writer.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    let tx = tx.clone();
                    let row = sample(&format!("srv{t}"), "t", Decision::Allowed, t * 1000 + i);
                    writer.record(row, Box::new(move |result| tx.send((t, i, result)).unwrap()));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let mut ids = HashSet::new();
    for _ in 0..THREADS * PER_THREAD {
        let (t, i, result) = rx.recv_timeout(REPLY_TIMEOUT).expect("every record callback must fire");
        let id = result.unwrap_or_else(|e| panic!("record {t}/{i} failed: {e}"));
        assert!(ids.insert(id), "row ids are unique");
    }
    assert!(rx.try_recv().is_err(), "each callback fires exactly once");
    assert_eq!(
        store.count(&AuditFilter::default()).unwrap(),
        (THREADS * PER_THREAD) as u64
    );
    for t in 0..THREADS {
        let filter = AuditFilter {
            server: Some(format!("srv{t}")),
            ..Default::default()
        };
        assert_eq!(store.count(&filter).unwrap(), PER_THREAD as u64);
    }
}

#[test]
fn dropping_the_last_writer_commits_what_was_queued() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    let (tx, rx) = mpsc::channel();
    for i in 0..500 {
        let tx = tx.clone();
        writer.record(
            sample("s", "t", Decision::Allowed, i),
            Box::new(move |r| tx.send(r.is_ok()).unwrap()),
        );
    }
    drop(writer);
    drop(tx);
    let acked = rx.iter().filter(|ok| *ok).count();
    assert_eq!(
        acked, 500,
        "drop waits for the queue, so every callback has fired with success"
    );
    assert_eq!(
        AuditStore::open(&path).unwrap().count(&AuditFilter::default()).unwrap(),
        500
    );
}

#[test]
fn rows_survive_reopening_the_file_and_migration_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let first = AuditWriter::open(&path).unwrap();
    let id = first.record_blocking(sample("s", "t", Decision::Denied, 10)).unwrap();
    drop(first);

    let second = AuditWriter::open(&path).unwrap();
    assert_eq!(
        user_version(&path),
        crate::migration::SCHEMA_VERSION,
        "reopening must not re-run or skip migrations"
    );
    let store = AuditStore::open(&path).unwrap();
    assert_eq!(
        store.get(id).unwrap().unwrap().decision,
        Decision::Denied,
        "a committed row survives a reopen"
    );
    let id2 = second.record_blocking(sample("s", "t", Decision::Allowed, 11)).unwrap();
    assert!(id2 > id);
    assert_eq!(ids(&store.query(&AuditFilter::default(), 10).unwrap()), vec![id2, id]);
}

#[test]
fn new_file_is_private_and_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let _writer = AuditWriter::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode, 0o600,
            "the audit holds what agents did; only its owner may read it"
        );
    }
}

#[test]
fn a_reader_keeps_a_small_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let writer = AuditWriter::open(&path).unwrap();
    let store = AuditStore::open(&path).unwrap();
    assert_eq!(store.cache_size(), -512, "a reader's page cache is capped at 512 KiB");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let default: i64 = conn.pragma_query_value(None, "cache_size", |r| r.get(0)).unwrap();
    assert_ne!(default, -512, "the cap is the reader's, not SQLite's default");
    drop(writer);
}

fn user_version(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

#[test]
fn a_reader_on_a_missing_file_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let err = AuditStore::open(&path).unwrap_err();
    assert!(matches!(err, AuditError::Missing { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(!path.exists(), "a reader must never create the database");
}

#[test]
fn the_writer_needs_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let err = AuditWriter::open(&dir.path().join("missing").join("audit.db")).unwrap_err();
    assert!(matches!(err, AuditError::Open { .. }), "{err:?}");
}

#[test]
fn a_database_from_a_newer_build_is_refused_by_writer_and_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    drop(AuditWriter::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    assert!(matches!(
        AuditWriter::open(&path),
        Err(AuditError::SchemaTooNew { found: 99, .. })
    ));
    let err = AuditStore::open(&path).unwrap_err();
    assert!(matches!(err, AuditError::SchemaTooNew { found: 99, .. }));
    assert!(err.to_string().contains("restart the MCP client"), "{err}");
}

/// An upgrade while clients run: a data plane of the old version keeps its writer open while the
/// new version migrates the file. A migration that adds (a column with a default, a table) leaves
/// the old writer committing rows the new version reads; only a writer opened afterwards by the
/// old build is refused, with what to do (the test above).
#[test]
fn a_writer_open_before_an_additive_migration_keeps_committing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let old = AuditWriter::open(&path).unwrap();
    old.record_blocking(sample("s", "t", Decision::Allowed, 10)).unwrap();
    let next = crate::migration::SCHEMA_VERSION + 1;
    let newer = rusqlite::Connection::open(&path).unwrap();
    newer
        .execute_batch(&format!(
            "BEGIN IMMEDIATE; ALTER TABLE decisions ADD COLUMN findings TEXT NOT NULL DEFAULT '[]'; \
             CREATE TABLE notes (decision_id INTEGER PRIMARY KEY, note TEXT); \
             PRAGMA user_version = {next}; COMMIT;"
        ))
        .unwrap();
    let id = old.record_blocking(sample("s", "t", Decision::Denied, 11)).unwrap();
    let findings: String = newer
        .query_row("SELECT findings FROM decisions WHERE id = ?1", [id], |r| r.get(0))
        .unwrap();
    assert_eq!(findings, "[]", "the old writer's row, read by the new schema");
    assert_eq!(user_version(&path), next);
    assert!(matches!(AuditWriter::open(&path), Err(AuditError::SchemaTooNew { .. })));
}

/// Whether file modes bind this process (they do not bind root, nor a user with
/// `CAP_DAC_OVERRIDE`): `path` is read-only, so opening it for writing must fail. When they do not,
/// the precondition is unmet ([`crate::test_env::unmet`]) and the caller returns.
#[cfg(unix)]
fn file_modes_are_enforced(path: &Path) -> bool {
    let enforced = std::fs::OpenOptions::new().write(true).open(path).is_err();
    if !enforced {
        crate::test_env::unmet("file modes do not bind this process (it may write a file of mode 0444)");
    }
    enforced
}

#[cfg(unix)]
pub(crate) fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The real permission check, and the refusal must not leave read-only `-wal`/`-shm` files
/// behind that would break the writer after the main file is fixed. As root, run as `nobody`.
#[cfg(unix)]
#[test]
fn a_file_without_write_permission_is_refused_at_open_and_recovers_when_fixed() {
    crate::test_env::as_unprivileged_user(
        "tests::a_file_without_write_permission_is_refused_at_open_and_recovers_when_fixed",
        a_file_without_write_permission_is_refused_at_open_and_recovers_when_fixed_here,
    );
}

#[cfg(unix)]
fn a_file_without_write_permission_is_refused_at_open_and_recovers_when_fixed_here() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    drop(AuditWriter::open(&path).unwrap());
    chmod(&path, 0o444);
    if !file_modes_are_enforced(&path) {
        return;
    }
    let err = AuditWriter::open(&path).unwrap_err();
    assert!(matches!(err, AuditError::ReadOnly { .. }), "{err:?}");
    assert!(err.to_string().contains("read-only"), "{err}");
    chmod(&path, 0o600);
    AuditWriter::open(&path)
        .unwrap()
        .record_blocking(sample("s", "t", Decision::Allowed, 1))
        .expect("once the file is writable again, records must succeed");
}

/// Regression: read-only `-wal`/`-shm` files (left by another program that opened the database
/// while it was read-only) made `open` succeed and then every record fail. Now `open` says so.
/// As root, run as `nobody`.
#[cfg(unix)]
#[test]
fn leftover_read_only_wal_files_are_reported_at_open() {
    crate::test_env::as_unprivileged_user(
        "tests::leftover_read_only_wal_files_are_reported_at_open",
        leftover_read_only_wal_files_are_reported_at_open_here,
    );
}

#[cfg(unix)]
fn leftover_read_only_wal_files_are_reported_at_open_here() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    drop(AuditWriter::open(&path).unwrap());
    chmod(&path, 0o444);
    if !file_modes_are_enforced(&path) {
        return;
    }
    {
        // Any reader does this: SQLite creates the -wal/-shm with the main file's mode and, being
        // read-only, cannot remove them on close.
        let conn = rusqlite::Connection::open(&path).unwrap();
        let _: i64 = conn
            .query_row("SELECT count(*) FROM decisions", [], |r| r.get(0))
            .unwrap();
    }
    chmod(&path, 0o600);
    let shm = dir.path().join("audit.db-shm");
    assert!(shm.exists(), "fixture: a read-only -shm is left behind");

    let err = AuditWriter::open(&path).unwrap_err();
    assert!(matches!(err, AuditError::ReadOnly { .. }), "{err:?}");
    assert!(
        err.to_string().contains("-shm"),
        "the message names the files to fix: {err}"
    );

    chmod(&shm, 0o600);
    let wal = dir.path().join("audit.db-wal");
    if wal.exists() {
        chmod(&wal, 0o600);
    }
    AuditWriter::open(&path)
        .unwrap()
        .record_blocking(sample("s", "t", Decision::Allowed, 1))
        .unwrap();
}

/// Every filter the viewer offers must walk an index in keyset order. A full sort ("TEMP B-TREE")
/// would read every matching row to return 100, which on a million rows misses the 20 ms target.
#[rstest]
#[case::no_filter(AuditFilter::default(), "decisions_time")]
#[case::server(AuditFilter { server: Some("s".into()), ..Default::default() }, "decisions_server_time")]
#[case::server_decision(
    AuditFilter { server: Some("s".into()), decision: Some(Decision::Denied), ..Default::default() },
    "decisions_server_decision"
)]
#[case::server_tool(
    AuditFilter { server: Some("s".into()), tool: Some("t".into()), ..Default::default() },
    "decisions_server_tool"
)]
#[case::decision(AuditFilter { decision: Some(Decision::Denied), ..Default::default() }, "decisions_decision")]
#[case::since(AuditFilter { since_ms: Some(1), until_ms: Some(2), ..Default::default() }, "decisions_time")]
#[case::text(AuditFilter { text: Some("x".into()), ..Default::default() }, "decisions_time")]
fn filtered_queries_use_an_index_without_a_sort(
    #[case] filter: AuditFilter,
    #[case] index: &str,
    #[values(false, true)] with_cursor: bool,
) {
    let (writer, store) = memory();
    // A few rows so the planner is not looking at an empty table.
    for i in 0..50 {
        writer
            .record_blocking(sample(if i % 2 == 0 { "s" } else { "r" }, "t", Decision::Denied, i))
            .unwrap();
    }
    let filter = AuditFilter {
        before: with_cursor.then_some((30, 30)),
        ..filter
    };
    let plan = store.query_plan(&filter).unwrap().join("\n");
    assert!(
        plan.contains(&format!("USING INDEX {index}")) || plan.contains(&format!("USING COVERING INDEX {index}")),
        "{filter:?} should use {index}; plan:\n{plan}"
    );
    assert!(!plan.contains("TEMP B-TREE"), "{filter:?} must not sort; plan:\n{plan}");
}

/// The gateway shares these across tokio tasks and wraps the error in its own.
#[test]
fn handles_and_errors_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<AuditWriter>();
    send_sync::<AuditStore>();
    send_sync::<AuditError>();
    send_sync::<AuditRow>();
}

/// "What did my agent read?": rows keep their kind of request, and a filter on it finds them.
#[test]
fn rows_keep_their_method_and_the_filter_finds_each_kind() {
    let (writer, store) = memory();
    writer
        .record_blocking(sample("fs", "write_file", Decision::Allowed, 1))
        .unwrap();
    let read = NewDecision {
        method: crate::Method::ResourcesRead,
        tool: "file:///home/u/.ssh/id_ed25519".to_owned(),
        ..sample("fs", "x", Decision::Denied, 2)
    };
    writer.record_blocking(read).unwrap();
    let only = |method| AuditFilter {
        method: Some(method),
        ..AuditFilter::default()
    };
    let reads = store.query(&only(crate::Method::ResourcesRead), 10).unwrap();
    assert_eq!(reads.len(), 1);
    assert_eq!(
        (reads[0].method, reads[0].tool.as_str()),
        (crate::Method::ResourcesRead, "file:///home/u/.ssh/id_ed25519")
    );
    let calls = store.query(&only(crate::Method::ToolsCall), 10).unwrap();
    assert_eq!(
        calls.iter().map(|r| r.tool.as_str()).collect::<Vec<_>>(),
        ["write_file"]
    );
    assert!(store.query(&only(crate::Method::PromptsGet), 10).unwrap().is_empty());
    let line = crate::export::jsonl_row(&reads[0]);
    assert!(line.contains(r#""method":"resources/read""#), "{line}");
}

/// What came back is kept beside the outcome, read back on the row (`answer`, `findings`,
/// `answer_bytes`), and "answers with findings" selects only rows whose answer had some.
#[test]
fn an_answer_is_kept_with_the_outcome_and_filtered_on_its_findings() {
    let (writer, store) = memory();
    let clean = writer
        .record_blocking(sample("s", "fetch", Decision::Allowed, 10))
        .unwrap();
    let found = writer
        .record_blocking(sample("s", "fetch", Decision::Allowed, 20))
        .unwrap();
    let none = writer
        .record_blocking(sample("s", "fetch", Decision::Allowed, 30))
        .unwrap();
    let finding = crate::AnswerFinding {
        kind: "secret".into(),
        action: "flag".into(),
        location: crate::FindingLocation {
            path: "/content/0/text".into(),
            offset: 4,
            len: 20,
        },
        what: "AWS access key".into(),
        excerpt: "key [redacted]".into(),
        mark: Some((4, 10)),
    };
    let record = |findings: Vec<crate::AnswerFinding>| crate::AnswerRecord {
        bytes: 120,
        excerpt: "key [redacted]".into(),
        findings,
    };
    writer.complete_with_answer(clean, Outcome::Ok, 1, record(Vec::new()));
    writer.complete_with_answer(found, Outcome::Ok, 2, record(vec![finding.clone()]));
    writer.complete_blocking(none, Outcome::Ok, 3).unwrap();
    let row = store.get(found).unwrap().unwrap();
    assert_eq!(
        (
            row.answer.as_deref(),
            row.findings.as_deref(),
            row.answer_bytes,
            row.outcome
        ),
        (
            Some("key [redacted]"),
            Some(&[finding][..]),
            Some(120),
            Some(Outcome::Ok)
        )
    );
    let clean_row = store.get(clean).unwrap().unwrap();
    assert_eq!(clean_row.findings.as_deref(), Some(&[][..]));
    let none_row = store.get(none).unwrap().unwrap();
    assert_eq!((none_row.answer, none_row.findings), (None, None));
    let with = AuditFilter {
        with_findings: true,
        ..Default::default()
    };
    assert_eq!(ids(&store.query(&with, 10).unwrap()), vec![found]);
    assert_eq!(store.count(&with).unwrap(), 1);
    let line = crate::export::jsonl(&store.query(&with, 10).unwrap());
    let json: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(json["findings"][0]["kind"], "secret");
    assert_eq!(json["findings"][0]["location"]["path"], "/content/0/text");
    assert_eq!(json["answer"], "key [redacted]");
}
