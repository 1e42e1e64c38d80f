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
