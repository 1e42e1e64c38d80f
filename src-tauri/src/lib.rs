//! `portcullis-desktop`: the Tauri tray app that hosts the Portcullis gateway in-process.
//!
//! A thin shell: the gateway ([`portcullis_keeper`]) decides, holds and records calls; this crate
//! starts it with the same config and data dir as `portcullis serve` ([`host`], [`startup`]),
//! attaches as its approver for the app's life, and shows what it does — the approval prompt and
//! the main window ([`windows`], web views from `ui/`), the tray ([`tray`]), OS notifications
//! ([`notification`]). The web views reach the gateway only through [`commands`] (thin adapters,
//! each granted per window in `capabilities/`) and see it through the gateway's events, forwarded
//! by [`events`].
//!
//! Invariants: no SQL and no policy logic here (the audit and policy crates do that); a call can
//! be decided only by a command a window was explicitly granted or a notification action (the
//! gateway itself denies new held calls while paused); the app keeps running with no window open, and a start
//! that fails (config, policy, port, another gateway) opens the main window on the reason
//! instead of exiting.

mod args;
pub mod bindings;
pub mod command_names;
pub mod commands;
pub mod events;
mod export;
mod handover;
pub mod host;
pub mod ipc;
mod logging;
pub mod notification;
#[cfg(target_os = "linux")]
mod procfs;
mod settings;
pub mod startup;
mod takeover;
#[cfg(test)]
mod test_support;
pub mod tray;
pub mod webkit;
pub mod windows;

use std::sync::Arc;

use portcullis_config::paths::ProcessEnv;
use tauri::{AppHandle, Manager, RunEvent, Runtime, WindowEvent};

pub use crate::args::{Args, Paths};
use crate::host::{Host, Phase};
use crate::notification::Notifier;
use crate::tray::menu_model::{self, TrayInput, TrayModel};

/// Runs the app until the person quits it.
pub fn run(args: Args) -> anyhow::Result<()> {
    let paths = Paths::resolve(&args, &ProcessEnv);
    let log = logging::init(&paths.data_dir);
    tracing::info!(config = %paths.config.display(), data_dir = %paths.data_dir.display(), log = ?log, "starting portcullis-desktop");
    if handover::to_running_app(&paths) {
        return Ok(());
    }
    let host = Arc::new(Host::new(paths));
    let show_at_start = args.show;
    let app = configure(tauri::Builder::default(), host)
        .plugin(tauri_plugin_single_instance::init(|app, argv, _cwd| {
            tracing::info!(?argv, "Portcullis is already running: showing its window");
            windows::show_main(app, None);
        }))
        .setup(move |app| {
            setup(app.handle(), show_at_start);
            Ok(())
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| match event {
        // Closing the last window leaves the app in the tray; only Quit (an explicit code) ends it.
        RunEvent::ExitRequested { code: None, api, .. } => api.prevent_exit(),
        RunEvent::Exit => startup::shutdown(app),
        _ => {}
    });
    Ok(())
}

/// The app without its platform parts (tray, plugins): state, commands, window behaviour.
/// Tests configure Tauri's mock builder with it.
pub fn configure<R: Runtime>(builder: tauri::Builder<R>, host: Arc<Host>) -> tauri::Builder<R> {
    builder
        .manage(host)
        .manage(Arc::new(Notifier::default()))
        .manage(startup::Serving::default())
        .manage(windows::PromptLinger::default())
        .manage(windows::NetworkLinger::default())
        .invoke_handler(tauri::generate_handler![
            commands::approvals::list_approvals,
            commands::approvals::decide_approval,
            commands::approvals::extend_approval,
            commands::approvals::dry_run_approval,
            commands::approvals::undo_policy_write,
            commands::approvals::list_grants,
            commands::approvals::revoke_grant,
            commands::audit::query_audit,
            commands::audit::save_audit_export,
            commands::audit::suggest_export_path,
            commands::audit::audit_histogram,
            commands::servers::list_servers,
            commands::servers::restart_server,
            commands::servers::list_tools,
            commands::servers::read_server,
            commands::servers::save_server,
            commands::policy::read_policy,
            commands::policy::validate_policy,
            commands::policy::explain_policy,
            commands::policy::save_policy,
            commands::settings::get_settings,
            commands::settings::set_settings,
            commands::settings::get_paused,
            commands::settings::set_paused,
            commands::settings::get_autostart,
            commands::settings::set_autostart,
            commands::pins::list_changed_tools,
            commands::pins::accept_tool,
            commands::starter::generate_policy,
            commands::clients::list_clients,
            commands::clients::preview_client_install,
            commands::clients::install_client,
            commands::clients::preview_client_uninstall,
            commands::clients::uninstall_client,
            commands::first_run::getting_started,
            commands::first_run::try_held_call,
        ])
        .on_window_event(|window, event| {
            // Closing the prompt hides it (the calls stay pending, in the tray); it lingers for
            // the next call and frees its web view later.
            match (window.label(), event) {
                (windows::PROMPT, WindowEvent::CloseRequested { api, .. }) => {
                    api.prevent_close();
                    windows::hide_prompt(window.app_handle());
                }
                (_, WindowEvent::Destroyed) => windows::web_view_closed(window.app_handle()),
                _ => {}
            }
        })
}

fn setup<R: Runtime>(app: &AppHandle<R>, show_main: bool) {
    let host = app.state::<Arc<Host>>().inner().clone();
    let mut shown = tray_model(&host);
    match tray::create(app, &shown, on_tray_entry) {
        Ok(tray) => {
            // Keep the icon for the app's life; redraw what changed whenever the host says so.
            let app2 = app.clone();
            tauri::async_runtime::spawn(async move {
                let _tray = tray;
                loop {
                    // Woken by the host, or after a while: the clients' files change from outside.
                    let _ = tokio::time::timeout(tray::SETUP_REFRESH, host.changed()).await;
                    let next = tray_model(&host);
                    if tray::render(&app2, &shown, &next) {
                        shown = next;
                    }
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "no tray icon; use the windows"),
    }
    startup::spawn(app.clone());
    quit_on_signal(app.clone());
    if show_main {
        windows::show_main(app, None);
    }
}

/// SIGTERM / SIGINT (logout, `kill`, Ctrl-C) quit like the tray's Quit: the gateway stops its
/// upstreams and removes `gateway.json`.
fn quit_on_signal<R: Runtime>(app: AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("signal received: quitting");
        app.exit(0);
    });
}

fn tray_model(host: &Host) -> TrayModel {
    let (pending, failure, policies) = match host.phase() {
        Phase::Running(r) => (r.gateway.pending_approvals(), None, r.gateway.health().policies),
        Phase::Failed(e) => (Vec::new(), Some(e.code().replace('_', " ")), Vec::new()),
        Phase::Starting => (Vec::new(), None, Vec::new()),
    };
    menu_model::model(&TrayInput {
        pending: &pending,
        paused: host.paused(),
        failure: failure.as_deref(),
        setup: &tray::setup_lines(host),
        policies: &policies,
    })
}

fn on_tray_entry<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let host = app.state::<Arc<Host>>();
    match id {
        menu_model::OPEN => windows::show_main(app, None),
        menu_model::QUIT => app.exit(0),
        menu_model::PAUSE => host.set_paused(!host.paused()),
        other if other.starts_with(menu_model::POLICY_PREFIX) => windows::show_main(app, Some("servers")),
        // A pending call: the prompt, on that call. "More waiting": the prompt's queue.
        other => match menu_model::approval_id(other) {
            Some(approval) => windows::show_prompt_on(app, approval),
            None => windows::show_prompt(app),
        },
    }
}
