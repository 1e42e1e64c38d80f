//! The files Portcullis keeps and where: the contract the gateway, the CLI and the desktop app
//! share. Reading and writing these files is all this crate does; nothing here runs a gateway.
//!
//! | file | where | module |
//! |------|-------|--------|
//! | `portcullis.json` | `--config`, else `$PORTCULLIS_CONFIG`, else `<config dir>/portcullis/` | [`paths`], [`config`] (read), [`config::edit`] (one server entry changed) |
//! | `policies/<server>.json` | beside `portcullis.json` (its `policies` key) | [`config::Config::policy_path`]; the model is `portcullis-policy` |
//! | `gateway.json` | data dir: `--data-dir`, else `$PORTCULLIS_HOME`, else `<data dir>/portcullis/` | [`gateway_file`]: the running gateway's URL, token, pid, socket |
//! | `audit.db`, `pins.json`, `digest.key`, `connect.sock` | data dir | the gateway runtime's own (`portcullis-gateway`) |
//! | `clients/<client>.json` | data dir | install records of `portcullis-clients` |
//! | `desktop-settings.json` | data dir | the desktop app's settings |
//! | `portcullis.desktop` | `$XDG_CONFIG_HOME/autostart/` (Linux) | [`autostart`]: start at login |
//!
//! `<config dir>` and `<data dir>` are the platform's (`dirs`): `~/.config` and `~/.local/share`
//! on Linux.

pub mod autostart;
pub mod config;
pub mod gateway_file;
pub mod host_env;
pub mod paths;
