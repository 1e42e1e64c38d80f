//! `portcullis approvals`: list, approve and deny held calls, or decide them as they arrive
//! (`watch`), through the running gateway's control API.

mod format;
mod keys;
mod terminal;
mod watch;

use std::path::Path;
use std::time::SystemTime;

use clap::Subcommand;
use portcullis_gate::clock::rfc3339;

use crate::control::{Approval, ControlClient, Scope};
use crate::exit::{Failure, Outcome};
use crate::text::{clean, clean_block, write_stdout};

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List the calls waiting for a decision, oldest first
    List {
        /// Print the gateway's JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Let a held call through
    Approve {
        /// The approval id, as `approvals list` shows it
        id: String,
        /// once: this call only; session: this tool for the agent's session; always: write an
        /// allow entry into the server's policy file (with --when: an allow rule with that
        /// condition)
        #[arg(long, value_enum, default_value_t = Scope::Once)]
        scope: Scope,
        /// Instead of writing the policy file, a grant for this long (90s, 15m, 1h, restart):
        /// with --scope once the exact call, session this session, always every session
        #[arg(long = "for", value_name = "DURATION")]
        for_: Option<String>,
        /// Only calls whose arguments match this policy `when` object, e.g.
        /// '{"arguments.path":{"path_under":"/tmp/x"}}' (the grant's, or with --scope always and
        /// no --for the written rule's)
        #[arg(long, value_name = "JSON")]
        when: Option<String>,
        /// Print the grant or rule this would make and how many earlier audited calls it would
        /// have matched; decide nothing
        #[arg(long)]
        dry_run: bool,
        /// Approve this call once with these arguments instead of the agent's (a JSON object).
        /// The policy decides the edited call again and may refuse it; the audit keeps both.
        #[arg(long, value_name = "JSON", conflicts_with_all = ["for_", "when", "dry_run"])]
        arguments: Option<String>,
    },
    /// Refuse a held call; the agent is told it was rejected
    Deny {
        /// The approval id, as `approvals list` shows it
        id: String,
        /// Told to the agent with the refusal
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        /// Also write a deny entry for this tool into the server's policy file (with --when: a
        /// deny rule with that condition; with --for: deny every session's calls for that long,
        /// without writing the file)
        #[arg(long)]
        always: bool,
        /// Keep denying this session's (with --always every session's) calls of this tool for
        /// this long (90s, 15m, 1h, restart)
        #[arg(long = "for", value_name = "DURATION")]
        for_: Option<String>,
        /// Only calls whose arguments match this policy `when` object
        #[arg(long, value_name = "JSON")]
        when: Option<String>,
        /// Print the grant or rule this would make and how many earlier audited calls it would
        /// have matched; decide nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Give the user more time to decide a held call: move its deadline later, never past
    /// `approval.max_hold_secs` from when it was held
    Extend {
        /// The approval id, as `approvals list` shows it
        id: String,
        /// How much later (90s, 2m …)
        #[arg(long, value_name = "DURATION", default_value = "60s")]
        by: String,
    },
    /// List the standing grants (timed, session and every-session approvals and denials)
    Grants {
        /// Print the gateway's JSON array instead of a table
        #[arg(long)]
        json: bool,
    },
    /// End a standing grant early
    Revoke {
        /// The grant id, as `approvals grants` shows it
        id: String,
    },
    /// Take back the policy file write an "always" decision made (its id is printed with the
    /// decision): within 30 s, and only if the file was not changed since
    Undo {
        /// The write id, as the decision printed it (`w-…`)
        write_id: String,
    },
    /// Decide held calls in the terminal as they arrive, one key each
    /// (a once, s session, A always allow, d deny, D deny always, r deny with a reason, q quit)
    Watch,
}

/// Cards are wrapped to `$COLUMNS`, else the terminal's width (else 80), at most this wide.
const MAX_WIDTH: usize = 100;

pub(crate) fn run(data_dir: &Path, command: &Command) -> Outcome {
    let api = ControlClient::from_data_dir(data_dir)?;
    let runtime = crate::exit::runtime()?;
    runtime.block_on(async {
        match command {
            Command::List { json } => list(&api, *json).await,
            Command::Approve {
                id,
                scope,
                for_,
                when,
                dry_run: true,
                ..
            } => {
                let body = serde_json::json!({ "scope": scope.as_str(), "for": for_, "when": parse_when(when.as_deref())?, "dry_run": true });
                dry_run(&api, id, "approve", &body).await
            }
            Command::Approve {
                id,
                arguments: Some(arguments),
                ..
            } => approve_edited(&api, id, arguments).await,
            Command::Approve {
                id, scope, for_, when, ..
            } => approve(&api, id, *scope, for_.as_deref(), when.as_deref()).await,
            Command::Deny {
                id,
                reason,
                always,
                for_,
                when,
                dry_run: wanted,
            } => {
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                if *wanted {
                    let body = serde_json::json!({ "reason": reason, "always": always, "for": for_, "when": parse_when(when.as_deref())?, "dry_run": true });
                    return dry_run(&api, id, "deny", &body).await;
                }
                deny(&api, id, reason, *always, for_.as_deref(), when.as_deref()).await
            }
            Command::Extend { id, by } => extend(&api, id, by).await,
            Command::Grants { json } => grants(&api, *json).await,
            Command::Revoke { id } => revoke(&api, id).await,
            Command::Undo { write_id } => undo(&api, write_id).await,
            Command::Watch => watch::run(&api, width()).await,
        }
    })
}

fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .or_else(terminal::columns_of_stdout)
        .unwrap_or(80)
        .clamp(40, MAX_WIDTH)
}

async fn list(api: &ControlClient, json: bool) -> Outcome {
    // On stderr, so `--json` output stays the gateway's array.
    for warning in api.warnings().await {
        eprintln!("portcullis: warning: {warning}");
    }
    if json {
        let raw = api.list_raw().await?;
        write_stdout(&serde_json::to_string_pretty(&raw).map_err(Failure::user)?);
    } else {
        write_stdout(&format::table(&api.list().await?, SystemTime::now()));
    }
    Ok(())
}

/// The call behind `id`, for a more telling message; the decision does not depend on it.
async fn pending(api: &ControlClient, id: &str) -> Result<Option<Approval>, Failure> {
    Ok(api.list().await?.into_iter().find(|a| a.id == id))
}

async fn approve(api: &ControlClient, id: &str, scope: Scope, for_: Option<&str>, when: Option<&str>) -> Outcome {
    let call = pending(api, id).await?;
    let body = serde_json::json!({ "scope": scope.as_str(), "for": for_, "when": parse_when(when)? });
    let answer = api.decide(id, "approve", &body).await?;
    write_stdout(&format::approved_line(
        id,
        &scope_words(scope.as_str(), for_, when),
        call.as_ref(),
    ));
    settled_lines(&answer);
    Ok(())
}

async fn approve_edited(api: &ControlClient, id: &str, arguments: &str) -> Outcome {
    let call = pending(api, id).await?;
    let arguments: serde_json::Value =
        serde_json::from_str(arguments).map_err(|e| Failure::user(format!("--arguments is not JSON: {e}")))?;
    api.decide(id, "approve", &serde_json::json!({ "arguments": arguments }))
        .await?;
    write_stdout(&format::approved_line(id, "once, with edited arguments", call.as_ref()));
    Ok(())
}

async fn deny(
    api: &ControlClient,
    id: &str,
    reason: Option<&str>,
    always: bool,
    for_: Option<&str>,
    when: Option<&str>,
) -> Outcome {
    let call = pending(api, id).await?;
    let body = serde_json::json!({ "reason": reason, "always": always, "for": for_, "when": parse_when(when)? });
    let answer = api.decide(id, "deny", &body).await?;
    write_stdout(&format::rejected_line(id, always, reason, call.as_ref()));
    settled_lines(&answer);
    Ok(())
}

/// `--when` as JSON; its meaning is checked by the gateway, which knows the policy format.
fn parse_when(when: Option<&str>) -> Result<Option<serde_json::Value>, Failure> {
    when.map(|text| serde_json::from_str(text).map_err(|e| Failure::user(format!("--when is not JSON: {e}"))))
        .transpose()
}

fn scope_words(scope: &str, for_: Option<&str>, when: Option<&str>) -> String {
    let mut words = scope.to_owned();
    if let Some(for_) = for_ {
        words.push_str(&format!(", for {}", clean(for_)));
    }
    if when.is_some() {
        words.push_str(", when the condition holds");
    }
    words
}

/// "also settled" for every other held call the decision covered (DESIGN §7), and the policy
/// write an "always" made, with how to undo it.
fn settled_lines(answer: &serde_json::Value) {
    let write = &answer["policy_write"];
    if let (Some(id), Some(path)) = (write["write_id"].as_str(), write["path"].as_str()) {
        write_stdout(&format!(
            "wrote to {}:\n{}\nundo within 30 s: portcullis approvals undo {}",
            clean(path),
            write["rule_text"].as_str().map(clean_block).unwrap_or_default(),
            clean(id)
        ));
    }
    if let Some(grant) = answer.get("grant").and_then(serde_json::Value::as_str) {
        write_stdout(&format!("grant {} (list: portcullis approvals grants)", clean(grant)));
    }
    let ids: Vec<&str> = answer
        .get("also_settled")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    if !ids.is_empty() {
        let ids: Vec<String> = ids.into_iter().map(clean).collect();
        write_stdout(&format!(
            "also settled {} waiting call(s): {}",
            ids.len(),
            ids.join(", ")
        ));
    }
}

/// `--dry-run`: what the decision would make and match; nothing is decided.
async fn dry_run(api: &ControlClient, id: &str, verb: &str, body: &serde_json::Value) -> Outcome {
    let answer = api.decide(id, verb, body).await?;
    for line in dry_run_lines(id, &answer) {
        write_stdout(&line);
    }
    Ok(())
}

fn dry_run_lines(id: &str, answer: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let text = |k: &str| answer.get(k).and_then(Value::as_str).map(clean).unwrap_or_default();
    let number = |k: &str| answer.get(k).and_then(Value::as_u64).unwrap_or_default();
    let (server, tool) = (text("server"), text("tool"));
    let verb = if text("decision") == "deny" {
        "denying"
    } else {
        "approving"
    };
    let mut lines = Vec::new();
    match text("writes").as_str() {
        "grant" => {
            let grant = &answer["grant"];
            let g = |k: &str| grant.get(k).and_then(Value::as_str).map(clean);
            let which = match g("which").as_deref() {
                Some("when") => format!("calls whose arguments match {}", clean(&grant["when"].to_string())),
                Some("exact") => "this exact call (same arguments)".to_owned(),
                _ => "any arguments".to_owned(),
            };
            let whose = g("session").map_or_else(|| "every session".to_owned(), |s| format!("session {s}"));
            let until = grant.get("for_secs").and_then(Value::as_u64).map_or_else(
                || "until the session ends or the gateway restarts".to_owned(),
                |s| format!("for {s} s"),
            );
            lines.push(format!(
                "dry run: {verb} {id} would make a grant: {} {server}/{tool}, {which}, {whose}, {until}",
                g("effect").unwrap_or_default()
            ));
        }
        "policy" => {
            let rule = &answer["rule"];
            lines.push(format!(
                "dry run: {verb} {id} would write into {server}'s policy file: \"{}\": {}",
                clean(rule["key"].as_str().unwrap_or_default()),
                clean(&rule["entry"].to_string())
            ));
            if let Some(name) = rule["name"].as_str() {
                lines.push(format!(
                    "the new rule is {}: {}",
                    clean(name),
                    clean(&rule["rule"].to_string())
                ));
                if rule["decides_this_call"] == false {
                    lines.push(
                        "note: an earlier rule of the entry still decides this call (the new rule goes after \
                         the entry's deny rules, which it never overrides)"
                            .to_owned(),
                    );
                }
            }
        }
        "pin" => lines.push(format!(
            "dry run: {verb} {id} would trust {server}/{tool}'s changed definition"
        )),
        _ => lines.push(format!(
            "dry run: {verb} {id} would decide only this call and make no grant or rule"
        )),
    }
    let (compared, limit) = (number("compared"), number("limit"));
    let scope = if compared >= limit && limit > 0 {
        format!("the newest {compared} compared")
    } else {
        format!("{compared} in the audit")
    };
    lines.push(format!(
        "it would have matched {} of the earlier audited calls of {server}/{tool} ({scope})",
        number("matched")
    ));
    let redacted = number("redacted");
    if redacted > 0 {
        lines.push(format!(
            "{redacted} of them had a redacted value where this reads the arguments; the audit keeps \
             secrets redacted, so those were compared as [redacted] and the count may be off"
        ));
    }
    let pending = answer.get("pending").and_then(Value::as_bool) == Some(true);
    lines.push(if pending {
        format!("nothing was decided: {id} is still pending")
    } else {
        format!("nothing was decided by this dry run ({id} is no longer pending)")
    });
    lines
}

async fn extend(api: &ControlClient, id: &str, by: &str) -> Outcome {
    let by = humantime::parse_duration(by.trim())
        .map_err(|e| Failure::user(format!("--by {by:?} is not a duration like 60s or 2m ({e})")))?;
    if by < std::time::Duration::from_secs(1) {
        return Err(Failure::user("--by must be at least a second"));
    }
    let body = serde_json::json!({ "by_secs": by.as_secs() });
    let answer = api.decide(id, "extend", &body).await?;
    let text = |k: &str| answer.get(k).and_then(serde_json::Value::as_str).map(clean);
    let mut line = format!(
        "extended {id}: the call now waits until {}",
        text("expires_at").unwrap_or_default()
    );
    if answer.get("clamped").and_then(serde_json::Value::as_bool) == Some(true) {
        let max = answer
            .get("max_hold_secs")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or_default();
        line.push_str(&format!(
            " (cut short: approval.max_hold_secs allows {max} s from when it was held)"
        ));
    }
    write_stdout(&line);
    Ok(())
}

async fn grants(api: &ControlClient, json: bool) -> Outcome {
    let raw = api.get_json(&["control", "grants"]).await?;
    if json {
        write_stdout(&serde_json::to_string_pretty(&raw).map_err(Failure::user)?);
        return Ok(());
    }
    let rows = raw.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        write_stdout("no standing grants");
        return Ok(());
    }
    for g in rows {
        let text = |k: &str| g.get(k).and_then(serde_json::Value::as_str).map(clean);
        let whose = text("session").map_or_else(|| "every session".to_owned(), |s| format!("session {s}"));
        let until = g
            .get("expires_at_ms")
            .and_then(serde_json::Value::as_i64)
            .map_or_else(|| "until restart".to_owned(), |ms| format!("until {}", rfc3339(ms)));
        let which = match text("which").as_deref() {
            Some("when") => format!("when {}", clean(&g["when"].to_string())),
            Some("exact") => "this exact call".to_owned(),
            _ => "any arguments".to_owned(),
        };
        write_stdout(&format!(
            "{}  {} {}/{}  {which}  {whose}  {until}",
            text("id").unwrap_or_default(),
            text("effect").unwrap_or_default(),
            text("server").unwrap_or_default(),
            text("tool").unwrap_or_default(),
        ));
    }
    Ok(())
}

async fn revoke(api: &ControlClient, id: &str) -> Outcome {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(Failure::user(format!(
            "{id:?} is not a grant id (see `portcullis approvals grants`)"
        )));
    }
    api.post_json(&["control", "grants", id, "revoke"], &serde_json::json!({}))
        .await?;
    write_stdout(&format!("revoked {id}"));
    Ok(())
}

async fn undo(api: &ControlClient, write_id: &str) -> Outcome {
    let answer = api
        .post_json(
            &["control", "policy", "undo"],
            &serde_json::json!({ "write_id": write_id }),
        )
        .await?;
    let path = answer["policy_write"]["path"].as_str().unwrap_or_default();
    write_stdout(&format!("undone {}: {} is as it was", clean(write_id), clean(path)));
    Ok(())
}
