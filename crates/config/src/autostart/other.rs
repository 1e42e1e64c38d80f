//! Not a freedesktop system: no autostart mechanism written yet (a macOS LaunchAgent or the
//! Windows `Run` key belongs here).

use std::path::PathBuf;

use super::{AutostartError, Launch, Status};
use crate::paths::Environment;

pub(super) fn install(_launch: &Launch, _env: &dyn Environment) -> Result<PathBuf, AutostartError> {
    Err(AutostartError::Unsupported)
}

pub(super) fn uninstall(_env: &dyn Environment) -> Result<bool, AutostartError> {
    Err(AutostartError::Unsupported)
}

pub(super) fn status(_env: &dyn Environment) -> Result<Status, AutostartError> {
    Err(AutostartError::Unsupported)
}
