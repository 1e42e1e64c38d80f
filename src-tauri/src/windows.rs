//! The two windows: `main` (tabs; created when first opened, destroyed when closed, so an idle
//! app holds no main web view) and `prompt` (created hidden at start so it appears at once,
//! hidden rather than closed).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, PhysicalPosition, Runtime, WebviewUrl, WebviewWindowBuilder};

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

/// Whether the prompt is being shown off screen for its first paint (see [`warm_prompt`]).
#[derive(Default)]
pub struct PromptWarmup(AtomicBool);

/// WebKit sets up rendering the first time a web view is shown, which made the first prompt
/// take 0.5–2.8 s to paint under Xvfb (later ones: tens of ms). So the app shows the prompt once
/// at start, off screen, and hides it when the page reports its first paint
/// ([`prompt_painted`]). Only on X11, where a window may be placed off screen; on Wayland the
/// compositor places windows, and a prompt flashing at start would be worse than a slow first one.
pub fn warm_prompt<R: Runtime>(app: &AppHandle<R>) {
    let on_x11 = std::env::var_os("DISPLAY").is_some() && std::env::var_os("WAYLAND_DISPLAY").is_none();
    let (Some(w), true) = (app.get_webview_window(PROMPT), on_x11) else {
        return;
    };
    app.state::<PromptWarmup>().0.store(true, Ordering::SeqCst);
    let shown = w
        .set_position(PhysicalPosition::new(-20_000, -20_000))
        .and_then(|()| w.show());
    if let Err(e) = shown {
        tracing::debug!(error = %e, "prompt warm-up skipped");
        end_warmup(app);
    }
}

/// The prompt page painted: a warm-up show ends (unless a real call showed it meanwhile).
pub fn prompt_painted<R: Runtime>(app: &AppHandle<R>) {
    if !app.state::<PromptWarmup>().0.load(Ordering::SeqCst) {
        return;
    }
    if let Some(w) = app.get_webview_window(PROMPT) {
        let _ = w.hide();
    }
    end_warmup(app);
}

/// Puts the prompt back where a person expects it, once.
fn end_warmup<R: Runtime>(app: &AppHandle<R>) {
    if app.state::<PromptWarmup>().0.swap(false, Ordering::SeqCst) {
        if let Some(w) = app.get_webview_window(PROMPT) {
            let _ = w.center();
        }
    }
}

pub fn show_prompt<R: Runtime>(app: &AppHandle<R>) {
    let Some(w) = app.get_webview_window(PROMPT) else {
        tracing::error!("the prompt window is missing");
        return;
    };
    end_warmup(app);
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
