//! The Tauri commands: thin adapters that parse their arguments, call the gateway (or the app's
//! settings), and turn errors into [`crate::ipc::IpcError`]. Names and argument keys are the
//! contract in `ui/README.md`; every command is declared in `build.rs` and granted per window in
//! `capabilities/`.

pub mod approvals;
pub mod audit;
pub mod choice;
pub mod clients;
pub mod first_run;
pub mod pins;
pub mod policy;
pub mod servers;
pub mod settings;
pub mod starter;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ecosystem;
