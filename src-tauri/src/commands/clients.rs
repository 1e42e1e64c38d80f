//! `list_clients`, `preview_client_install`, `install_client`, `preview_client_uninstall`,
//! `uninstall_client`: the Servers view's side of `portcullis clients` (the work is
//! `portcullis_clients`). Each change is shown first and applied only as shown: install
//! re-plans and refuses when the plan differs from the preview the person saw.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use portcullis_clients::{self as clients, install, uninstall, Client, ClientError, Places, Setup};
use portcullis_config::config::Config;
use portcullis_config::paths::{self, Environment, ProcessEnv};
use serde::Serialize;
use tauri::State;
use ts_rs::TS;

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

/// The client launches `portcullis connect NAME --data-dir DIR`: always this app's data dir, so
/// `connect` finds this gateway whatever the client's environment.
fn setup(host: &Host, env: &dyn Environment) -> IpcResult<Setup> {
    Ok(Setup {
        portcullis: portcullis_binary(env)?,
        data_dir_arg: Some(host.paths.data_dir.clone()),
        gateway_config: host.paths.config.clone(),
        data_dir: host.paths.data_dir.clone(),
    })
}

fn plan(host: &Host, env: &dyn Environment, id: &str) -> IpcResult<(install::Plan, Setup)> {
    let client = client(id)?;
    let setup = setup(host, env)?;
    let plan = install::plan(client, &client.config_path(&places(env)?), &setup).map_err(client_error)?;
    Ok((plan, setup))
}

fn preview_of(plan: &install::Plan) -> InstallPreview {
    InstallPreview {
        preview: plan.preview(),
        routed: plan.routed.iter().map(|r| r.name.clone()).collect(),
        imports: plan.imports.iter().map(|(n, _)| n.clone()).collect(),
        skipped: plan.skipped.clone(),
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
    preview_install(&host, &ProcessEnv, &client)
}

pub fn preview_install(host: &Host, env: &dyn Environment, client: &str) -> IpcResult<InstallPreview> {
    let (plan, _) = plan(host, env, client)?;
    Ok(preview_of(&plan))
}

/// Applies the install the person saw: `preview` is the text `preview_client_install` returned.
/// The imported servers are served at once.
#[tauri::command(rename_all = "snake_case")]
pub async fn install_client(host: State<'_, Arc<Host>>, client: String, preview: String) -> IpcResult<InstallPreview> {
    let (plan, setup) = install(&host, &ProcessEnv, &client, &preview)?;
    serve_imports(&host, &setup.gateway_config, &plan).await;
    Ok(preview_of(&plan))
}

/// Writes the install if its plan is still the one previewed; the caller then serves the
/// imported servers ([`serve_imports`]).
pub fn install(host: &Host, env: &dyn Environment, client: &str, preview: &str) -> IpcResult<(install::Plan, Setup)> {
    let (plan, setup) = plan(host, env, client)?;
    if plan.preview() != preview {
        return Err(IpcError::new(
            "preview_stale",
            "the client's file or portcullis.json changed since the preview; review the change again",
        ));
    }
    if plan.is_empty() {
        return Err(IpcError::new(
            "nothing_to_route",
            "no server of this client can be routed",
        ));
    }
    install::apply(&plan, &setup).map_err(client_error)?;
    // The policy files go here (the Policies view writes them); made now, as `clients install` does.
    if let Err(e) = plan.policies_dir().and_then(|dir| {
        std::fs::create_dir_all(&dir).map_err(|e| ClientError(format!("cannot create {}: {e}", dir.display())))
    }) {
        tracing::warn!(error = %e, "no policies directory");
    }
    tracing::info!(
        client,
        routed = plan.routed.len(),
        "client routed through Portcullis from the app"
    );
    Ok((plan, setup))
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
