//! The environment an MCP server should start in when the desktop app runs from the AppImage.
//!
//! The AppImage's AppRun points the app at the libraries it carries: `LD_LIBRARY_PATH` into the
//! image, GTK/GIO/GdkPixbuf module paths, `PATH` with the image's `usr/bin`, and a working
//! directory inside the image (WebKitGTK's rewritten paths need it). A server the gateway starts
//! must not inherit any of that: a Python or Node server linked against the host's newer
//! libraries could load the image's older ones, and a relative path in its arguments would
//! resolve inside the image. So AppRun writes down what it changed, and [`HostEnv`] undoes it for
//! each child:
//!
//! - `PORTCULLIS_APPRUN_CHANGED`: the names of the variables it set or changed, space-separated;
//! - `PORTCULLIS_HOST_<NAME>`: the caller's value of each that had one (a listed name without one
//!   was unset before);
//! - `PORTCULLIS_APPRUN_CWD`: the caller's working directory (the app's own is inside the image).
//!
//! Without `PORTCULLIS_APPRUN_CHANGED` (the .deb, a source build, the CLI) nothing changes.

use std::ffi::OsString;
use std::path::PathBuf;

/// Lists the variables AppRun changed.
pub const CHANGED_ENV: &str = "PORTCULLIS_APPRUN_CHANGED";
/// The caller's working directory.
pub const CWD_ENV: &str = "PORTCULLIS_APPRUN_CWD";
/// Prefix of the caller's saved values.
pub const SAVED_PREFIX: &str = "PORTCULLIS_HOST_";

/// What a child's environment needs to be the caller's again.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HostEnv {
    /// Variables to set to the caller's value (`Some`) or remove (`None`).
    pub vars: Vec<(OsString, Option<OsString>)>,
    /// The caller's working directory, for a child given none of its own.
    pub cwd: Option<PathBuf>,
}

impl HostEnv {
    /// Read from this process's environment.
    #[must_use]
    pub fn current() -> Self {
        Self::from_vars(std::env::vars_os())
    }

    /// Read from a list of variables (this process's, or a test's).
    pub fn from_vars(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
        let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let Some(changed) = get(CHANGED_ENV) else {
            return Self::default();
        };
        let changed = changed.to_string_lossy().into_owned();
        let mut out: Vec<(OsString, Option<OsString>)> = changed
            .split_whitespace()
            .map(|name| (OsString::from(name), get(&format!("{SAVED_PREFIX}{name}"))))
            .collect();
        // The bookkeeping itself is not the child's business either.
        out.push((CHANGED_ENV.into(), None));
        for (key, _) in &vars {
            if key.to_string_lossy().starts_with(SAVED_PREFIX) {
                out.push((key.clone(), None));
            }
        }
        let cwd = get(CWD_ENV).map(PathBuf::from).filter(|dir| dir.is_absolute());
        Self { vars: out, cwd }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn outside_the_appimage_nothing_changes() {
        let env = HostEnv::from_vars(vars(&[("LD_LIBRARY_PATH", "/opt/lib"), (CWD_ENV, "/home/me")]));
        assert_eq!(env, HostEnv::default());
    }

    #[test]
    fn what_apprun_changed_is_restored_or_removed() {
        let env = HostEnv::from_vars(vars(&[
            (CHANGED_ENV, "PATH LD_LIBRARY_PATH GTK_PATH PORTCULLIS_APPRUN_CWD"),
            ("PATH", "/img/usr/bin:/usr/bin"),
            ("PORTCULLIS_HOST_PATH", "/usr/bin"),
            ("LD_LIBRARY_PATH", "/img/usr/lib"),
            ("GTK_PATH", "/img/usr/lib/gtk-3.0"),
            (CWD_ENV, "/home/me/project"),
            ("HOME", "/home/me"),
        ]));
        assert_eq!(
            env.vars,
            vec![
                ("PATH".into(), Some("/usr/bin".into())),
                ("LD_LIBRARY_PATH".into(), None),
                ("GTK_PATH".into(), None),
                (CWD_ENV.into(), None),
                (CHANGED_ENV.into(), None),
                ("PORTCULLIS_HOST_PATH".into(), None),
            ]
        );
        assert_eq!(env.cwd, Some(PathBuf::from("/home/me/project")));
    }

    #[test]
    fn a_relative_owd_is_not_trusted() {
        let env = HostEnv::from_vars(vars(&[(CHANGED_ENV, ""), (CWD_ENV, "rel")]));
        assert_eq!(env.cwd, None);
    }
}
