//! `portcullis clients list | install CLIENT | uninstall CLIENT`: route an MCP client's servers
//! through Portcullis and back. The work is `portcullis_clients`; this is prompts and output,
//! and the starter policies install writes (`starters`).

mod starters;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args as ClapArgs, Subcommand};
use portcullis_clients::{self as clients, install, uninstall, Client, Places, Setup};
use portcullis_config::paths::{self, ProcessEnv};

use crate::exit::{Failure, Outcome};
use crate::table;
use crate::text::write_stdout;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Show each client's config file, its servers and whether they go through Portcullis
    List(Where),
    /// Route a client's servers through Portcullis: import them into portcullis.json, point the
    /// client at `portcullis connect` (the file is backed up first) and write a starter policy
    /// for each routed server that has none (from its live tool list, as `policy init`)
    Install(InstallArgs),
    /// Undo `install`: put the client's file back from the backup
    Uninstall(Change),
}

#[derive(ClapArgs)]
pub(crate) struct Where {
    /// Home directory the client files are under (default: yours); client config dirs are taken
    /// as HOME/.config
    #[arg(long, env = "PORTCULLIS_CLIENTS_HOME", value_name = "DIR")]
    home: Option<PathBuf>,
}

#[derive(ClapArgs)]
pub(crate) struct Change {
    /// claude-desktop, cursor, claude-code or vscode
    client: String,
    /// Show the change and write nothing
    #[arg(long)]
    dry_run: bool,
    /// Apply without asking
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    place: Where,
}

#[derive(ClapArgs)]
pub(crate) struct InstallArgs {
    #[command(flatten)]
    change: Change,
    /// Write no starter policies: servers without a policy file ask the user for every call
    #[arg(long)]
    no_policy: bool,
    /// Seconds each server gets to start and list its tools, for its starter policy
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    timeout: u64,
}

/// The global paths, as given.
pub(crate) struct Paths<'a> {
    pub config: &'a Path,
    pub data_dir: &'a Path,
    /// Whether the data dir was chosen (flag or environment) rather than the platform default:
    /// then `connect` must be told it.
    pub data_dir_chosen: bool,
    /// The same for the config file: `connect` reads it to start the server and decide.
    pub config_chosen: bool,
}

pub(crate) fn run(paths: &Paths<'_>, command: &Command) -> Outcome {
    match command {
        Command::List(place) => list(paths, place),
        Command::Install(args) => install(paths, args),
        Command::Uninstall(change) => uninstall(paths, change),
    }
}

fn places(place: &Where) -> Result<Places, Failure> {
    Places::new(place.home.clone()).map_err(Failure::user)
}

fn list(paths: &Paths<'_>, place: &Where) -> Outcome {
    let places = places(place)?;
    let mut rows = vec![["CLIENT", "CONFIG", "SERVERS", "THROUGH PORTCULLIS", "STATE"].map(str::to_owned)];
    for status in clients::list(&places, paths.data_dir) {
        let state = match (&status.problem, status.servers, status.installed) {
            (Some(problem), ..) => problem.clone(),
            (None, None, _) => "no config file".to_owned(),
            (None, Some(_), true) => "installed".to_owned(),
            (None, Some(_), false) => "not installed".to_owned(),
        };
        rows.push([
            status.client.id().to_owned(),
            status.config_path.display().to_string(),
            status.servers.map_or_else(|| "-".to_owned(), |n| n.to_string()),
            status.routed.to_string(),
            state,
        ]);
    }
    write_stdout(&table::render(&rows));
    Ok(())
}

/// The command that undoes an install, naming the same home: without it the hint would act on
/// the user's real client files.
fn undo_command(client: &str, place: &Where) -> String {
    match &place.home {
        Some(home) => format!("portcullis clients uninstall {client} --home '{}'", home.display()),
        None => format!("portcullis clients uninstall {client}"),
    }
}

fn install(paths: &Paths<'_>, args: &InstallArgs) -> Outcome {
    let change = &args.change;
    let client = Client::from_id(&change.client).map_err(Failure::user)?;
    let places = places(&change.place)?;
    let setup = setup(paths)?;
    let plan = install::plan(client, &client.config_path(&places), &setup).map_err(Failure::user)?;
    write_stdout(&plan.preview());
    if plan.is_empty() {
        eprintln!("portcullis: nothing to route in {}", plan.file.path.display());
        return Ok(());
    }
    let policies = starters::prepare(&plan, args.no_policy, Duration::from_secs(args.timeout))?;
    write_stdout(&policies.preview());
    let question = if policies.writes_any() {
        "Route these servers through Portcullis and write these policies?"
    } else {
        "Route these servers through Portcullis?"
    };
    if !confirmed(change, question)? {
        return Ok(());
    }
    // Routed first, policies second: if writing a policy fails, that server asks for every call,
    // the safe side.
    let record = install::apply(&plan, &setup).map_err(Failure::user)?;
    eprintln!(
        "portcullis: {} now reaches {} server(s) through Portcullis; original saved as {}; undo with `portcullis clients uninstall {}`",
        client.name(),
        record.routed.len(),
        record.backup.display(),
        undo_command(client.id(), &change.place)
    );
    for path in policies.write()? {
        eprintln!(
            "portcullis: wrote {}; edit it at will, a running gateway applies it at once",
            path.display()
        );
    }
    let unwritten = policies.unwritten();
    if !unwritten.is_empty() {
        eprintln!(
            "portcullis: no policy for {}: every call to {} asks you until it has one (`portcullis policy init SERVER`)",
            unwritten.join(", "),
            if unwritten.len() == 1 { "it" } else { "them" }
        );
    }
    eprintln!("portcullis: restart {} so it reads its new config", client.name());
    Ok(())
}

fn uninstall(paths: &Paths<'_>, change: &Change) -> Outcome {
    let client = Client::from_id(&change.client).map_err(Failure::user)?;
    // Look first (a dry run), then ask, then do.
    let preview = uninstall::run(client, paths.data_dir, true).map_err(Failure::user)?;
    write_stdout(&describe(&preview));
    if !confirmed(change, "Undo the change?")? {
        return Ok(());
    }
    let done = uninstall::run(client, paths.data_dir, false).map_err(Failure::user)?;
    eprintln!(
        "portcullis: {} restored ({}); restart {} so it reads it",
        done.record.config_path.display(),
        match done.restored {
            uninstall::Restored::FromBackup => "byte for byte from the backup",
            uninstall::Restored::Entries { .. } => "entry by entry",
        },
        client.name()
    );
    Ok(())
}

fn describe(outcome: &uninstall::Outcome) -> String {
    let r = &outcome.record;
    let mut lines = vec![match &outcome.restored {
        uninstall::Restored::FromBackup => {
            format!("restore {} from {}", r.config_path.display(), r.backup.display())
        }
        uninstall::Restored::Entries { put_back, left } => {
            let mut text = format!(
                "{} changed since install; putting back the original of: {}",
                r.config_path.display(),
                if put_back.is_empty() {
                    "nothing".to_owned()
                } else {
                    put_back.join(", ")
                }
            );
            if !left.is_empty() {
                text.push_str(&format!(
                    "\nchanged since install, left as they are: {}",
                    left.join(", ")
                ));
            }
            text
        }
    }];
    if !outcome.removed_imports.is_empty() {
        lines.push(format!(
            "remove from {}: {}",
            r.gateway_config.display(),
            outcome.removed_imports.join(", ")
        ));
    }
    lines.join("\n")
}

fn setup(paths: &Paths<'_>) -> Result<Setup, Failure> {
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| Failure::user(format!("{}: {e}", p.display())));
    let portcullis = paths::launchable(std::env::current_exe(), &ProcessEnv)
        .and_then(|p| p.canonicalize())
        .map_err(|e| Failure::user(format!("cannot tell where the portcullis binary is: {e}")))?;
    let data_dir = absolute(paths.data_dir)?;
    Ok(Setup {
        portcullis,
        data_dir_arg: paths.data_dir_chosen.then(|| data_dir.clone()),
        config_arg: if paths.config_chosen {
            Some(absolute(paths.config)?)
        } else {
            None
        },
        gateway_config: absolute(paths.config)?,
        data_dir,
    })
}

/// `--dry-run`: no. `--yes`: yes. Otherwise ask on a terminal; with no terminal, refuse.
fn confirmed(change: &Change, question: &str) -> Result<bool, Failure> {
    if change.dry_run {
        eprintln!("portcullis: dry run, nothing written");
        return Ok(false);
    }
    if change.yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::user(
            "not applied: pass --yes to apply, or --dry-run to only look",
        ));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).map_err(Failure::user)?;
    let yes = matches!(answer.trim(), "y" | "Y" | "yes");
    if !yes {
        eprintln!("portcullis: not applied");
    }
    Ok(yes)
}
