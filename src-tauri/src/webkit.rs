//! How the app's web views paint: without accelerated compositing, chosen once at start.
//!
//! Compositing costs each web process a GL context and its buffers (with software rendering,
//! llvmpipe's): measured under Xvfb, the prompt's web process held 147 MiB PSS with it and 96 MiB
//! without, the main window's on 1,000 audit rows 280 → 160 MiB (BENCHMARKS.md). The app's pages
//! are forms and tables with no animation that needs the GPU.
//!
//! It is WebKitGTK's environment variable, set before GTK or any thread starts, because the web
//! processes WebKit spawns must inherit it: switching the web view's hardware-acceleration policy
//! after it was built restarts its web process (the page is lost, and a WebDriver session with
//! it). A value already set — `WEBKIT_DISABLE_COMPOSITING_MODE=0` brings compositing back — is
//! left as it is.

const DISABLE_COMPOSITING: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Call first thing in `main`, while the process has one thread.
pub fn paint_without_compositing() {
    if cfg!(target_os = "linux") && std::env::var_os(DISABLE_COMPOSITING).is_none() {
        #[allow(
            clippy::disallowed_methods,
            reason = "WebKit's own child processes read it; main calls this before any thread exists"
        )]
        std::env::set_var(DISABLE_COMPOSITING, "1");
    }
}

/// The name the kernel gives WebKit's network process (its 15-byte `comm`).
const NETWORK_PROCESS: &str = "WebKitNetworkPr";

/// Ends WebKit's network process, which WebKitGTK keeps for the app's life once a web view was
/// made (it has no API to end it): idle in the tray with no web view it held 26–34 MiB of PSS,
/// and 60 MiB of RSS, for nothing (BENCHMARKS.md). WebKit starts a new one for the next web
/// view (the prompt was on screen 77 ms after its call with a fresh one). The app keeps no
/// web storage, so nothing is lost with it. Returns how many were ended.
///
/// Call on the main thread, where web views are built, when none is left: a web view being
/// built at that moment would lose its connection to the process.
///
/// Not while WebDriver drives the app (tauri-driver sets `TAURI_WEBVIEW_AUTOMATION`, which is
/// how Tauri allows automation): WebKit ends the automation session with the network process.
pub fn end_network_process() -> usize {
    if std::env::var_os("TAURI_WEBVIEW_AUTOMATION").is_some_and(|v| v == "true") {
        return 0;
    }
    end_children_named(NETWORK_PROCESS)
}

/// Sends SIGTERM to this process's children named `name`; returns how many were signalled.
fn end_children_named(name: &str) -> usize {
    #[cfg(target_os = "linux")]
    {
        let ended = crate::procfs::children_named(std::process::id(), name)
            .into_iter()
            .filter(|&pid| crate::procfs::terminate(pid).is_ok())
            .count();
        if ended > 0 {
            tracing::debug!(ended, name, "no web view left: ended WebKit's idle process");
        }
        ended
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = name;
        0
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_child_by_that_name_is_ended_and_no_other() {
        let mut named = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let mut other = std::process::Command::new("tail")
            .args(["-f", "/dev/null"])
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        // Until it has exec'd (its comm is then its program's name).
        while crate::procfs::children_named(std::process::id(), "sleep").is_empty() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "the child did not start"
            );
            std::thread::yield_now();
        }
        assert_eq!(end_children_named("sleep"), 1);
        let status = named.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(15),
            "ended by SIGTERM"
        );
        assert_eq!(other.try_wait().unwrap(), None, "a child of another name runs on");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
