//! The app's own settings (`desktop-settings.json` in the data dir): the default approval
//! timeout, OS notifications and the theme. Everything else lives in `portcullis.json` and the
//! policy files, which the gateway owns. Start at login ([`Autostart`]) is not in the file: the
//! platform's own entry is the one truth of it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use portcullis_config::autostart::{self, AutostartError, Kind, Launch, Status};
use portcullis_config::paths::{self, Environment};
use serde::{Deserialize, Serialize};

pub(crate) const SETTINGS_FILE: &str = "desktop-settings.json";
/// The longest default wait for a person that the settings accept (a day).
const MAX_TIMEOUT_SECS: u64 = 86_400;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

/// The settings as the UI sees them (`get_settings` / `set_settings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub approval_timeout_secs: u64,
    pub notifications: bool,
    pub theme: Theme,
}

/// The file as written: the timeout is kept only when it differs from the config's, so a later
/// change to `portcullis.json` still counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SettingsFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approval_timeout_secs: Option<u64>,
    #[serde(default = "yes")]
    notifications: bool,
    #[serde(default)]
    theme: Theme,
}

fn yes() -> bool {
    true
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("the approval timeout must be between 1 and {MAX_TIMEOUT_SECS} seconds")]
    Timeout,
    #[error("cannot save the settings to {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

pub struct SettingsStore {
    path: PathBuf,
    file: Mutex<SettingsFile>,
}

impl SettingsStore {
    /// Reads the file; a missing or unreadable file gives the defaults (logged).
    pub fn load(data_dir: &Path) -> Self {
        let path = data_dir.join(SETTINGS_FILE);
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(path = %path.display(), error = %e, "settings file ignored");
                SettingsFile {
                    notifications: true,
                    ..SettingsFile::default()
                }
            }),
            Err(_) => SettingsFile {
                notifications: true,
                ..SettingsFile::default()
            },
        };
        Self {
            path,
            file: Mutex::new(file),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SettingsFile> {
        self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The timeout set here, if any, which overrides the config's at the next gateway start.
    pub fn timeout_override(&self) -> Option<u64> {
        self.lock().approval_timeout_secs
    }

    pub fn notifications(&self) -> bool {
        self.lock().notifications
    }

    pub fn get(&self, config_timeout_secs: u64) -> Settings {
        let file = self.lock();
        Settings {
            approval_timeout_secs: file.approval_timeout_secs.unwrap_or(config_timeout_secs),
            notifications: file.notifications,
            theme: file.theme,
        }
    }

    pub fn set(&self, settings: &Settings, config_timeout_secs: u64) -> Result<(), SettingsError> {
        if !(1..=MAX_TIMEOUT_SECS).contains(&settings.approval_timeout_secs) {
            return Err(SettingsError::Timeout);
        }
        let file = SettingsFile {
            approval_timeout_secs: (settings.approval_timeout_secs != config_timeout_secs)
                .then_some(settings.approval_timeout_secs),
            notifications: settings.notifications,
            theme: settings.theme,
        };
        let text = serde_json::to_string_pretty(&file).unwrap_or_default();
        let settings_file = portcullis_atomic_file::Options::new(portcullis_atomic_file::Permissions::KeepOrPrivate);
        portcullis_atomic_file::write(&self.path, text.as_bytes(), settings_file).map_err(|source| {
            SettingsError::Write {
                path: self.path.clone(),
                source,
            }
        })?;
        *self.lock() = file;
        Ok(())
    }
}

/// Start at login: the platform's entry ([`portcullis_config::autostart`]), which on starts
/// this app. The same entry `portcullis serve --install-autostart` writes, so either shows here.
pub struct Autostart {
    env: Box<dyn Environment + Send + Sync>,
}

impl Autostart {
    pub fn new(env: Box<dyn Environment + Send + Sync>) -> Self {
        Self { env }
    }

    /// Whether Portcullis (the app or `serve`) starts at login.
    pub fn enabled(&self) -> Result<bool, AutostartError> {
        Ok(matches!(
            autostart::status(self.env.as_ref())?,
            Status::Installed { .. }
        ))
    }

    pub fn set(&self, enabled: bool) -> Result<(), AutostartError> {
        if !enabled {
            return autostart::uninstall(self.env.as_ref()).map(drop);
        }
        let program =
            paths::launchable(std::env::current_exe(), self.env.as_ref()).map_err(|source| AutostartError::Io {
                path: PathBuf::from("the app's own path"),
                source,
            })?;
        let launch = Launch {
            program,
            args: Vec::new(),
            kind: Kind::Desktop,
        };
        autostart::install(&launch, self.env.as_ref()).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeout_follows_the_config_until_changed_here() {
        let dir = tempfile::tempdir().unwrap();
        let store = SettingsStore::load(dir.path());
        assert_eq!(store.get(45).approval_timeout_secs, 45);
        assert!(store.get(45).notifications, "notifications are on by default");
        let mut s = store.get(45);
        s.theme = Theme::Dark;
        store.set(&s, 45).unwrap();
        assert_eq!(store.timeout_override(), None, "same as config: not pinned");
        s.approval_timeout_secs = 90;
        store.set(&s, 45).unwrap();
        let again = SettingsStore::load(dir.path());
        assert_eq!(
            again.get(30),
            Settings {
                approval_timeout_secs: 90,
                notifications: true,
                theme: Theme::Dark
            }
        );
    }

    #[test]
    fn a_zero_timeout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = SettingsStore::load(dir.path());
        let mut s = store.get(45);
        s.approval_timeout_secs = 0;
        assert!(matches!(store.set(&s, 45), Err(SettingsError::Timeout)));
    }
}
