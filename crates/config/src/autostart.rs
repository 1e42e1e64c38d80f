//! Start at login (issue 14 point 5): one entry per user that starts Portcullis when they log in,
//! written with the platform's own mechanism behind the same few names:
//! - Linux (and other freedesktop systems): an XDG autostart entry,
//!   `$XDG_CONFIG_HOME/autostart/portcullis.desktop` (else `~/.config/autostart/…`);
//! - elsewhere: every call says the platform is not supported yet.
//!
//! There is one entry, whoever writes it: `portcullis serve --install-autostart` makes it start
//! the headless gateway, the desktop app's setting makes it start the app. Both are one gateway
//! per user, so the last one chosen wins and either one's "off" removes it.

#[cfg(all(unix, not(target_os = "macos")))]
#[path = "autostart/xdg.rs"]
mod imp;

#[cfg(not(all(unix, not(target_os = "macos"))))]
#[path = "autostart/other.rs"]
mod imp;

use std::path::PathBuf;

use crate::paths::Environment;

/// What to start at login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program, an absolute path.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Which host this starts, for the entry's name and for [`Status::Installed`].
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `portcullis serve`.
    Serve,
    /// The desktop app.
    Desktop,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    NotInstalled,
    /// Installed by Portcullis, starting that host (`None`: an entry of ours of an unknown kind).
    Installed {
        path: PathBuf,
        kind: Option<Kind>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum AutostartError {
    #[error("start at login is not supported on this platform yet")]
    Unsupported,
    #[error("no place for autostart entries: neither XDG_CONFIG_HOME nor HOME is set")]
    NoConfigDir,
    #[error("{path} exists and was not written by Portcullis; remove it yourself to go on")]
    NotOurs { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Writes (or rewrites) the entry; the same `launch` twice leaves the same file.
pub fn install(launch: &Launch, env: &dyn Environment) -> Result<PathBuf, AutostartError> {
    imp::install(launch, env)
}

/// Removes the entry if it is ours; `Ok(false)` when there was none.
pub fn uninstall(env: &dyn Environment) -> Result<bool, AutostartError> {
    imp::uninstall(env)
}

pub fn status(env: &dyn Environment) -> Result<Status, AutostartError> {
    imp::status(env)
}
