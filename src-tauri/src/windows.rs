//! The two windows: `main` (tabs; created when first opened, destroyed when closed, so an idle
//! app holds no main web view) and `prompt` (created hidden at start so it appears at once,
//! hidden rather than closed).

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

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
        PromptAction::Hide => {
            if let Some(w) = app.get_webview_window(PROMPT) {
                let _ = w.hide();
            }
        }
        PromptAction::Keep => {}
    }
}

pub fn show_prompt<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(PROMPT) else {
        tracing::error!("the prompt window is missing");
        return;
    };
    let shown = w.show().and_then(|()| w.unminimize()).and_then(|()| w.set_focus());
    if let Err(e) = shown {
        tracing::warn!(error = %e, "cannot show the prompt");
    }
}

/// The app's own event to the prompt (beside the gateway's): show this queued call.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ShowApproval {
    pub id: String,
}

/// Shows the prompt on the call `id` (its tray entry or notification was clicked).
pub fn show_prompt_on<R: Runtime>(app: &AppHandle<R>, id: &str) {
    show_prompt(app);
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
        None => {
            let mut config = app
                .config()
                .app
                .windows
                .iter()
                .find(|w| w.label == MAIN)
                .cloned()
                .ok_or_else(|| tauri::Error::WindowNotFound)?;
            if let Some(tab) = tab {
                config.url = WebviewUrl::App(format!("index.html?tab={tab}").into());
            }
            WebviewWindowBuilder::from_config(app, &config)?.build()?
        }
    };
    window.show()?;
    window.unminimize()?;
    window.set_focus()
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
