//! Starting the user's gateway on demand: `portcullis serve` in the background, detached (its
//! own process group, stdio to `serve.log` in the data dir), with the same config and data dir, under
//! an exclusive lock in the data dir so that two `connect`s at once start one gateway.
//!
//! (Starting the desktop app instead when it is installed and a display is present is not done
//! yet: `serve` is started everywhere.)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use portcullis_config::gateway_file::GatewayFile;

pub(super) const LOCK_FILE: &str = "start.lock";
pub(super) const LOG_FILE: &str = "serve.log";
/// How long a started gateway has to write gateway.json with a socket that answers.
const READY_WITHIN: Duration = Duration::from_secs(20);
/// How long to wait for another `connect` that holds the lock.
#[cfg(unix)]
const LOCK_WITHIN: Duration = Duration::from_secs(25);

pub(super) struct Starter {
    pub config: PathBuf,
    pub data_dir: PathBuf,
}

impl Starter {
    /// Starts a gateway unless one is running or another `connect` just started one; returns
    /// once one answers, or says why none does. Blocking (run it off the async thread).
    pub(super) fn start(&self) -> Result<(), String> {
        let dir = &self.data_dir;
        create_private_dir(dir).map_err(|e| format!("cannot create the data dir {}: {e}", dir.display()))?;
        let _lock = lock(&dir.join(LOCK_FILE))?;
        if answers(dir) {
            return Ok(()); // another connect started it while we waited for the lock
        }
        let log_path = dir.join(LOG_FILE);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
        let exe = std::env::current_exe().map_err(|e| format!("cannot find the portcullis binary: {e}"))?;
        let mut command = std::process::Command::new(exe);
        command
            .arg("serve")
            .arg("--config")
            .arg(&self.config)
            .arg("--data-dir")
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log);
        // Its own process group: the client's group being signalled (a terminal's Ctrl-C, a
        // client killed with its children) does not stop the gateway other clients use. (A new
        // session, setsid, would need `unsafe` pre_exec, which this workspace forbids.)
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let started = Instant::now();
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start `portcullis serve`: {e}"))?;
        tracing::info!(
            pid = child.id(),
            "started `portcullis serve` (log: {})",
            log_path.display()
        );
        while started.elapsed() < READY_WITHIN {
            if answers(dir) {
                tracing::info!(
                    ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    "the started gateway is ready"
                );
                return Ok(());
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "`portcullis serve` exited ({status}); see {}",
                    log_path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!(
            "`portcullis serve` did not become ready within {} s; see {}",
            READY_WITHIN.as_secs(),
            log_path.display()
        ))
    }
}

/// A gateway of this data dir takes connections on its socket.
fn answers(dir: &Path) -> bool {
    let Some(path) = GatewayFile::read(dir).ok().and_then(|f| f.socket) else {
        return false;
    };
    #[cfg(unix)]
    return std::os::unix::net::UnixStream::connect(path).is_ok();
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// The exclusive start lock, polled so the wait is bounded; released when dropped.
#[cfg(unix)]
fn lock(path: &Path) -> Result<impl Drop, String> {
    use nix::fcntl::{Flock, FlockArg};
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let deadline = Instant::now() + LOCK_WITHIN;
    loop {
        let file = options
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(lock),
            Err((_, errno)) if errno == nix::errno::Errno::EWOULDBLOCK && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err((_, errno)) => return Err(format!("cannot take the start lock {}: {errno}", path.display())),
        }
    }
}

/// Off Unix no lock is written yet, so this always refuses (the guard type is never made).
#[cfg(not(unix))]
fn lock(_path: &Path) -> Result<std::fs::File, String> {
    Err("starting a gateway on demand is not available on this platform yet".into())
}
