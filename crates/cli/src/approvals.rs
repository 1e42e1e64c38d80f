//! `portcullis approvals`: list, approve and deny held calls, or decide them as they arrive
//! (`watch`), through the running gateway's control API.

pub(crate) mod api;
pub(crate) mod format;
mod keys;
mod terminal;
mod watch;

use std::path::Path;
use std::time::SystemTime;

use clap::Subcommand;

use self::api::{Approval, ControlClient, Scope};
use crate::exit::{Failure, Outcome};
use crate::policy::write_stdout;

#[derive(Subcommand)]
pub enum Command {
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
        /// allow rule into the server's policy file
        #[arg(long, value_enum, default_value_t = Scope::Once)]
        scope: Scope,
    },
    /// Refuse a held call; the agent is told it was rejected
    Deny {
        /// The approval id, as `approvals list` shows it
        id: String,
        /// Told to the agent with the refusal
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        /// Also write a deny rule for this tool into the server's policy file
        #[arg(long)]
        always: bool,
    },
    /// Decide held calls in the terminal as they arrive, one key each
    /// (a once, s session, A always allow, d deny, D deny always, r deny with a reason, q quit)
    Watch,
}

/// Cards are wrapped to `$COLUMNS` (default 80), at most this wide.
const MAX_WIDTH: usize = 100;

pub fn run(data_dir: &Path, command: &Command) -> Outcome {
    let api = ControlClient::from_data_dir(data_dir)?;
    let runtime = crate::exit::runtime()?;
    runtime.block_on(async {
        match command {
            Command::List { json } => list(&api, *json).await,
            Command::Approve { id, scope } => approve(&api, id, *scope).await,
            Command::Deny { id, reason, always } => {
                let reason = reason.as_deref().map(str::trim).filter(|r| !r.is_empty());
                deny(&api, id, reason, *always).await
            }
            Command::Watch => watch::run(&api, width()).await,
        }
    })
}

fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
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

async fn approve(api: &ControlClient, id: &str, scope: Scope) -> Outcome {
    let call = pending(api, id).await?;
    api.approve(id, scope).await?;
    write_stdout(&format::approved_line(id, scope.as_str(), call.as_ref()));
    Ok(())
}

async fn deny(api: &ControlClient, id: &str, reason: Option<&str>, always: bool) -> Outcome {
    let call = pending(api, id).await?;
    api.deny(id, reason, always).await?;
    write_stdout(&format::rejected_line(id, always, reason, call.as_ref()));
    Ok(())
}
