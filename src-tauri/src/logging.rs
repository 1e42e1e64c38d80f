//! The log: `desktop.log` in the data dir (and stderr), filtered by `PORTCULLIS_LOG` like
//! `portcullis serve`.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use tracing_subscriber::fmt::writer::MakeWriterExt;

pub(crate) const LOG_FILE: &str = "desktop.log";
/// A log past this size is started afresh at the next launch.
const MAX_LOG_BYTES: u64 = 10 * 1024 * 1024;

/// Starts logging; returns the log file's path. Without a writable data dir, logs go to stderr
/// only (the gateway's own start then reports the data-dir problem in the window).
pub(crate) fn init(data_dir: &Path) -> Option<PathBuf> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PORTCULLIS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let path = data_dir.join(LOG_FILE);
    let file = create_private_dir(data_dir).and_then(|()| open_log(&path));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(false);
    match file {
        Ok(file) => {
            let writer = std::io::stderr.and(std::sync::Mutex::new(file));
            let _ = builder.with_writer(writer).try_init();
            Some(path)
        }
        Err(e) => {
            let _ = builder.with_writer(std::io::stderr).try_init();
            tracing::warn!(path = %path.display(), error = %e, "cannot open the log file; logging to stderr only");
            None
        }
    }
}

fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    let too_big = std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG_BYTES);
    let mut options = OpenOptions::new();
    options.create(true);
    if too_big {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// The data dir holds the gateway token: only its owner may enter it.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}
