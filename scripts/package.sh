#!/usr/bin/env bash
# Builds the Linux packages with Tauri's bundler (tauri-cli from crates.io, pinned below): the
# front end, the release app and the release `portcullis` CLI, then
#   target/release/bundle/deb/Portcullis_<version>_amd64.deb      the app in /usr/bin, the CLI as
#                                                                /usr/bin/portcullis, a desktop entry, icons
#   target/release/bundle/appimage/Portcullis_<version>_amd64.AppImage   with --appimage (see below)
# scripts/test-package.sh installs the .deb and checks it.
#
#   bash scripts/package.sh              the .deb
#   bash scripts/package.sh --appimage   the .deb and the AppImage
#
#   SKIP_APT=1   do not check or install system packages
#
# The AppImage: Tauri's bundler downloads AppRun-x86_64 (github.com/tauri-apps/binary-releases),
# linuxdeploy and its GTK and AppImage plugins from GitHub releases into ~/.cache/tauri the first
# time. Where GitHub cannot be reached it stops with "Downloading .../AppRun-x86_64 ... failed to
# lookup address information"; put those files into ~/.cache/tauri to build it offline. No
# Debian package provides linuxdeploy.
#
# Measured on 2 cores shared with other builds: installing tauri-cli 44 min (15 min of CPU), a
# cold release build of the app 36 min (13 min of CPU); with both in place this script takes
# about 7 minutes (the app's own crate, the CLI's and the bundle).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never

# The bundler matching the workspace's tauri 2.12 (its newest 2.x; 3.0 is an alpha).
TAURI_CLI_VERSION=2.12.4

step() { printf '\n==== package: %s\n' "$*"; }
started=$SECONDS
elapsed() { printf '(%s s)\n' "$((SECONDS - started))"; }

bundles=deb
case "${1:-}" in
    --appimage) bundles=deb,appimage ;;
    "") ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "package: unknown option $1 (try --appimage or --help)" >&2; exit 2 ;;
esac

if [[ -z "${SKIP_APT:-}" ]]; then
    step "system packages"
    # shellcheck source=scripts/desktop-deps.sh
    source scripts/desktop-deps.sh
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}"
fi

step "tauri-cli $TAURI_CLI_VERSION"
if [[ "$(cargo tauri --version 2>/dev/null)" != "tauri-cli $TAURI_CLI_VERSION" ]]; then
    cargo install --locked --version "=$TAURI_CLI_VERSION" tauri-cli
fi
cargo tauri --version

# Build, then strip, then bundle: the release profile keeps line tables for backtraces, which
# would triple the package.
step "build: ui/, the release CLI and the release app (cargo tauri build --no-bundle)"
cargo tauri build --no-bundle -- --locked
elapsed

step "strip the two binaries the package ships"
strip --strip-debug target/release/portcullis-desktop target/release/portcullis

step "bundle: $bundles"
cargo tauri bundle --bundles "$bundles"
elapsed

step "built"
ls -l target/release/bundle/deb/*.deb
if [[ $bundles == *appimage* ]]; then ls -l target/release/bundle/appimage/*.AppImage; fi
