//! Audit rows as file text for the viewer's export: the same CSV and JSONL as
//! `portcullis audit --format csv|jsonl` (column names of `AuditRow::COLUMNS`).

use portcullis_audit::AuditRow;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Csv,
    Jsonl,
}

/// One header line (CSV) then one line per row; no trailing newline.
pub fn render(rows: &[AuditRow], format: Format) -> String {
    let lines: Vec<String> = match format {
        Format::Jsonl => rows
            .iter()
            .filter_map(|r| serde_json::to_string(r).ok())
            .map(|l| escape_line_separators(&l))
            .collect(),
        Format::Csv => std::iter::once(AuditRow::COLUMNS.join(","))
            .chain(rows.iter().map(csv_line))
            .collect(),
    };
    lines.join("\n")
}

fn csv_line(row: &AuditRow) -> String {
    let value = serde_json::to_value(row).unwrap_or_default();
    AuditRow::COLUMNS
        .iter()
        .map(|c| match value.get(*c) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => csv_cell(s),
            Some(other) => csv_cell(&other.to_string()),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Line readers that honour Unicode line breaks would split a row at U+2028/U+2029.
fn escape_line_separators(line: &str) -> String {
    line.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;
    use portcullis_audit::{DecidedBy, Decision};

    fn row() -> AuditRow {
        AuditRow {
            id: 7,
            time_ms: 1_700_000_000_000,
            session: "s".into(),
            client_name: Some("claude, desktop".into()),
            client_version: None,
            server: "fs".into(),
            tool: "write_file".into(),
            arguments: serde_json::json!({"path": "/tmp/a\u{2028}b"}),
            arguments_digest: "d".into(),
            decision: Decision::Approved,
            decided_by: DecidedBy::User,
            rule: Some("default".into()),
            reason: None,
            wait_ms: Some(1200),
            outcome: None,
            upstream_ms: None,
            request_id: Some("1".into()),
        }
    }

    #[test]
    fn csv_has_the_cli_columns_and_quotes_what_needs_it() {
        let text = render(&[row()], Format::Csv);
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), AuditRow::COLUMNS.join(","));
        let line = lines.next().unwrap();
        assert!(
            line.starts_with("7,1700000000000,s,\"claude, desktop\",,fs,write_file,"),
            "{line}"
        );
        assert!(line.contains("approved,user,default,,1200,,,1"), "{line}");
    }

    #[test]
    fn jsonl_is_one_object_per_line() {
        let text = render(&[row(), row()], Format::Jsonl);
        assert_eq!(text.lines().count(), 2);
        let back: AuditRow = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(back, row());
    }
}
