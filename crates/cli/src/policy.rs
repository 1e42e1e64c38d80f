//! `portcullis policy check FILE...`, `portcullis policy init SERVER`, `portcullis policy explain
//! SERVER TOOL` and `portcullis policy schema`.

mod explain;
pub(crate) mod init;

use std::path::{Path, PathBuf};

use clap::Subcommand;
use portcullis_policy::Policy;

use crate::exit::{Failure, Outcome};
use crate::text::write_stdout;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Validate policy files; every problem is reported with file, JSON path and expectation
    Check {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Write a starter policy from the server's live tool list: read tools allowed, write tools
    /// rate-limited, execute, delete and unknown tools require approval
    Init(init::Args),
    /// Say which entry or rule of the server's policy decides a call, and why (offline: reads
    /// the policy file the config names, no gateway needed)
    Explain(explain::Args),
    /// Print the JSON Schema of the policy format
    Schema,
}

pub(crate) fn run(config: &Path, data_dir: &Path, command: &Command) -> Outcome {
    match command {
        Command::Check { files } => check(files, data_dir),
        Command::Init(args) => init::run(config, args),
        Command::Explain(args) => explain::run(config, data_dir, args),
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&portcullis_policy::json_schema()).map_err(Failure::user)?;
            write_stdout(&schema);
            Ok(())
        }
    }
}

fn check(files: &[PathBuf], data_dir: &Path) -> Outcome {
    let mut problems = Vec::new();
    for file in files {
        match Policy::load_file(file) {
            Ok(_) => eprintln!("{}: ok", file.display()),
            Err(e) => problems.extend(e.problems.iter().map(ToString::to_string)),
        }
    }
    for warning in gate_differs(files, data_dir) {
        eprintln!("{warning}");
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure::Report(problems))
    }
}

/// What the running gateway says about these files when its policy is not theirs (a rejected
/// version, with the last good one in force). Nothing when no gateway runs.
fn gate_differs(files: &[PathBuf], data_dir: &Path) -> Vec<String> {
    let Ok(client) = crate::control::ControlClient::from_data_dir(data_dir) else {
        return Vec::new();
    };
    let Ok(runtime) = crate::exit::runtime() else {
        return Vec::new();
    };
    let Some(status) = runtime.block_on(client.status()) else {
        return Vec::new();
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let policies = status.get("policies").and_then(serde_json::Value::as_array);
    policies
        .into_iter()
        .flatten()
        .filter(|problem| {
            let path = problem
                .get("path")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            files.iter().any(|file| same(file, Path::new(path)))
        })
        .map(|problem| format!("running gateway: {}", crate::control::policy_warning(problem)))
        .collect()
}

/// "No server X in the config (configured: …)", for the commands that name one.
fn unknown_server(config: &portcullis_config::config::Config, config_path: &Path, server: &str) -> Failure {
    let known: Vec<&str> = config.servers.keys().map(String::as_str).collect();
    let known = if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    };
    Failure::user(format!(
        "no server {server:?} in {} (configured: {known})",
        config_path.display()
    ))
}
