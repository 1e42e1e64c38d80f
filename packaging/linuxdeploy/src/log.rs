//! Messages on stderr at linuxdeploy's verbosity levels (`--verbosity`: 0 debug, 1 info,
//! 2 warning, 3 error; Tauri's bundler passes the one matching its own log level).

use std::sync::atomic::{AtomicU8, Ordering};

use anyhow::{bail, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
}

impl Level {
    pub fn parse(text: &str) -> Result<Level> {
        Ok(match text {
            "0" => Level::Debug,
            "1" => Level::Info,
            "2" => Level::Warning,
            "3" => Level::Error,
            _ => bail!("--verbosity {text}: want 0 (debug), 1 (info), 2 (warning) or 3 (error)"),
        })
    }
}

static SHOWN_FROM: AtomicU8 = AtomicU8::new(Level::Info as u8);

/// Shows messages of `level` and above from now on.
pub fn set_level(level: Level) {
    SHOWN_FROM.store(level as u8, Ordering::Relaxed);
}

/// Writes `message` to stderr if its level is shown.
pub fn at(level: Level, message: impl std::fmt::Display) {
    if level as u8 >= SHOWN_FROM.load(Ordering::Relaxed) {
        let tag = match level {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        };
        eprintln!("linuxdeploy [{tag}] {message}");
    }
}

pub fn debug(message: impl std::fmt::Display) {
    at(Level::Debug, message);
}

pub fn info(message: impl std::fmt::Display) {
    at(Level::Info, message);
}
