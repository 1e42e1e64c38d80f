//! `list_clients`, `preview_client_install`, `install_client`, `preview_client_uninstall`,
//! `uninstall_client`: the Servers view's side of `portcullis clients` (the work is
//! `portcullis_clients`). Each change is shown first and applied only as shown: install
//! re-plans and refuses when the plan differs from the preview the person saw. Like the CLI's
//! install, it writes the starter policy of each routed server that has none (listed in the
//! preview tool by tool); a server that cannot be listed gets none and asks for every call.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use portcullis_clients::{self as clients, install, uninstall, Client, ClientError, Places, Setup};
use portcullis_config::config::Config;
use portcullis_config::paths::{self, Environment, ProcessEnv};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

use crate::commands::starter::{starter_for, StarterPolicyText};
use crate::host::Host;
use crate::ipc::{IpcError, IpcResult};

/// Where the client files are looked for instead of the home directory (tests), as the CLI's
/// `--home`.
const HOME_ENV: &str = "PORTCULLIS_CLIENTS_HOME";
/// The `portcullis` binary clients launch, when it is not beside the app or on `PATH`.
const BIN_ENV: &str = "PORTCULLIS_BIN";

/// One MCP client and the state of its config file.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ClientState {
    /// `claude-desktop`, `cursor`, `claude-code` or `vscode`.
    pub id: String,
    pub name: String,
    pub config_path: String,
    /// Server entries in its file; `None`: no config file.
    pub servers: Option<u32>,
    /// Entries that already launch `portcullis connect`.
    pub routed: u32,
    /// Why the file cannot be read, if it cannot.
    pub problem: Option<String>,
    /// Routed by an install that can be undone.
    pub installed: bool,
}

/// What install would change, as shown before it is applied.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct InstallPreview {
    /// Diff-like text (env and header values hidden); `install_client` takes it back.
    pub preview: String,
    /// Entries that would launch `portcullis connect`.
    pub routed: Vec<String>,
    /// Servers added to `portcullis.json`.
    pub imports: Vec<String>,
    /// Entries left alone: `[entry, why]`.
    pub skipped: Vec<(String, String)>,
    /// Each routed server's policy file, as install leaves it.
    pub policies: Vec<InstallPolicy>,
}

/// A routed server's policy file, as install leaves it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct InstallPolicy {
    pub server: String,
    pub path: String,
    /// The file exists: install keeps it as it is.
    pub exists: bool,
    /// The starter policy install writes there; `None` when it writes none.
    pub starter: Option<StarterPolicyText>,
    /// Why it writes none: the file exists (kept as it is), or the server could not be listed
    /// (then every call to it asks until it has a policy).
    pub not_written: Option<String>,
}

/// What uninstall does (preview) or did.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct UninstallReport {
    pub description: String,
}

fn client_error(e: ClientError) -> IpcError {
    IpcError::new("client_refused", e.0)
}

fn client(id: &str) -> IpcResult<Client> {
    Client::from_id(id).map_err(|e| IpcError::new("unknown_client", e.0))
}

pub(crate) fn places(env: &dyn Environment) -> IpcResult<Places> {
    Places::new(env.var(HOME_ENV).map(PathBuf::from)).map_err(client_error)
}

/// The `portcullis` command the client will launch: `$PORTCULLIS_BIN`, else the AppImage the app
/// runs from (its AppRun hands `connect` to the CLI), else beside this app (the package puts both
/// in /usr/bin; a build puts both in target/), else the first on `PATH`.
pub(crate) fn portcullis_binary(env: &dyn Environment) -> IpcResult<PathBuf> {
    let name = format!("portcullis{}", std::env::consts::EXE_SUFFIX);
    let chosen = env.var(BIN_ENV).map(PathBuf::from);
    let appimage = paths::appimage(env);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&name)));
    let on_path = env
        .var("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(&name));
    chosen
        .into_iter()
        .chain(appimage)
        .chain(beside)
        .chain(on_path)
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
        .ok_or_else(|| {
            IpcError::new(
                "portcullis_not_found",
                "cannot find the portcullis command (beside the app or on PATH) for the client to launch",
            )
        })
}

/// The client launches `portcullis connect NAME --config FILE --data-dir DIR`: always this app's
/// config and data dir, so `connect` decides by this app's servers and policies and finds this
/// keeper whatever the client's environment.
fn setup(host: &Host, env: &dyn Environment) -> IpcResult<Setup> {
    Ok(Setup {
        portcullis: portcullis_binary(env)?,
        data_dir_arg: Some(host.paths.data_dir.clone()),
        config_arg: Some(host.paths.config.clone()),
        gateway_config: host.paths.config.clone(),
        data_dir: host.paths.data_dir.clone(),
    })
}

/// What installing client `id` would change (the client's file and `portcullis.json`).
pub fn plan(host: &Host, env: &dyn Environment, id: &str) -> IpcResult<(install::Plan, Setup)> {
    let client = client(id)?;
    let setup = setup(host, env)?;
    let plan = install::plan(client, &client.config_path(&places(env)?), &setup).map_err(client_error)?;
    Ok((plan, setup))
}

/// The policy of each routed server: kept when its file exists, else the starter policy from its
/// live tool list (all servers listed at once).
async fn policies(plan: &install::Plan) -> IpcResult<Vec<InstallPolicy>> {
    let targets = plan.policy_targets().map_err(client_error)?;
    let made = futures::future::join_all(targets.iter().map(|t| async move {
        if t.exists {
            return Err("exists, kept as it is".to_owned());
        }
        starter_for(&t.server, &t.config).await.map_err(|e| {
            format!(
                "not written: {e}; until it has a policy file, every call to {} asks you",
                t.server
            )
        })
    }))
    .await;
    Ok(targets
        .into_iter()
        .zip(made)
        .map(|(t, made)| InstallPolicy {
            server: t.server,
            path: t.path.display().to_string(),
            exists: t.exists,
            not_written: made.as_ref().err().cloned(),
            starter: made.ok(),
        })
        .collect())
}

/// The preview's text: the files' change, then each policy file with every tool's rule.
fn preview_text(plan: &install::Plan, policies: &[InstallPolicy]) -> String {
    let mut out = vec![plan.preview()];
    for p in policies {
        match (&p.starter, &p.not_written) {
            (Some(starter), _) => {
                out.push(format!("+ {}: starter policy, {} tools", p.path, starter.tools.len()));
                out.extend(
                    starter
                        .tools
                        .iter()
                        .map(|t| format!("    {}  {} / {}  {}", t.name, t.class, t.risk, t.rule)),
                );
            }
            (None, why) => out.push(format!("  {}: {}", p.path, why.as_deref().unwrap_or(""))),
        }
    }
    out.join("\n")
}

fn preview_of(plan: &install::Plan, policies: Vec<InstallPolicy>) -> InstallPreview {
    InstallPreview {
        preview: preview_text(plan, &policies),
        routed: plan.routed.iter().map(|r| r.name.clone()).collect(),
        imports: plan.imports.iter().map(|(n, _)| n.clone()).collect(),
        skipped: plan.skipped.clone(),
        policies,
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_clients(host: State<'_, Arc<Host>>) -> IpcResult<Vec<ClientState>> {
    list(&host, &ProcessEnv)
}

/// `list_clients` with the environment given (tests inject theirs).
pub fn list(host: &Host, env: &dyn Environment) -> IpcResult<Vec<ClientState>> {
    let places = places(env)?;
    Ok(clients::list(&places, &host.paths.data_dir)
        .into_iter()
        .map(|s| ClientState {
            id: s.client.id().to_owned(),
            name: s.client.name().to_owned(),
            config_path: s.config_path.display().to_string(),
            servers: s.servers.map(count),
            routed: count(s.routed),
            problem: s.problem,
            installed: s.installed,
        })
        .collect())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn preview_client_install(host: State<'_, Arc<Host>>, client: String) -> IpcResult<InstallPreview> {
    let (plan, _) = plan(&host, &ProcessEnv, &client)?;
    preview_install(&plan).await
}

/// The preview of `plan`, with each routed server's policy (servers without one are listed).
pub async fn preview_install(plan: &install::Plan) -> IpcResult<InstallPreview> {
    if plan.is_empty() {
        return Ok(preview_of(plan, Vec::new()));
    }
    Ok(preview_of(plan, policies(plan).await?))
}

/// Applies the install the person saw: `preview` is the text `preview_client_install` returned.
/// The imported servers are served at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn install_client(host: State<'_, Arc<Host>>, client: String, preview: String) -> IpcResult<InstallPreview> {
    let (plan, setup) = plan(&host, &ProcessEnv, &client)?;
    let shown = install(&plan, &setup, &preview).await?;
    serve_imports(&host, &setup.gateway_config, &plan).await;
    Ok(shown)
}

/// Writes the install if `plan`, policies included, is still the one previewed; the caller then
/// serves the imported servers ([`serve_imports`]).
pub async fn install(plan: &install::Plan, setup: &Setup, preview: &str) -> IpcResult<InstallPreview> {
    if plan.is_empty() {
        return Err(IpcError::new(
            "nothing_to_route",
            "no server of this client can be routed",
        ));
    }
    let shown = preview_of(plan, policies(plan).await?);
    if shown.preview != preview {
        return Err(IpcError::new(
            "preview_stale",
            "the client's file, portcullis.json or a server's tools changed since the preview; review the change again",
        ));
    }
    install::apply(plan, setup).map_err(client_error)?;
    // Routed first, policies second: a policy that cannot be written leaves its server asking
    // for every call, the safe side.
    write_policies(plan, &shown.policies)?;
    tracing::info!(
        client = plan.client.id(),
        routed = plan.routed.len(),
        policies = shown.policies.iter().filter(|p| p.starter.is_some()).count(),
        "client routed through Portcullis from the app"
    );
    Ok(shown)
}

/// Makes the policies directory and writes each starter policy, never over a file that
/// appeared since the preview.
fn write_policies(plan: &install::Plan, policies: &[InstallPolicy]) -> IpcResult<()> {
    use portcullis_atomic_file::{Options, Permissions};
    let dir = plan.policies_dir().map_err(client_error)?;
    let failed = |path: &dyn std::fmt::Display, e: std::io::Error| {
        IpcError::new(
            "policy_not_written",
            format!("the client is routed, but {path} was not written: {e}"),
        )
    };
    std::fs::create_dir_all(&dir).map_err(|e| failed(&dir.display(), e))?;
    for p in policies {
        if let Some(starter) = &p.starter {
            let options = Options::new(Permissions::KeepOrShared).no_clobber();
            portcullis_atomic_file::write(Path::new(&p.path), starter.text.as_bytes(), options)
                .map_err(|e| failed(&p.path, e))?;
        }
    }
    Ok(())
}

/// Adds the imported servers to the running gateway (as a saved Servers form does). A config
/// that no longer parses is left for the next start, which names the problem.
pub async fn serve_imports(host: &Host, config_path: &Path, plan: &install::Plan) {
    let Some(running) = host.running_now() else { return };
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "imported servers apply at the next start");
            return;
        }
    };
    for (name, _) in &plan.imports {
        if let Some(server) = config.servers.get(name) {
            running.gateway.set_server(name, server.clone()).await;
        }
    }
}

fn describe(outcome: &uninstall::Outcome) -> String {
    let r = &outcome.record;
    let mut lines = vec![match &outcome.restored {
        uninstall::Restored::FromBackup => format!(
            "{} is put back from its backup {}, byte for byte.",
            r.config_path.display(),
            r.backup.display()
        ),
        uninstall::Restored::Entries { put_back, left } => {
            let mut text = format!(
                "{} changed since install; the original entries are put back for: {}.",
                r.config_path.display(),
                if put_back.is_empty() {
                    "none".to_owned()
                } else {
                    put_back.join(", ")
                }
            );
            if !left.is_empty() {
                text.push_str(&format!(
                    " Changed since install, left as they are: {}.",
                    left.join(", ")
                ));
            }
            text
        }
    }];
    if !outcome.removed_imports.is_empty() {
        lines.push(format!(
            "Removed from {}: {} (the running gateway keeps serving them until it restarts).",
            r.gateway_config.display(),
            outcome.removed_imports.join(", ")
        ));
    }
    lines.join("\n")
}

#[tauri::command(rename_all = "snake_case")]
pub async fn preview_client_uninstall(host: State<'_, Arc<Host>>, client: String) -> IpcResult<UninstallReport> {
    let outcome = uninstall::run(self::client(&client)?, &host.paths.data_dir, true).map_err(client_error)?;
    Ok(UninstallReport {
        description: describe(&outcome),
    })
}

#[tauri::command(rename_all = "snake_case")]
pub async fn uninstall_client(host: State<'_, Arc<Host>>, client: String) -> IpcResult<UninstallReport> {
    let outcome = uninstall::run(self::client(&client)?, &host.paths.data_dir, false).map_err(client_error)?;
    tracing::info!(client, "client route undone from the app");
    Ok(UninstallReport {
        description: describe(&outcome),
    })
}
