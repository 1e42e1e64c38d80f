# The Debian packages the desktop app needs to build and run (WebKitGTK, the tray's
# AppIndicator, ...) and those its end-to-end tests add (Xvfb, D-Bus, a notification daemon,
# WebKitWebDriver, screenshot tools). Sourced by scripts/demo.sh, scripts/test.sh,
# scripts/test-desktop.sh and scripts/package.sh.

DESKTOP_BUILD_PACKAGES=(
    libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libssl-dev libxdo-dev
    build-essential pkg-config curl file dbus dbus-x11
)
DESKTOP_TEST_PACKAGES=(
    xvfb xauth dunst webkit2gtk-driver imagemagick x11-apps x11-utils librsvg2-bin libglib2.0-bin
)
# For the AppImage (scripts/package.sh): mksquashfs, and what the bundler's GTK plugin runs and asks
# pkg-config for (dpkg-architecture, glib-compile-schemas, gobject-introspection's and librsvg's .pc).
PACKAGE_BUILD_PACKAGES=(
    squashfs-tools dpkg-dev libglib2.0-bin libgirepository1.0-dev librsvg2-dev
)

# install_missing_packages PKG...: installs those not installed yet (apt-get, with sudo unless root).
install_missing_packages() {
    local missing=() p
    for p in "$@"; do
        [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == *"install ok installed"* ]] || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        echo "system packages: all present"
        return 0
    fi
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    echo "system packages: installing ${missing[*]}"
    # Another apt (an unattended upgrade, a second script) may hold dpkg's lock: wait for it.
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}
