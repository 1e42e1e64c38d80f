//! Where the config and the data live (DESIGN.md §3): flag, then environment, then platform dir.

use std::ffi::OsString;
use std::path::PathBuf;

pub const CONFIG_ENV: &str = "PORTCULLIS_CONFIG";
pub const HOME_ENV: &str = "PORTCULLIS_HOME";

/// The process environment, injected so tests never mutate the real one.
pub trait Environment {
    fn var(&self, key: &str) -> Option<OsString>;
}

pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, key: &str) -> Option<OsString> {
        std::env::var_os(key).filter(|v| !v.is_empty())
    }
}

pub fn config_file(flag: Option<PathBuf>, env: &dyn Environment) -> PathBuf {
    flag.or_else(|| env.var(CONFIG_ENV).map(PathBuf::from))
        .unwrap_or_else(|| platform_config_dir().join("portcullis.json"))
}

pub fn data_dir(flag: Option<PathBuf>, env: &dyn Environment) -> PathBuf {
    flag.or_else(|| env.var(HOME_ENV).map(PathBuf::from))
        .unwrap_or_else(platform_data_dir)
}

fn platform_config_dir() -> PathBuf {
    dirs::config_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("portcullis")
}

fn platform_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("portcullis")
}

/// Set by the AppImage's runtime (packaging/appimage-runtime) to the AppImage file itself.
pub const APPIMAGE_ENV: &str = "APPIMAGE";

/// The program that something started later — an MCP client, the login session — should launch
/// to reach this one: the AppImage when running from one (the unpacked copy in the cache is
/// replaced by the next build, and its AppRun hands `connect`, `serve` and the CLI's other
/// commands to the CLI), else `running` (this process's own binary).
pub fn launchable(running: std::io::Result<PathBuf>, env: &dyn Environment) -> std::io::Result<PathBuf> {
    appimage(env).map_or(running, Ok)
}

/// The AppImage this process runs from, if it does (an absolute path to an existing file).
pub fn appimage(env: &dyn Environment) -> Option<PathBuf> {
    env.var(APPIMAGE_ENV)
        .map(PathBuf::from)
        .filter(|image| image.is_absolute() && image.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, &'static str>);
    impl Environment for FakeEnv {
        fn var(&self, key: &str) -> Option<OsString> {
            self.0.get(key).map(OsString::from)
        }
    }

    #[test]
    fn flag_beats_environment_beats_platform() {
        let env = FakeEnv(HashMap::from([(HOME_ENV, "/env/home"), (CONFIG_ENV, "/env/c.json")]));
        assert_eq!(data_dir(Some("/flag".into()), &env), PathBuf::from("/flag"));
        assert_eq!(data_dir(None, &env), PathBuf::from("/env/home"));
        assert_eq!(config_file(None, &env), PathBuf::from("/env/c.json"));
        let empty = FakeEnv(HashMap::new());
        assert!(config_file(None, &empty).ends_with("portcullis/portcullis.json"));
    }

    #[test]
    fn a_program_started_later_is_the_appimage_when_running_from_one() {
        struct Env(Option<OsString>);
        impl Environment for Env {
            fn var(&self, key: &str) -> Option<OsString> {
                (key == APPIMAGE_ENV).then(|| self.0.clone()).flatten()
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("Portcullis.AppImage");
        std::fs::write(&image, b"").unwrap();
        let own = || Ok(PathBuf::from("/cache/unpacked/usr/bin/portcullis"));
        assert_eq!(launchable(own(), &Env(Some(image.clone().into()))).unwrap(), image);
        assert_eq!(
            launchable(own(), &Env(None)).unwrap(),
            own().unwrap(),
            "not from an AppImage: this binary"
        );
        for bogus in ["relative.AppImage", "/no/such/file.AppImage"] {
            assert_eq!(
                launchable(own(), &Env(Some(bogus.into()))).unwrap(),
                own().unwrap(),
                "{bogus} names no AppImage"
            );
        }
    }
}
