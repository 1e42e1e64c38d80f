//! `portcullis policy init SERVER`: a starter policy from the server's live lists.
//!
//! Connects to the configured server directly (no gateway needed), lists every tool (and the
//! resources, resource templates and prompts the server offers), classifies each and writes
//! `<policies dir>/<server>.json` with a section for every door (see
//! `portcullis_policy::starter` for the rules). A list the server offers but cannot give is left
//! out and said so in the summary; only the tools must be listed. An existing file is replaced only with `--force`; the file is written to a
//! temporary file beside it and renamed into place, so a running gateway's watcher never reads
//! half a policy.

use std::path::Path;
use std::time::Duration;

use portcullis_audit::neutralize::terminal as clean;
use portcullis_config::config::{Config, ServerConfig};
use portcullis_gate::upstream::list_tools::list_offered;
use portcullis_policy::starter::{starter_policy_for, ClassifiedTool, StarterPolicy, StarterRule, SERVER_REQUESTS};
use portcullis_policy::ToolClass;

use crate::exit::{Failure, Outcome};
use crate::table;
use crate::text::write_stdout;

/// The `clientInfo.name` the server sees on the listing connection.
const CLIENT_NAME: &str = "portcullis-policy-init";

#[derive(clap::Args)]
pub(crate) struct Args {
    /// Server name from the config's mcpServers
    pub server: String,
    /// Replace an existing policy file
    #[arg(long)]
    pub force: bool,
    /// Print the policy on stdout (the summary goes to stderr) instead of writing the file
    #[arg(long)]
    pub stdout: bool,
    /// Seconds the server gets to start and list its tools
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub timeout: u64,
}

pub(super) fn run(config_path: &Path, args: &Args) -> Outcome {
    let config = Config::load(config_path).map_err(Failure::user)?;
    let Some(server) = config.servers.get(&args.server) else {
        return Err(super::unknown_server(&config, config_path, &args.server));
    };
    let target = config.policy_path(&args.server);
    if !args.stdout && !args.force && target.exists() {
        return Err(exists(&target));
    }

    let runtime = crate::exit::runtime()?;
    let starter = runtime
        .block_on(generate(&args.server, server, Duration::from_secs(args.timeout)))
        .map_err(|e| {
            let mut lines = vec![format!(
                "portcullis: cannot list the tools of {:?}: {}",
                args.server, e.message
            )];
            lines.extend(e.stderr_tail.iter().map(|l| format!("  server stderr: {l}")));
            Failure::Report(lines)
        })?;

    if args.stdout {
        write_stdout(starter.text.trim_end());
        eprintln!("{}", summary(&starter));
        return Ok(());
    }
    write_policy(&target, &starter.text, args.force)?;
    write_stdout(&summary(&starter));
    eprintln!(
        "portcullis: wrote {} ({}); review it, then the gateway applies it at once",
        target.display(),
        counts(&starter)
    );
    Ok(())
}

/// `3 tools, 12 resources, 2 prompts`: the sections the file lists entries in.
fn counts(starter: &StarterPolicy) -> String {
    let mut parts = vec![format!("{} tools", starter.tools.len())];
    if let Some(resources) = &starter.resources {
        parts.push(format!("{} resources", resources.len()));
    }
    if let Some(prompts) = &starter.prompts {
        parts.push(format!("{} prompts", prompts.len()));
    }
    parts.join(", ")
}

/// Why a server's starter policy could not be made, cleaned for a terminal (the message and the
/// stderr lines can carry whatever the server printed).
pub(crate) struct NotGenerated {
    pub message: String,
    pub stderr_tail: Vec<String>,
}

/// The starter policy of one configured server: starts it, lists every tool and classifies
/// them. `policy init` and `clients install` both come here.
pub(crate) async fn generate(
    name: &str,
    server: &ServerConfig,
    timeout: Duration,
) -> Result<StarterPolicy, NotGenerated> {
    let listing = list_offered(name, server, CLIENT_NAME, timeout)
        .await
        .map_err(|e| NotGenerated {
            message: clean(&e.message),
            stderr_tail: e.stderr_tail.iter().map(|l| clean(l)).collect(),
        })?;
    let mut starter = starter_policy_for(&listing.offered).map_err(|e| NotGenerated {
        message: format!("generated an invalid policy: {e}"),
        stderr_tail: Vec::new(),
    })?;
    // Said with the skipped entries: the person sees which section the file lacks, and why.
    starter
        .skipped
        .extend(listing.unlisted.iter().map(|why| format!("a list (left out: {why})")));
    Ok(starter)
}

fn exists(target: &Path) -> Failure {
    Failure::user(format!(
        "{} already exists; pass --force to replace it",
        target.display()
    ))
}

/// Writes `text` to a temporary file in `target`'s directory and moves it into place: with
/// `force` over an existing file, without it only if `target` still does not exist.
pub(crate) fn write_policy(target: &Path, text: &str, force: bool) -> Outcome {
    use portcullis_atomic_file::{Options, Permissions};
    let options = Options::new(Permissions::KeepOrShared);
    let options = if force { options } else { options.no_clobber() };
    portcullis_atomic_file::write(target, text.as_bytes(), options).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            exists(target)
        } else {
            Failure::user(format!("cannot write {}: {e}", target.display()))
        }
    })
}

/// The classification table, then one line of counts per class.
pub(crate) fn summary(starter: &StarterPolicy) -> String {
    let mut rows = vec![["TOOL", "CLASS", "RISK", "RULE"].map(str::to_owned)];
    rows.extend(starter.tools.iter().map(row));
    let mut out = table::render(&rows);
    let count = |class: ToolClass| starter.tools.iter().filter(|t| t.class == class).count();
    out.push_str(&format!(
        "\n\n{} tools: {} read (allow), {} write (allow, rate-limited), {} execute, {} delete and {} unknown (require approval)",
        starter.tools.len(),
        count(ToolClass::Read),
        count(ToolClass::Write),
        count(ToolClass::Execute),
        count(ToolClass::Delete),
        count(ToolClass::Unknown),
    ));
    out.push_str(&other_doors(starter));
    for skipped in &starter.skipped {
        out.push_str(&format!("\nskipped: {}", clean(skipped)));
    }
    out
}

/// One line of counts per other section: resources and prompts when the server offers them,
/// and the server requests' rules.
fn other_doors(starter: &StarterPolicy) -> String {
    let mut out = String::new();
    if let Some(resources) = &starter.resources {
        let templates = resources.iter().filter(|r| r.template).count();
        let asking = resources
            .iter()
            .filter(|r| r.rule == StarterRule::RequireApproval)
            .count();
        out.push_str(&format!(
            "\n{} resources ({} listed, {templates} templates): {} allow, {asking} require approval (secrets, file templates)",
            resources.len(),
            resources.len() - templates,
            resources.len() - asking,
        ));
    }
    if let Some(prompts) = &starter.prompts {
        out.push_str(&format!("\n{} prompts: allow", prompts.len()));
    }
    let requests: Vec<String> = SERVER_REQUESTS
        .iter()
        .map(|(name, rule, _, _)| format!("{name} {rule}"))
        .collect();
    out.push_str(&format!("\nserver requests: {}", requests.join(", ")));
    out
}

fn row(tool: &ClassifiedTool) -> [String; 4] {
    let name = |v: serde_json::Value| v.as_str().unwrap_or("?").to_owned();
    [
        // Tool names are the server's choice; the rest is ours.
        clean(&tool.name),
        name(serde_json::json!(tool.class)),
        name(serde_json::json!(tool.risk)),
        tool.rule.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use portcullis_policy::starter::starter_policy;
    use serde_json::json;

    use super::summary;

    #[test]
    fn the_summary_shows_hostile_tool_names_as_escapes() {
        let name = "read\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}exe.txt";
        // Listed twice: the second one is reported as skipped, by name.
        let tools = [json!({ "name": name }), json!({ "name": name })];
        let text = summary(&starter_policy(&tools).unwrap());
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "raw controls in the summary:\n{text}"
        );
        let shown = r"read\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}exe.txt";
        assert!(text.lines().nth(1).is_some_and(|l| l.starts_with(shown)), "{text}");
        assert!(text.contains(&format!("skipped: {shown} (listed twice)")), "{text}");
    }
}
