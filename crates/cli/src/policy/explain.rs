//! `portcullis policy explain SERVER TOOL [--arguments JSON]`: which entry or rule decides a call
//! and why, from the policy evaluator itself ([`portcullis_policy::Policy::explain`]).
//!
//! Offline: the config names the policies dir; the server's file is read as the gateway reads it
//! (no file: every call requires approval; an invalid file is reported, exit 1).

use std::path::Path;

use portcullis_audit::neutralize::terminal as clean;
use portcullis_config::config::Config;
use portcullis_policy::{CallFacts, Policy};
use serde_json::Value;

use crate::exit::{Failure, Outcome};
use crate::text::write_stdout;

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Server name from the config's mcpServers
    pub server: String,
    /// Tool name as the agent calls it
    pub tool: String,
    /// The call's arguments, a JSON object (default: none)
    #[arg(long, value_name = "JSON")]
    pub arguments: Option<String>,
    /// The client's self-reported name, for `client.name` conditions
    #[arg(long, value_name = "NAME")]
    pub client_name: Option<String>,
    /// The client's self-reported version, for `client.version` conditions
    #[arg(long, value_name = "VERSION")]
    pub client_version: Option<String>,
    /// Print the explanation as JSON (what the policy editor reads)
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(config_path: &Path, args: &Args) -> Outcome {
    let config = Config::load(config_path).map_err(Failure::user)?;
    if !config.servers.contains_key(&args.server) {
        return Err(super::unknown_server(&config, config_path, &args.server));
    }
    let arguments = match args.arguments.as_deref() {
        None => Value::Null,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ (Value::Object(_) | Value::Null)) => value,
            Ok(_) => return Err(Failure::user("--arguments must be a JSON object")),
            Err(e) => return Err(Failure::user(format!("--arguments is not JSON: {e}"))),
        },
    };
    let path = config.policy_path(&args.server);
    let (policy, source) = if path.exists() {
        let policy = Policy::load_file(&path)
            .map_err(|e| Failure::Report(e.problems.iter().map(ToString::to_string).collect()))?;
        (policy, path.display().to_string())
    } else {
        (
            Policy::require_approval_for_all(),
            format!("{} (no such file)", path.display()),
        )
    };
    let facts = CallFacts {
        arguments: &arguments,
        client_name: args.client_name.as_deref(),
        client_version: args.client_version.as_deref(),
    };
    let explanation = policy.explain(&args.tool, &facts);
    if args.json {
        let mut value = serde_json::to_value(&explanation).map_err(Failure::user)?;
        if let Value::Object(map) = &mut value {
            map.insert("server".into(), Value::String(args.server.clone()));
            map.insert("policy_file".into(), Value::String(path.display().to_string()));
        }
        write_stdout(&serde_json::to_string_pretty(&value).map_err(Failure::user)?);
        return Ok(());
    }
    write_stdout(&format!("policy: {}", clean(&source)));
    for line in explanation.lines() {
        write_stdout(&clean(&line));
    }
    Ok(())
}
