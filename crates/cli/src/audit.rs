//! `portcullis audit`: recorded decisions, newest first, as a table, JSON, JSON lines or CSV.
//! Reads `audit.db` directly; no running gateway is needed.

use std::path::Path;

use portcullis_audit::neutralize::terminal as clean;
use portcullis_audit::{export, AuditFilter, AuditRow, AuditStore, Decision, Method};
use portcullis_gate::clock::{now_ms, rfc3339};

use crate::exit::{Failure, Outcome};
use crate::text::write_stdout;

#[derive(clap::Args)]
pub(crate) struct Args {
    #[arg(long)]
    server: Option<String>,
    /// The tool (or, for other kinds of request, the URI or prompt name)
    #[arg(long)]
    tool: Option<String>,
    /// tools/call, resources/read, resources/subscribe, prompts/get, sampling/createMessage,
    /// elicitation/create, roots/list
    #[arg(long)]
    method: Option<String>,
    /// allowed, denied, hidden, rate_limited, approved, rejected, timed_out, cancelled, failed
    #[arg(long)]
    decision: Option<String>,
    /// Only rows newer than this, e.g. 10m, 2h, 7d
    #[arg(long, value_name = "DUR")]
    since: Option<String>,
    /// Substring of the (redacted) arguments, as sent or decoded (`/home` finds `\u002fhome`)
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

pub(crate) fn run(data_dir: &Path, args: &Args) -> Outcome {
    let filter = filter(args)?;
    let db = data_dir.join(portcullis_gate::AUDIT_FILE);
    if !db.exists() {
        return Err(Failure::user(format!(
            "no audit database at {} (has a gateway run with this data dir?)",
            db.display()
        )));
    }
    let store = AuditStore::open(&db).map_err(Failure::user)?;
    let rows = store.query(&filter, args.limit).map_err(Failure::user)?;
    // The table is for a terminal: agent- and server-chosen text in it is neutralized. JSON keeps
    // the exact text, with every control, bidi and line-break character as a `\uXXXX` escape;
    // CSV cells are guarded against formulas and keep one row per line (`export`).
    let text = match args.format {
        Format::Table => table(&rows),
        Format::Json => export::json_pretty(&rows),
        Format::Jsonl => export::jsonl(&rows),
        Format::Csv => export::csv(&rows),
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
    let method = args
        .method
        .as_deref()
        .map(str::parse::<Method>)
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
        method,
        decision,
        since_ms,
        text: args.text.clone(),
        ..AuditFilter::default()
    })
}

fn table(rows: &[AuditRow]) -> String {
    let header = ["TIME", "SERVER", "TOOL", "DECISION", "BY", "RULE", "OUTCOME", "MS"].map(str::to_owned);
    let mut lines: Vec<[String; 8]> = vec![header];
    for r in rows {
        lines.push([
            rfc3339(r.time_ms),
            clean(&r.server),
            clean(&r.tool),
            r.decision.to_string(),
            r.decided_by.to_string(),
            // Rules name policy keys, which "always" writes from tool names.
            clean(r.rule.as_deref().unwrap_or_default()),
            r.outcome.map(|o| o.to_string()).unwrap_or_default(),
            r.upstream_ms.map(|m| m.to_string()).unwrap_or_default(),
        ]);
    }
    crate::table::render(&lines)
}
