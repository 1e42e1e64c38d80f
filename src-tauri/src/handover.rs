//! A second start of the app on a data dir that another copy of the app already serves, from
//! another D-Bus session (two `dbus-run-session`s, `xvfb-run`, ssh), where the single-instance
//! plugin cannot see the first: it brings the running app's window forward and exits, instead
//! of opening a window that only says "already running". A `portcullis serve` on the data dir is
//! not handed over to (it has no window): the app shows it by name and takes over once it stops.

#[cfg(target_os = "linux")]
use std::time::Duration;

use crate::args::Paths;

/// Set on the start that hands over, so it never hands over again.
const HANDING_OVER: &str = "PORTCULLIS_HANDING_OVER";
/// How long the handing-over start may take to reach the running app.
#[cfg(target_os = "linux")]
const HANDOVER_WAIT: Duration = Duration::from_secs(15);

/// Whether the running copy of the app was asked to show its window (so this start should end).
pub(crate) fn to_running_app(paths: &Paths) -> bool {
    if std::env::var_os(HANDING_OVER).is_some() {
        return false;
    }
    let Some(running) = tauri::async_runtime::block_on(portcullis_keeper::running_gateway(&paths.data_dir)) else {
        return false;
    };
    match show_on_its_bus(running.pid, paths) {
        Ok(true) => {
            tracing::info!(
                pid = running.pid,
                url = running.url,
                "Portcullis is already running: showed its window"
            );
            true
        }
        Ok(false) => false,
        Err(e) => {
            tracing::warn!(pid = running.pid, error = %e, "cannot reach the running app; starting anyway");
            false
        }
    }
}

/// Starts the running app's own binary on its D-Bus session with `--show`: the single-instance
/// plugin there passes the request to the running app, which opens its window, and the start
/// exits at once. `Ok(false)`: the gateway is not hosted by this app, or the start did not reach
/// it (it was ended; this start goes on and shows why it cannot serve).
#[cfg(target_os = "linux")]
fn show_on_its_bus(pid: u32, paths: &Paths) -> std::io::Result<bool> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))?;
    let ours = std::env::current_exe()?;
    if exe.file_name() != ours.file_name() {
        return Ok(false);
    }
    let environ = std::fs::read(format!("/proc/{pid}/environ"))?;
    let bus = environ
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"DBUS_SESSION_BUS_ADDRESS="))
        .map(|v| String::from_utf8_lossy(v).into_owned());
    let mut command = std::process::Command::new(&exe);
    command
        .arg("--config")
        .arg(&paths.config)
        .arg("--data-dir")
        .arg(&paths.data_dir)
        .arg("--show")
        .env(HANDING_OVER, "1");
    match bus {
        Some(bus) => command.env("DBUS_SESSION_BUS_ADDRESS", bus),
        None => command.env_remove("DBUS_SESSION_BUS_ADDRESS"),
    };
    let mut child = command.spawn()?;
    let deadline = std::time::Instant::now() + HANDOVER_WAIT;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status.success());
        }
        if std::time::Instant::now() >= deadline {
            // Not a second instance after all (its bus is gone): it would run as an app of its own.
            child.kill()?;
            child.wait()?;
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(not(target_os = "linux"))]
fn show_on_its_bus(_pid: u32, _paths: &Paths) -> std::io::Result<bool> {
    Ok(false)
}
