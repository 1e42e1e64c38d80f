//! The libraries an AppImage must take from the host rather than carry, by soname.
//!
//! An AppImage carries what the app needs that a host may lack or have in another version (here
//! WebKitGTK, GTK, GLib, ICU, GStreamer's core, ...). Some libraries cannot travel, for one of
//! these reasons:
//!
//! - **One with the host's loader.** The kernel starts every program with the host's
//!   `ld-linux-x86-64.so.2`, and glibc's libraries are one unit with it: a libc from another
//!   build crashes or fails on symbol versions. The NSS modules also read the host's
//!   /etc/nsswitch.conf. glibc is backward compatible, so the host's serves an app built on an
//!   older glibc.
//! - **One with the host's drivers.** The GL/EGL/GLX dispatch libraries, Mesa's libgbm and
//!   libglapi, libdrm, Vulkan, VA-API and VDPAU load the host's GPU drivers, which are built
//!   against the host's copies; the same holds for what those drivers link: the X client core
//!   (libX11, libxcb and its extensions) and the compiler runtime (libstdc++, libgcc_s: a driver
//!   built with a newer GCC needs the host's, and the host's serves older programs too).
//! - **One with the host's configuration or daemons.** fontconfig reads /etc/fonts, whose format
//!   follows the host's version (and freetype, its companion, comes with it); ALSA loads its
//!   plugins from the host; JACK and PipeWire clients load modules matching the host's daemon.
//! - **Shadowing the host's.** Every library the app carries is found first (AppRun puts
//!   `usr/lib` on `LD_LIBRARY_PATH`), also by the host libraries above. A carried libz or libexpat
//!   older than the host's would break the host's fontconfig or drivers, so those two, present on
//!   every system, come from the host too.
//!
//! The list is matched on the library's name before `.so` (`libxcb-dri3` for
//! `libxcb-dri3.so.0`); a trailing `*` matches any rest. Everything else is carried.

/// Name stems (before `.so`) of the libraries that come from the host.
const HOST_LIBRARIES: &[&str] = &[
    // glibc and its loader
    "ld-linux-x86-64",
    "ld-linux",
    "libc",
    "libm",
    "libmvec",
    "libdl",
    "libpthread",
    "librt",
    "libresolv",
    "libutil",
    "libanl",
    "libBrokenLocale",
    "libnsl",
    "libnss_*",
    "libthread_db",
    "libcidn",
    "libc_malloc_debug",
    "libmemusage",
    "libpcprofile",
    // the compiler runtime the host's drivers are built with
    "libgcc_s",
    "libstdc++",
    // the GL/EGL/GLX and GPU driver stack
    "libGL",
    "libGLX",
    "libGLX_*",
    "libEGL",
    "libEGL_*",
    "libGLESv1_CM",
    "libGLESv2",
    "libGLdispatch",
    "libOpenGL",
    "libglapi",
    "libgbm",
    "libdrm",
    "libdrm_*",
    "libwayland-egl",
    "libvulkan",
    "libva",
    "libva-*",
    "libvdpau",
    // the X client core the drivers link
    "libX11",
    "libX11-xcb",
    "libxcb",
    "libxcb-*",
    // the host's configuration and daemons
    "libfontconfig",
    "libfreetype",
    "libasound",
    "libjack",
    "libpipewire-*",
    // under the host's fontconfig and drivers
    "libz",
    "libexpat",
];

/// Whether the library named `soname` comes from the host (is not deployed).
pub fn from_host(soname: &str) -> bool {
    let stem = soname.split_once(".so").map_or(soname, |(stem, _)| stem);
    HOST_LIBRARIES.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => stem.starts_with(prefix),
        None => stem == *pattern,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_loader_glibc_and_drivers_are_not_carried() {
        for soname in [
            "libc.so.6",
            "ld-linux-x86-64.so.2",
            "libm.so.6",
            "libnss_files.so.2",
            "libGL.so.1",
            "libEGL.so.1",
            "libGLX_mesa.so.0",
            "libgbm.so.1",
            "libdrm_amdgpu.so.1",
            "libxcb-dri3.so.0",
            "libX11.so.6",
            "libstdc++.so.6",
            "libfontconfig.so.1",
            "libpipewire-0.3.so.0",
            "libz.so.1",
        ] {
            assert!(from_host(soname), "{soname} must come from the host");
        }
    }

    #[test]
    fn webkit_gtk_and_their_libraries_are_carried() {
        for soname in [
            "libwebkit2gtk-4.1.so.0",
            "libjavascriptcoregtk-4.1.so.0",
            "libgtk-3.so.0",
            "libglib-2.0.so.0",
            "libicudata.so.72",
            "libcairo.so.2",
            "libXcomposite.so.1",
            "libmd.so.0",
            "libcrypt.so.1",
            "libzstd.so.1",
            "libcap.so.2",
            "libvala.so.0",
            "libdrmfoo",
        ] {
            assert!(!from_host(soname), "{soname} is carried");
        }
    }
}
