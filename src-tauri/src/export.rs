//! The viewer's export formats; the text is `portcullis_audit::export`'s, the same CSV and JSONL
//! as `portcullis audit --format csv|jsonl`.

use portcullis_audit::{export, AuditRow};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ExportFormat")]
pub enum Format {
    Csv,
    Jsonl,
}

/// One header line (CSV) then one line per row; no trailing newline. The audit crate's
/// formatting, shared with the CLI.
pub fn render(rows: &[AuditRow], format: Format) -> String {
    match format {
        Format::Csv => export::csv(rows),
        Format::Jsonl => export::jsonl(rows),
    }
}
