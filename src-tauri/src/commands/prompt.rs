//! `prompt_painted`: the prompt page reports its first paint, which ends the start-up warm-up
//! show (see [`crate::windows::warm_prompt`]).

use tauri::{AppHandle, Runtime};

#[tauri::command]
pub fn prompt_painted<R: Runtime>(app: AppHandle<R>) {
    crate::windows::prompt_painted(&app);
}
