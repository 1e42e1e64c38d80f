#!/usr/bin/env bash
# The .deb tested by installing it (a CI step after the desktop tests): `dpkg -i` — which refuses
# a package whose Depends are not installed — then checks that `portcullis` runs from PATH, that
# the desktop entry and its icons are where the desktop menu looks, and that the installed app
# starts under Xvfb with a D-Bus session, hosts the gateway and relays an MCP call through the
# installed `portcullis connect` (tests/package/check_installed.py); then `dpkg --purge` and a
# check that nothing is left. Needs root (or sudo) and the package from scripts/package.sh.
#
#   DEB=FILE   the package to test (default: the newest in target/release/bundle/deb/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

step() { printf '\n==== package test: %s\n' "$*"; }
fail() { printf 'package test: FAILED: %s\n' "$*" >&2; exit 1; }
started=$SECONDS

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

deb="${DEB:-$(ls -t target/release/bundle/deb/*.deb 2>/dev/null | head -1)}"
[[ -f "$deb" ]] || fail "no .deb: build it with bash scripts/package.sh"
pkg="$(dpkg-deb --field "$deb" Package)"
printf 'package test: %s (%s, %s KiB installed)\n' "$deb" "$pkg" "$(dpkg-deb --field "$deb" Installed-Size)"

# Never replace or purge a copy the person installed themselves.
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    fail "$pkg is already installed on this machine; remove it first (dpkg --purge $pkg) to run this test"
fi
for f in /usr/bin/portcullis /usr/bin/portcullis-desktop; do
    [[ ! -e $f ]] || fail "$f exists outside the package; the test would not know which one it ran"
done

scratch="$(mktemp -d)"
purge() {
    $sudo dpkg --purge "$pkg" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap purge EXIT

step "dpkg -i"
$sudo dpkg -i "$deb"

step "portcullis on PATH"
[[ "$(command -v portcullis)" == /usr/bin/portcullis ]] || fail "portcullis is not /usr/bin/portcullis on PATH: $(command -v portcullis)"
version="$(portcullis --version)"
[[ "$version" == "portcullis $(dpkg-deb --field "$deb" Version)" ]] || fail "portcullis --version says '$version'"
echo "$version"
portcullis serve --help | grep -q -- "--listen" || fail "the installed portcullis is not this build (no serve --listen)"

step "desktop entry and icons"
entry="$(dpkg -L "$pkg" | grep '^/usr/share/applications/.*\.desktop$' || true)"
[[ -n "$entry" && -f "$entry" ]] || fail "no desktop entry in /usr/share/applications"
grep -qx 'Type=Application' "$entry" || fail "$entry: no Type=Application"
grep -qx 'Name=Portcullis' "$entry" || fail "$entry: no Name=Portcullis"
exec_bin="$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$entry")"
[[ -x "$(command -v "$exec_bin")" ]] || fail "$entry: Exec=$exec_bin does not run"
icon="$(sed -n 's/^Icon=//p' "$entry")"
for size in 32x32 128x128 256x256@2; do
    [[ -f "/usr/share/icons/hicolor/$size/apps/$icon.png" ]] || fail "no $size icon /usr/share/icons/hicolor/$size/apps/$icon.png"
done
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$entry"; fi
echo "$entry: Exec=$exec_bin Icon=$icon (32, 128, 256 px)"

step "the installed app under Xvfb: starts, hosts the gateway, relays a call"
# A HOME of its own: WebKit's caches and the app's defaults stay out of the machine's.
mkdir -p "$scratch/home"
HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config" XDG_DATA_HOME="$scratch/home/.local/share" \
    XDG_CACHE_HOME="$scratch/home/.cache" \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
    python3 tests/package/check_installed.py "$scratch/run" "$root/demo/notes_server.py"

step "dpkg --purge leaves nothing behind"
$sudo dpkg --purge "$pkg"
for f in /usr/bin/portcullis /usr/bin/portcullis-desktop "$entry"; do
    [[ ! -e $f ]] || fail "$f is still there after the purge"
done
trap 'rm -rf "$scratch"' EXIT

step "passed ($((SECONDS - started)) s)"
