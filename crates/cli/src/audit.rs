//! `portcullis audit`: recorded decisions, newest first, as a table, JSON, JSON lines or CSV.
//! Reads `audit.db` directly; no running gateway is needed.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use portcullis_audit::{AuditFilter, AuditRow, AuditStore, Decision};

use crate::exit::{Failure, Outcome};
use crate::policy::write_stdout;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    server: Option<String>,
    #[arg(long)]
    tool: Option<String>,
    /// allowed, denied, hidden, rate_limited, approved, rejected, timed_out, cancelled, failed
    #[arg(long)]
    decision: Option<String>,
    /// Only rows newer than this, e.g. 10m, 2h, 7d
    #[arg(long, value_name = "DUR")]
    since: Option<String>,
    /// Substring over the (redacted) arguments
    #[arg(long)]
    text: Option<String>,
    #[arg(long, default_value_t = 50)]
    limit: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
    Jsonl,
    Csv,
}

pub fn run(data_dir: &Path, args: &Args) -> Outcome {
    let filter = filter(args)?;
    let db = data_dir.join(portcullis_gateway::AUDIT_FILE);
    if !db.exists() {
        return Err(Failure::user(format!(
            "no audit database at {} (has a gateway run with this data dir?)",
            db.display()
        )));
    }
    let store = AuditStore::open(&db).map_err(Failure::user)?;
    let rows = store.query(&filter, args.limit).map_err(Failure::user)?;
    let text = match args.format {
        Format::Table => table(&rows),
        Format::Json => serde_json::to_string_pretty(&rows).map_err(Failure::user)?,
        Format::Jsonl => rows
            .iter()
            .filter_map(|r| serde_json::to_string(r).ok())
            .map(|l| escape_line_separators(&l))
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Csv => csv(&rows),
    };
    if !text.is_empty() {
        write_stdout(&text);
    }
    Ok(())
}

fn filter(args: &Args) -> Result<AuditFilter, Failure> {
    let decision = args
        .decision
        .as_deref()
        .map(str::parse::<Decision>)
        .transpose()
        .map_err(Failure::user)?;
    let since_ms = match &args.since {
        Some(text) => {
            let ago = humantime::parse_duration(text)
                .map_err(|e| Failure::user(format!("--since {text:?}: {e} (try 10m, 2h, 7d)")))?;
            Some(now_ms().saturating_sub(i64::try_from(ago.as_millis()).unwrap_or(i64::MAX)))
        }
        None => None,
    };
    Ok(AuditFilter {
        server: args.server.clone(),
        tool: args.tool.clone(),
        decision,
        since_ms,
        text: args.text.clone(),
        ..AuditFilter::default()
    })
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn time_text(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}

fn table(rows: &[AuditRow]) -> String {
    let header = ["TIME", "SERVER", "TOOL", "DECISION", "BY", "RULE", "OUTCOME", "MS"].map(str::to_owned);
    let mut lines: Vec<[String; 8]> = vec![header];
    for r in rows {
        lines.push([
            time_text(r.time_ms),
            r.server.clone(),
            r.tool.clone(),
            r.decision.to_string(),
            r.decided_by.to_string(),
            r.rule.clone().unwrap_or_default(),
            r.outcome.map(|o| o.to_string()).unwrap_or_default(),
            r.upstream_ms.map(|m| m.to_string()).unwrap_or_default(),
        ]);
    }
    crate::table::render(&lines)
}

/// JSON allows raw U+2028/U+2029 inside strings, but line readers that honour Unicode line
/// breaks would split a row there; escape them so one row stays one line.
fn escape_line_separators(line: &str) -> String {
    line.replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
}

fn csv(rows: &[AuditRow]) -> String {
    let mut out = vec![AuditRow::COLUMNS.join(",")];
    for r in rows {
        let value = serde_json::to_value(r).unwrap_or_default();
        let cells: Vec<String> = AuditRow::COLUMNS
            .iter()
            .map(|c| match value.get(*c) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => csv_cell(s),
                Some(other) => csv_cell(&other.to_string()),
            })
            .collect();
        out.push(cells.join(","));
    }
    out.join("\n")
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_rows_never_contain_unicode_line_separators() {
        let line = serde_json::to_string(&serde_json::json!({"a": "x\u{2028}y\u{2029}z"})).unwrap();
        let escaped = escape_line_separators(&line);
        assert!(!escaped.contains('\u{2028}') && !escaped.contains('\u{2029}'));
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back["a"], "x\u{2028}y\u{2029}z");
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell(r#"{"a":1,"b":2}"#), r#""{""a"":1,""b"":2}""#);
    }
}
