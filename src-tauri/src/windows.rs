//! The two windows, neither created at start, so an app idle in the tray holds no web view:
//! `main` (tabs; created when opened, destroyed when closed) and `prompt` (created for the first
//! held call, hidden when nothing is pending, and destroyed after [`PROMPT_LINGER`] hidden).
//! With neither left, WebKit's network process is ended too ([`NETWORK_LINGER`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

pub const MAIN: &str = "main";
pub const PROMPT: &str = "prompt";

/// What the prompt window should do after the pending list changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptAction {
    /// Show it and take focus: a new call is waiting.
    ShowAndFocus,
    /// Nothing is pending any more.
    Hide,
    /// Leave it as it is (the person may have hidden it; a resolved call leaves others queued).
    Keep,
}

/// The prompt is visible while calls are pending and comes forward for each new one.
pub fn prompt_action(pending: usize, new_request: bool) -> PromptAction {
    match (pending, new_request) {
        (0, _) => PromptAction::Hide,
        (_, true) => PromptAction::ShowAndFocus,
        (_, false) => PromptAction::Keep,
    }
}

pub fn apply_prompt<R: Runtime>(app: &AppHandle<R>, action: PromptAction) {
    match action {
        PromptAction::ShowAndFocus => show_prompt(app),
        PromptAction::Hide => hide_prompt(app),
        PromptAction::Keep => {}
    }
}

/// How long a hidden prompt keeps its web view: a burst of held calls reuses it (tens of ms to
/// paint), and a prompt idle for longer gives its web process back (~70–100 MiB of PSS).
pub const PROMPT_LINGER: Duration = Duration::from_secs(30);

/// Counts the prompt's shows and hides, so that a release scheduled by a hide is dropped when
/// the prompt was shown again in the meantime.
#[derive(Default)]
pub struct PromptLinger(AtomicU64);

pub fn show_prompt<R: Runtime>(app: &AppHandle<R>) {
    if let Err(e) = try_show_prompt(app, None) {
        tracing::warn!(error = %e, "cannot show the prompt");
    }
}

fn try_show_prompt<R: Runtime>(app: &AppHandle<R>, call: Option<&str>) -> tauri::Result<()> {
    app.state::<PromptLinger>().0.fetch_add(1, Ordering::SeqCst);
    let w = match app.get_webview_window(PROMPT) {
        Some(w) => w,
        None => {
            let url = call.map_or_else(
                || "prompt.html".to_owned(),
                |id| format!("prompt.html?call={}", query_value(id)),
            );
            build_from_config(app, PROMPT, Some(url))?
        }
    };
    w.show()?;
    w.unminimize()?;
    w.set_focus()
}

/// Hides the prompt, and frees its web view once it has stayed hidden for [`PROMPT_LINGER`]
/// with nothing pending (the page reads the queue afresh when it is built again).
pub fn hide_prompt<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(PROMPT) else {
        return;
    };
    let _ = w.hide();
    let generation = app.state::<PromptLinger>().0.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(PROMPT_LINGER).await;
        let still_hidden = app.state::<PromptLinger>().0.load(Ordering::SeqCst) == generation;
        if let (true, Some(w)) = (still_hidden, app.get_webview_window(PROMPT)) {
            if !w.is_visible().unwrap_or(true) {
                tracing::debug!("the prompt stayed hidden: freeing its web view");
                let _ = w.destroy();
            }
        }
    });
}

/// How long WebKit's network process outlives the last web view: a window opened again soon
/// reuses it; after that it is ended, so the idle app holds no WebKit process at all.
pub const NETWORK_LINGER: Duration = Duration::from_secs(30);

/// Counts closed web views, so that only the last close's timer ends the network process.
#[derive(Default)]
pub struct NetworkLinger(AtomicU64);

/// A window (and its web view) was destroyed: when no web view is left [`NETWORK_LINGER`] later
/// and no other was closed since, WebKit's network process is ended. Checked and done on the
/// main thread, where web views are built, so that none is being built at that moment.
pub fn web_view_closed<R: Runtime>(app: &AppHandle<R>) {
    let generation = app.state::<NetworkLinger>().0.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(NETWORK_LINGER).await;
        let on_main = app.clone();
        let _ = app.run_on_main_thread(move || {
            let latest = on_main.state::<NetworkLinger>().0.load(Ordering::SeqCst) == generation;
            if latest && on_main.webview_windows().is_empty() {
                crate::webkit::end_network_process();
            }
        });
    });
}

/// The app's own event to the prompt (beside the gateway's): show this queued call.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ShowApproval {
    pub id: String,
}

/// Shows the prompt on the call `id` (its tray entry or notification was clicked).
pub fn show_prompt_on<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let existed = app.get_webview_window(PROMPT).is_some();
    if let Err(e) = try_show_prompt(app, Some(id)) {
        tracing::warn!(error = %e, "cannot show the prompt");
        return;
    }
    // A prompt built just now was told the call in its address.
    if !existed {
        return;
    }
    if let Err(e) = app.emit_to(PROMPT, "ShowApproval", ShowApproval { id: id.to_owned() }) {
        tracing::warn!(error = %e, "cannot point the prompt at a call");
    }
}

/// Opens (or brings forward) the main window, on `tab` when it is created now.
pub fn show_main<R: Runtime>(app: &AppHandle<R>, tab: Option<&str>) {
    if let Err(e) = try_show_main(app, tab) {
        tracing::error!(error = %e, "cannot open the main window");
    }
}

fn try_show_main<R: Runtime>(app: &AppHandle<R>, tab: Option<&str>) -> tauri::Result<()> {
    let window = match app.get_webview_window(MAIN) {
        Some(w) => w,
        None => build_from_config(app, MAIN, tab.map(|tab| format!("index.html?tab={}", query_value(tab))))?,
    };
    window.show()?;
    window.unminimize()?;
    window.set_focus()
}

/// Builds the window `label` as tauri.conf.json describes it (neither is created at start),
/// on `url` instead of its page when given.
fn build_from_config<R: Runtime>(
    app: &AppHandle<R>,
    label: &str,
    url: Option<String>,
) -> tauri::Result<WebviewWindow<R>> {
    let mut config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == label)
        .cloned()
        .ok_or(tauri::Error::WindowNotFound)?;
    if let Some(url) = url {
        config.url = WebviewUrl::App(url.into());
    }
    WebviewWindowBuilder::from_config(app, &config)?.build()
}

/// `value` as a query-string value: ids and tab names are plain, but nothing may change the
/// address they are put in.
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// After the gateway recovered from a failed start: views reload and read it afresh.
pub fn reload_main<R: Runtime>(app: &AppHandle<R>) {
    if let Some(w) = app.get_webview_window(MAIN) {
        let _ = w.reload();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_follows_the_pending_list() {
        assert_eq!(prompt_action(1, true), PromptAction::ShowAndFocus);
        assert_eq!(
            prompt_action(3, true),
            PromptAction::ShowAndFocus,
            "each new call comes forward"
        );
        assert_eq!(
            prompt_action(2, false),
            PromptAction::Keep,
            "a decision leaves the rest queued"
        );
        assert_eq!(prompt_action(0, false), PromptAction::Hide);
        assert_eq!(
            prompt_action(0, true),
            PromptAction::Hide,
            "a call denied while paused never shows"
        );
    }
}
