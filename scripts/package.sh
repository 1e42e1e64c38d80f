#!/usr/bin/env bash
# Builds the Linux packages: the front end, the release app and the release `portcullis` CLI, then
# both packages in one pass of Tauri's bundler (Tauri's CLI, pinned in packaging/tauri-cli/):
#   target/release/bundle/deb/Portcullis_<version>_amd64.deb            the app in /usr/bin, the CLI
#                               as /usr/bin/portcullis, a desktop entry, icons; WebKitGTK and GTK
#                               are the system's (the package depends on them)
#   target/release/bundle/appimage/Portcullis_<version>_amd64.AppImage   the same files with
#                               WebKitGTK, GTK and the libraries they need inside: it runs where
#                               webkit2gtk-4.1 is not installed
# scripts/test-package.sh installs the .deb, starts the AppImage and checks both.
#
#   bash scripts/package.sh              the .deb and the AppImage
#   bash scripts/package.sh --deb        the .deb alone
#   bash scripts/package.sh --appimage   the .deb and the AppImage (as with no option)
#   bash scripts/package.sh --profile P  bundle the binaries already built with cargo profile P
#                                        (scripts/test.sh: `ci`) instead of building release ones;
#                                        they are copied where the bundler reads them, into
#                                        target/release/. For tests of the packaging: users'
#                                        packages are built with the release profile.
#
#   SKIP_APT=1   do not check or install system packages
#
# The AppImage: Tauri's AppImage bundler makes the AppDir (the .deb's files, the WebKit helper
# processes, an AppRun, the icon), then runs linuxdeploy with its GTK plugin and linuxdeploy's
# AppImage output plugin. It would download AppRun, linuxdeploy and that plugin from GitHub
# (unreachable from this project's machines; no Debian package has linuxdeploy) unless they are
# in its tools directory: with "useLocalToolsDir" (src-tauri/tauri.conf.json) that is
# target/.tauri/, which this script fills from source before bundling:
#   AppRun-x86_64                          packaging/appimage/AppRun
#   linuxdeploy-07333c6-x86_64.AppImage    packaging/linuxdeploy (portcullis-linuxdeploy): deploys
#                                          the libraries every ELF file in the AppDir needs into
#                                          usr/lib, except the host's (glibc, the GL and driver
#                                          stack, ...: packaging/linuxdeploy/src/exclude.rs)
#   linuxdeploy-plugin-appimage.AppImage   its output plugin: a squashfs of the AppDir behind
#   portcullis-appimage-runtime            our AppImage type 2 runtime (packaging/appimage-runtime),
#                                          which unpacks itself once into ~/.cache/portcullis-appimage
#                                          (no FUSE needed) and runs AppRun
# The bundler writes the GTK plugin itself (it carries it). Run, the AppImage starts the app, or
# the CLI when started by the name `portcullis` (a symlink to it) or with a CLI command first;
# `--appimage-extract` and `--appimage-offset` work as with other AppImages.
#
# Tauri's CLI is its npm build (@tauri-apps/cli, a prebuilt native module, locked in
# packaging/tauri-cli/): the same Rust code as `cargo install tauri-cli`, without compiling its
# ~630 crates (19-44 min on 2 cores). It is installed with `npm install`, not `npm ci`: the
# registry lacks some other platforms' builds of 2.12.4, which `npm ci` counts as a lock out of
# step; `npm install --no-save` takes the locked versions and integrity and skips them.
# A cold release build of the app takes 36 min (13 min of CPU) on 2 cores shared with other
# builds; see BENCHMARKS.md ("Packages") for this script's time and the packages' sizes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never


step() { printf '\n==== package: %s\n' "$*"; }
started=$SECONDS
elapsed() { printf '(%s s)\n' "$((SECONDS - started))"; }

want_appimage=yes
prebuilt=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --deb) want_appimage="" ;;
        --appimage) ;;
        --profile)
            prebuilt="${2:?package: --profile needs a cargo profile name}"
            shift
            ;;
        -h | --help) awk 'NR > 1 && /^set -euo/ { exit } NR > 1' "$0"; exit 0 ;;
        *) echo "package: unknown option $1 (try --deb, --appimage, --profile P or --help)" >&2; exit 2 ;;
    esac
    shift
done

if [[ -z "${SKIP_APT:-}" ]]; then
    step "system packages"
    # shellcheck source=scripts/desktop-deps.sh
    source scripts/desktop-deps.sh
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}"
    [[ -z $want_appimage ]] || install_missing_packages "${PACKAGE_BUILD_PACKAGES[@]}"
fi

step "Tauri's CLI (npm install in packaging/tauri-cli/)"
(cd packaging/tauri-cli && npm install --no-save --no-audit --no-fund --loglevel=error </dev/null)
tauri() { "$root/packaging/tauri-cli/node_modules/.bin/tauri" "$@"; }
tauri --version

# Build, then strip, then bundle: the release profile keeps line tables for backtraces, which
# would triple the package.
if [[ -z $prebuilt ]]; then
    step "build: ui/, the release CLI and the release app (tauri build --no-bundle)"
    tauri build --no-bundle -- --locked
    elapsed
else
    step "the binaries built with the $prebuilt profile, where the bundler reads them (target/release/)"
    for bin in portcullis portcullis-desktop; do
        [[ -x target/$prebuilt/$bin ]] || {
            echo "package: no target/$prebuilt/$bin: build it first (cargo build --profile $prebuilt --bins --features portcullis-desktop/custom-protocol)" >&2
            exit 1
        }
    done
    mkdir -p target/release
    # Copies, not links: the bundler marks the app's binary in place with the package type.
    cp target/"$prebuilt"/portcullis target/"$prebuilt"/portcullis-desktop target/release/
fi

step "strip the two binaries the package ships"
strip --strip-debug target/release/portcullis-desktop target/release/portcullis

if [[ -n $want_appimage ]]; then
    step "AppImage tools for the bundler: target/.tauri/ from packaging/ (linuxdeploy, its AppImage plugin, the runtime, AppRun)"
    cargo build --locked --profile appimage-runtime -p portcullis-appimage-runtime -p portcullis-linuxdeploy
    tools=target/.tauri
    mkdir -p "$tools"
    built=target/appimage-runtime
    # The names the bundler looks for (tauri-bundler's linuxdeploy.rs): present, nothing is fetched.
    install -m 755 "$built/portcullis-linuxdeploy" "$tools/linuxdeploy-07333c6-x86_64.AppImage"
    install -m 755 "$built/portcullis-linuxdeploy-plugin-appimage" "$tools/linuxdeploy-plugin-appimage.AppImage"
    install -m 755 "$built/portcullis-appimage-runtime" "$tools/portcullis-appimage-runtime"
    install -m 755 packaging/appimage/AppRun "$tools/AppRun-x86_64"
    bundles=deb,appimage
else
    bundles=deb
fi

step "bundle: $bundles (tauri bundle, one pass)"
tauri bundle --bundles "$bundles"
elapsed
deb="target/release/bundle/deb/$(python3 -c 'import json; c = json.load(open("src-tauri/tauri.conf.json")); print(c["productName"] + "_" + c["version"])')_amd64.deb"
[[ -f $deb ]] || { echo "package: the bundler made no $deb" >&2; exit 1; }
if [[ -n $want_appimage ]]; then
    appimage="target/release/bundle/appimage/$(basename "${deb%.deb}").AppImage"
    [[ -f $appimage ]] || { echo "package: the bundler made no $appimage" >&2; exit 1; }
fi

step "built"
ls -l "$deb" ${appimage:+"$appimage"}
