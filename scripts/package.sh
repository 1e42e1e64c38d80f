#!/usr/bin/env bash
# Builds the Linux packages: the front end, the release app and the release `portcullis` CLI, then
#   target/release/bundle/deb/Portcullis_<version>_amd64.deb      with Tauri's bundler (tauri-cli
#                               from crates.io, pinned below): the app in /usr/bin, the CLI as
#                               /usr/bin/portcullis, a desktop entry, icons
#   target/release/bundle/appimage/Portcullis_<version>_amd64.AppImage   from the same files
# scripts/test-package.sh installs the .deb, starts the AppImage and checks both.
#
#   bash scripts/package.sh              the .deb and the AppImage
#   bash scripts/package.sh --deb        the .deb alone
#   bash scripts/package.sh --appimage   the .deb and the AppImage (as with no option)
#
#   SKIP_APT=1   do not check or install system packages
#
# The AppImage is built here without Tauri's AppImage bundler, which downloads AppRun,
# linuxdeploy and its plugins from GitHub (unreachable from this project's machines; no Debian
# package has linuxdeploy). It is an AppImage type 2 file: our own runtime
# (packaging/appimage-runtime, a small Rust binary marked "AI\x02" at offset 8), then a squashfs
# image (mksquashfs, gzip) of an AppDir made from the .deb's files: usr/bin/portcullis-desktop,
# usr/bin/portcullis, the desktop entry, the icons, .DirIcon and packaging/appimage/AppRun. Run,
# it unpacks itself once into ~/.cache/portcullis-appimage (no FUSE needed) and starts the app,
# or the CLI when started by the name `portcullis` (a symlink to it); `--appimage-extract` and
# `--appimage-offset` work as with other AppImages.
# Unlike Tauri's AppImage it does not carry GTK and WebKitGTK (linuxdeploy's GTK plugin would
# copy them in): it uses the system's, the same packages the .deb depends on —
# libwebkit2gtk-4.1-0, libgtk-3-0, libayatana-appindicator3-1 (Debian 12 / Ubuntu 22.04 or newer).
#
# Measured on 2 cores shared with other builds: installing tauri-cli 44 min (15 min of CPU), a
# cold release build of the app 36 min (13 min of CPU); with both in place this script takes
# about 7 minutes (the app's own crate, the CLI's and the bundle); the AppImage adds about 1.5
# minutes the first time (its runtime's build: 70 s, 35 s of CPU) and 10-25 s after (mksquashfs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never

# The bundler matching the workspace's tauri 2.12 (its newest 2.x; 3.0 is an alpha).
TAURI_CLI_VERSION=2.12.4

step() { printf '\n==== package: %s\n' "$*"; }
started=$SECONDS
elapsed() { printf '(%s s)\n' "$((SECONDS - started))"; }

want_appimage=yes
case "${1:-}" in
    --deb) want_appimage="" ;;
    --appimage | "") ;;
    -h | --help) awk 'NR > 1 && /^set -euo/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "package: unknown option $1 (try --deb, --appimage or --help)" >&2; exit 2 ;;
esac

if [[ -z "${SKIP_APT:-}" ]]; then
    step "system packages"
    # shellcheck source=scripts/desktop-deps.sh
    source scripts/desktop-deps.sh
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}"
    # mksquashfs, for the AppImage.
    [[ -z $want_appimage ]] || install_missing_packages squashfs-tools
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

step "bundle: the .deb"
cargo tauri bundle --bundles deb
elapsed
deb="target/release/bundle/deb/$(python3 -c 'import json; c = json.load(open("src-tauri/tauri.conf.json")); print(c["productName"] + "_" + c["version"])')_amd64.deb"
[[ -f $deb ]] || { echo "package: the bundler made no $deb" >&2; exit 1; }

if [[ -n $want_appimage ]]; then
    step "AppImage: its runtime (packaging/appimage-runtime, profile appimage-runtime)"
    cargo build --locked --profile appimage-runtime -p portcullis-appimage-runtime
    step "AppImage: the AppDir from the .deb's files, squashed behind the runtime"
    appimage="target/release/bundle/appimage/$(basename "${deb%.deb}").AppImage"
    bash packaging/appimage/build.sh target/appimage-runtime/portcullis-appimage-runtime "${deb%.deb}/data" "$appimage"
    elapsed
fi

step "built"
ls -l "$deb" ${appimage:+"$appimage"}
