//! Declares every app command in the app manifest: Tauri then generates an `allow-<command>`
//! permission for each, and a web view may invoke only what its capability grants
//! (`capabilities/*.json`).

include!("src/command_names.rs");

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(COMMANDS);
    let attributes = tauri_build::Attributes::new().app_manifest(manifest);
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri build step failed: {e:#}");
    }
}
