//! `portcullis audit` shows agent- and server-chosen text without letting it steer the terminal
//! or a spreadsheet: a row with a hostile tool name, client name and arguments is written with
//! the audit crate's writer, then printed by the real binary as a table, CSV and JSON.

use std::path::Path;
use std::process::{Command, Stdio};

use portcullis_audit::{AuditWriter, DecidedBy, Decision, NewDecision};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");

/// ESC sequences (clear screen, a fake "allowed" line via CR, an OSC 52 clipboard write), a bidi
/// override, and a spreadsheet formula.
const HOSTILE_TOOL: &str = "=HYPERLINK(\"https://evil.example\",\"ok\")\u{1b}[2J\u{202e}exe.txt";
const HOSTILE_CLIENT: &str = "@agent\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const HOSTILE_RULE: &str = "tools.x\rallowed  by policy\u{9b}31m";

fn write_row(data: &Path) {
    std::fs::create_dir_all(data).expect("data dir");
    let writer = AuditWriter::open(&data.join("audit.db")).expect("open audit");
    writer
        .record_blocking(NewDecision {
            method: portcullis_audit::Method::ToolsCall,
            time_ms: 1_700_000_000_000,
            session: "s1".into(),
            client_name: Some(HOSTILE_CLIENT.into()),
            client_version: None,
            server: "fs\u{2066}".into(),
            tool: HOSTILE_TOOL.into(),
            arguments: json!({ "cmd": "echo \u{1b}[31mred\u{202e}", "password": "hunter2" }),
            arguments_digest: "hmac-sha256:00".into(),
            decision: Decision::Denied,
            decided_by: DecidedBy::Policy,
            rule: Some(HOSTILE_RULE.into()),
            reason: Some("-1+1".into()),
            wait_ms: None,
            request_id: Some("1".into()),
            arguments_text: None,
            original_arguments: None,
            extra_redact_keys: Vec::new(),
        })
        .expect("record");
}

fn audit(data: &Path, format: &str) -> String {
    audit_with(data, &["--format", format])
}

fn audit_with(data: &Path, extra: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("audit")
        .args(extra)
        .arg("--data-dir")
        .arg(data)
        .env_remove("PORTCULLIS_HOME")
        .env_remove("PORTCULLIS_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run portcullis");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn assert_nothing_hidden(text: &str) {
    let hidden: Vec<char> = text
        .chars()
        .filter(|c| *c != '\n' && portcullis_audit::neutralize::is_hidden(*c))
        .collect();
    assert!(
        hidden.is_empty(),
        "raw control or bidi characters {hidden:?} in:\n{text}"
    );
}

#[test]
fn the_table_shows_hostile_text_as_visible_escapes() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_row(dir.path());
    let table = audit(dir.path(), "table");
    assert_nothing_hidden(&table);
    let row = table.lines().nth(1).expect("a row under the header");
    assert!(row.contains(r"fs\u{2066}"), "{row}");
    assert!(
        row.contains(r#"=HYPERLINK("https://evil.example","ok")\u{1b}[2J\u{202e}exe.txt"#),
        "{row}"
    );
    assert!(row.contains(r"tools.x\u{d}allowed  by policy\u{9b}31m"), "{row}");
    assert_eq!(
        table.lines().count(),
        2,
        "one header, one row, no injected lines:\n{table}"
    );
}

#[test]
fn csv_cells_cannot_become_formulas_or_terminal_commands() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_row(dir.path());
    let csv = audit(dir.path(), "csv");
    assert_nothing_hidden(&csv);
    let row = csv.lines().nth(1).expect("a row under the header");
    assert!(
        row.contains(r#","'=HYPERLINK(""https://evil.example"",""ok"")\u{1b}[2J\u{202e}exe.txt","#),
        "the formula is quoted text: {row}"
    );
    assert!(row.contains(r",'@agent\u{1b}]52;c;cm0gLXJmIH4=\u{7},"), "{row}");
    assert!(row.contains(",'-1+1,"), "{row}");
    assert!(row.contains(r",tools.x\u{d}allowed  by policy\u{9b}31m,"), "{row}");
    assert!(row.contains(r#""password"":""[redacted]"""#), "{row}");
}

#[test]
fn json_keeps_the_exact_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_row(dir.path());
    let json: Value = serde_json::from_str(&audit(dir.path(), "json")).expect("JSON");
    assert_eq!(json[0]["tool"], HOSTILE_TOOL);
    assert_eq!(json[0]["client_name"], HOSTILE_CLIENT);
    assert_eq!(json[0]["rule"], HOSTILE_RULE);
    let jsonl = audit(dir.path(), "jsonl");
    assert!(!jsonl.contains('\u{1b}'), "ESC is JSON-escaped: {jsonl}");
    let line: Value = serde_json::from_str(jsonl.trim_end()).expect("JSON line");
    assert_eq!(line["tool"], HOSTILE_TOOL);
}

/// Every character a mainstream line reader ends a line at (Python's `str.splitlines`,
/// JavaScript's line terminators).
const LINE_BREAKS: [char; 10] = [
    '\n', '\u{0b}', '\u{0c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// One row per line break, its arguments sent as the client spelled them (stored as sent), plus
/// one whose path is spelled with JSON escapes.
fn write_spelled_rows(data: &Path) -> usize {
    std::fs::create_dir_all(data).expect("data dir");
    let writer = AuditWriter::open(&data.join("audit.db")).expect("open audit");
    let mut texts: Vec<String> = LINE_BREAKS
        .iter()
        .map(|c| serde_json::to_string(&json!({ "q": format!("a{c}b") })).expect("JSON"))
        .collect();
    texts.push(r#"{"path":"\u002fhome\u002fu\u002f.ssh\u002fid_ed25519"}"#.to_owned());
    for (i, text) in texts.iter().enumerate() {
        let time_ms = 1_700_000_000_000 + i64::try_from(i).expect("small");
        writer
            .record_blocking(NewDecision {
                method: portcullis_audit::Method::ToolsCall,
                time_ms,
                session: "s1".into(),
                client_name: None,
                client_version: None,
                server: "fs".into(),
                tool: "read_file".into(),
                arguments: serde_json::from_str(text).expect("JSON"),
                arguments_digest: "hmac-sha256:00".into(),
                decision: Decision::Allowed,
                decided_by: DecidedBy::Policy,
                rule: None,
                reason: Some(format!("line{}break", LINE_BREAKS[i % LINE_BREAKS.len()])),
                wait_ms: None,
                request_id: None,
                arguments_text: Some(bytes::Bytes::from(text.clone())),
                original_arguments: None,
                extra_redact_keys: Vec::new(),
            })
            .expect("record");
    }
    texts.len()
}

#[test]
fn every_row_is_one_line_for_readers_that_split_at_any_line_break() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rows = write_spelled_rows(dir.path());
    for (format, header) in [("jsonl", 0), ("csv", 1)] {
        let out = audit(dir.path(), format);
        let lines: Vec<&str> = out.split(LINE_BREAKS).filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), rows + header, "{format}:\n{out}");
    }
    let json = audit(dir.path(), "json");
    assert!(
        !json.contains(&LINE_BREAKS[7..]),
        "NEL and U+2028/9 are escaped in JSON too"
    );
    let parsed: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(parsed.as_array().map(Vec::len), Some(rows));
}

#[test]
fn text_finds_a_path_whatever_escapes_spelled_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_spelled_rows(dir.path());
    let found = audit_with(dir.path(), &["--format", "jsonl", "--text", "/home/u/.ssh"]);
    let line: Value = serde_json::from_str(found.trim_end()).expect("one JSON line");
    assert_eq!(line["arguments"]["path"], "/home/u/.ssh/id_ed25519");
    assert_eq!(
        audit_with(dir.path(), &["--format", "jsonl", "--text", "/home/v"]).trim(),
        ""
    );
}
