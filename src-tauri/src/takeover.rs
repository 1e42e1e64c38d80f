//! The app started while `portcullis serve` hosts the gateway for the same data dir takes over
//! (issue 14 point 4): it asks that `serve` to stop (SIGTERM, the way a person would stop it),
//! waits a bounded time for it to let go of the data dir, then hosts the gateway itself.
//! Clients connected through `portcullis connect` reconnect to the app's gateway on their own
//! (their session is restored; a call in flight at that moment fails with the restart error).
//!
//! Taking over rather than attaching as the serve's approver: attaching would need every view
//! and the prompt to work against a remote gateway over the control API, and would leave a
//! gateway the app cannot configure; a restart is what `connect` already survives.
//!
//! Only a process whose command line is `portcullis … serve …` is stopped, and only on Linux
//! (where that can be read from /proc); anything else — another copy of the app, an unknown
//! process — is left alone, and the app says a gateway is already running.

use std::path::Path;
use std::time::Duration;

use portcullis_config::gateway_file::GatewayFile;

/// How long the serve may take to stop: its own drain (3 s) and its upstreams' stop, with room.
const STOP_WITHIN: Duration = Duration::from_secs(12);
/// How often its going is checked meanwhile.
const POLL: Duration = Duration::from_millis(50);

/// Stops the `portcullis serve` with `pid` that gateway.json in `data_dir` names; `true` once it
/// has let go of the data dir, `false` when it is not a serve or did not stop in time.
pub(crate) async fn stop_serve(data_dir: &Path, pid: u32) -> bool {
    if !imp::is_serve(pid) {
        return false;
    }
    tracing::info!(
        pid,
        "portcullis serve runs for this data dir; asking it to stop so the app hosts the gateway"
    );
    if let Err(e) = imp::terminate(pid) {
        tracing::warn!(pid, error = %e, "cannot stop portcullis serve");
        return false;
    }
    let deadline = tokio::time::Instant::now() + STOP_WITHIN;
    while tokio::time::Instant::now() < deadline {
        let file_gone = GatewayFile::read(data_dir).map_or(true, |f| f.pid != pid);
        if file_gone && imp::gone(pid) {
            tracing::info!(pid, "portcullis serve stopped; taking over");
            return true;
        }
        tokio::time::sleep(POLL).await;
    }
    tracing::warn!(pid, "portcullis serve did not stop within {STOP_WITHIN:?}");
    false
}

#[cfg(target_os = "linux")]
mod imp {
    pub(super) use crate::procfs::terminate;

    fn argv(pid: u32) -> Vec<String> {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|raw| {
                raw.split(|b| *b == 0)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `portcullis [global flags] serve …` (not `portcullis-desktop`, not anything else).
    pub(super) fn is_serve(pid: u32) -> bool {
        let argv = argv(pid);
        let program = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p).to_owned());
        program.as_deref() == Some("portcullis") && argv.iter().skip(1).any(|a| a == "serve")
    }

    /// Exited: no process, or a zombie its parent has not reaped yet.
    pub(super) fn gone(pid: u32) -> bool {
        crate::procfs::stat(pid).is_none_or(|s| s.state == 'Z')
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn is_serve(_pid: u32) -> bool {
        false
    }

    pub fn terminate(_pid: u32) -> std::io::Result<()> {
        Err(std::io::Error::other("not supported on this platform"))
    }

    pub fn gone(_pid: u32) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::imp;

    #[test]
    fn only_a_portcullis_serve_is_taken_for_one() {
        assert!(!imp::is_serve(std::process::id()), "the test binary is not a serve");
        assert!(!imp::is_serve(u32::MAX), "no such process");
        assert!(imp::gone(u32::MAX));
        assert!(!imp::gone(std::process::id()));
    }
}
