//! The tray icon: its picture, tooltip and menu are drawn from [`menu_model::TrayModel`], a pure
//! function of the pending calls, the pause switch and the gateway's state; each part is redrawn
//! only when the model's part changed.

pub mod menu_model;

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, IsMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Runtime};

use self::menu_model::{Entry, Icon, TrayModel};

pub const TRAY_ID: &str = "portcullis";

/// How often the tray reads the clients' files again: `portcullis clients install` and policy
/// files written by hand change them without telling the app.
pub const SETUP_REFRESH: std::time::Duration = std::time::Duration::from_secs(10);

/// The tray's setup lines: each client that has a config file, with what is routed and what has
/// a policy (the first screen's list); one line when no client was found.
pub fn setup_lines(host: &crate::host::Host) -> Vec<String> {
    let clients = crate::commands::first_run::client_setup(host, &portcullis_config::paths::ProcessEnv);
    let lines: Vec<String> = clients.into_iter().filter(|c| c.found).map(|c| c.line).collect();
    if lines.is_empty() {
        return vec!["No MCP client config found".to_owned()];
    }
    lines
}

fn icon_bytes(icon: Icon) -> &'static [u8] {
    match icon {
        Icon::Idle => include_bytes!("../../icons/tray-idle.png"),
        Icon::Paused => include_bytes!("../../icons/tray-paused.png"),
        Icon::Attention(n) => match n {
            1 => include_bytes!("../../icons/tray-attention-1.png"),
            2 => include_bytes!("../../icons/tray-attention-2.png"),
            3 => include_bytes!("../../icons/tray-attention-3.png"),
            4 => include_bytes!("../../icons/tray-attention-4.png"),
            5 => include_bytes!("../../icons/tray-attention-5.png"),
            6 => include_bytes!("../../icons/tray-attention-6.png"),
            7 => include_bytes!("../../icons/tray-attention-7.png"),
            8 => include_bytes!("../../icons/tray-attention-8.png"),
            9 => include_bytes!("../../icons/tray-attention-9.png"),
            _ => include_bytes!("../../icons/tray-attention-9plus.png"),
        },
        Icon::Failed => include_bytes!("../../icons/tray-attention.png"),
    }
}

fn image(icon: Icon) -> tauri::Result<Image<'static>> {
    Image::from_bytes(icon_bytes(icon))
}

/// Creates the tray icon; menu clicks go to `on_entry` with the entry's id.
pub fn create<R: Runtime>(
    app: &AppHandle<R>,
    model: &TrayModel,
    on_entry: impl Fn(&AppHandle<R>, &str) + Send + Sync + 'static,
) -> tauri::Result<TrayIcon<R>> {
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(image(model.icon)?)
        .tooltip(&model.tooltip)
        .menu(&menu(app, model)?)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| on_entry(app, event.id().as_ref()))
        .build(app)
}

/// Redraws the parts of the tray where `next` differs from `shown`. Returns whether all of them
/// were drawn; if not, the caller keeps `shown` as the last model drawn in full, so the next
/// redraw covers every part that may be stale.
pub fn render<R: Runtime>(app: &AppHandle<R>, shown: &TrayModel, next: &TrayModel) -> bool {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return false;
    };
    let parts = menu_model::redraw(shown, next);
    let mut result = Ok(());
    if parts.icon {
        result = result.and_then(|()| tray.set_icon(Some(image(next.icon)?)));
    }
    if parts.tooltip {
        result = result.and_then(|()| tray.set_tooltip(Some(&next.tooltip)));
    }
    if parts.menu {
        result = result.and_then(|()| tray.set_menu(Some(menu(app, next)?)));
    }
    if let Err(e) = &result {
        tracing::warn!(error = %e, "cannot update the tray");
    }
    result.is_ok()
}

fn menu<R: Runtime, M: Manager<R>>(app: &M, model: &TrayModel) -> tauri::Result<Menu<R>> {
    let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
    for entry in &model.entries {
        let item: Box<dyn IsMenuItem<R>> = match entry {
            Entry::Separator => Box::new(PredefinedMenuItem::separator(app)?),
            Entry::Item { id, label, enabled } => Box::new(MenuItem::with_id(app, id, label, *enabled, None::<&str>)?),
            Entry::Check { id, label, checked } => {
                Box::new(CheckMenuItem::with_id(app, id, label, true, *checked, None::<&str>)?)
            }
        };
        items.push(item);
    }
    let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(AsRef::as_ref).collect();
    Menu::with_items(app, &refs)
}
