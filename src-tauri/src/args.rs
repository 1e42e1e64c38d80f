//! Command line: the same `--config` / `--data-dir` resolution as `portcullis serve`.

use std::path::PathBuf;

use clap::Parser;
use portcullis_config::paths::{self, Environment};

#[derive(Debug, Clone, Parser)]
#[command(
    name = "portcullis-desktop",
    version,
    about = "Portcullis desktop app: the tray, the approval prompt and the gateway in one process"
)]
pub struct Args {
    /// Config file (default: $PORTCULLIS_CONFIG, else ~/.config/portcullis/portcullis.json)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory for audit.db, gateway.json and the log (default: $PORTCULLIS_HOME, else the
    /// platform data dir)
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Open the main window at start (otherwise the app starts in the tray)
    #[arg(long)]
    pub show: bool,
}

/// Where this app instance reads its config and keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config: PathBuf,
    pub data_dir: PathBuf,
}

impl Paths {
    pub fn resolve(args: &Args, env: &dyn Environment) -> Self {
        Self {
            config: absolute(paths::config_file(args.config.clone(), env)),
            data_dir: absolute(paths::data_dir(args.data_dir.clone(), env)),
        }
    }
}

/// Relative paths are taken from the working directory at start: a second launch (single
/// instance) or the bundler may run from elsewhere later.
fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    struct Env(Option<&'static str>);
    impl Environment for Env {
        fn var(&self, key: &str) -> Option<OsString> {
            (key == paths::HOME_ENV).then_some(()).and(self.0.map(OsString::from))
        }
    }

    #[test]
    fn flags_beat_the_environment_like_portcullis_serve() {
        let args = Args::parse_from(["x", "--config", "/c/p.json", "--data-dir", "/d"]);
        let p = Paths::resolve(&args, &Env(Some("/env")));
        assert_eq!(p.config, PathBuf::from("/c/p.json"));
        assert_eq!(p.data_dir, PathBuf::from("/d"));
        let p = Paths::resolve(&Args::parse_from(["x"]), &Env(Some("/env")));
        assert_eq!(p.data_dir, PathBuf::from("/env"));
        assert!(p.config.ends_with("portcullis/portcullis.json"));
    }

    #[test]
    fn relative_paths_become_absolute() {
        let p = Paths::resolve(&Args::parse_from(["x", "--data-dir", "rel"]), &Env(None));
        assert!(p.data_dir.is_absolute() && p.data_dir.ends_with("rel"));
    }
}
