#!/usr/bin/env bash
# The packages from scripts/package.sh tested as a user meets them (a CI step after the desktop
# tests). The .deb by installing it: `dpkg -i` — which refuses a package whose Depends are not
# installed — then checks that `portcullis` runs from PATH, that the desktop entry and its icons
# are where the desktop menu looks, and that the installed app starts under Xvfb with a D-Bus
# session, hosts the gateway and relays an MCP call through the installed `portcullis connect`
# (tests/package/check_installed.py); then `dpkg --purge` and a check that nothing is left.
# Then the AppImage, with the .deb gone: the file Tauri's bundler wrote (its AppDir layout, the GTK
# plugin's hook, our AppRun); an ELF file with the AppImage type 2 magic and a squashfs at its
# `--appimage-offset`; `--appimage-extract` yields the AppDir (AppRun, the desktop entry, the
# icon, .DirIcon, the .deb's own binaries) with WebKitGTK inside: libwebkit2gtk-4.1 with its paths
# rewritten by the GTK plugin, the WebKit helper processes, GTK, and none of the host-only
# libraries (glibc, GL); the CLI inside answers `--version` through a `portcullis` symlink to the
# AppImage (first start unpacking into the cache, second start reusing it, both timed); and the
# AppImage starts the app under Xvfb, which hosts the gateway and relays a call through that
# symlink (the same check_installed.py), with the app and its WebKitWebProcess mapping the
# AppImage's libwebkit2gtk (and the app its GTK and AppIndicator), not the system's. That run has
# the host's copies hidden (a mount namespace with empty files bound over libwebkit2gtk-4.1,
# libjavascriptcoregtk-4.1 and libayatana-appindicator3, an empty directory over webkit2gtk-4.1/),
# so it shows the AppImage runs where WebKitGTK is not installed; where `unshare -m` is not permitted it fails
# under CI=true, and elsewhere says SKIPPED and runs with the host's visible. Needs root (or sudo).
#
#   DEB=FILE             the package to test (default: the newest in target/release/bundle/deb/)
#   APPIMAGE_FILE=FILE   the AppImage (default: the newest in target/release/bundle/appimage/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

step() { printf '\n==== package test: %s\n' "$*"; }
fail() { printf 'package test: FAILED: %s\n' "$*" >&2; exit 1; }
# newest FILE...: the most recently modified of the files (nothing when the glob matched none).
newest() {
    local f best=""
    for f in "$@"; do [[ -f $f && ( -z $best || $f -nt $best ) ]] && best=$f; done
    printf '%s' "$best"
}
started=$SECONDS

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

deb="${DEB:-$(newest target/release/bundle/deb/*.deb)}"
[[ -f "$deb" ]] || fail "no .deb: build it with bash scripts/package.sh"
appimage="${APPIMAGE_FILE:-$(newest target/release/bundle/appimage/*.AppImage)}"
[[ -f "$appimage" ]] || fail "no AppImage: build it with bash scripts/package.sh"
appimage="$(realpath "$appimage")"
pkg="$(dpkg-deb --field "$deb" Package)"
printf 'package test: %s (%s, %s KiB installed)\n' "$deb" "$pkg" "$(dpkg-deb --field "$deb" Installed-Size)"

# Never replace or purge a copy the person installed themselves.
if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" == *"install ok installed"* ]]; then
    fail "$pkg is already installed on this machine; remove it first (dpkg --purge $pkg) to run this test"
fi
for f in /usr/bin/portcullis /usr/bin/portcullis-desktop; do
    [[ ! -e $f ]] || fail "$f exists outside the package; the test would not know which one it ran"
done

scratch="$(mktemp -d)"
# A HOME of its own for the apps: WebKit's caches, the app's defaults and the AppImage's
# extraction stay out of the machine's.
mkdir -p "$scratch/home"
home_env=(HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config" XDG_DATA_HOME="$scratch/home/.local/share"
    XDG_CACHE_HOME="$scratch/home/.cache")
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
[[ "$(portcullis serve --help)" == *--listen* ]] || fail "the installed portcullis is not this build (no serve --listen)"

step "desktop entry and icons"
entry="$(dpkg -L "$pkg" | grep '^/usr/share/applications/.*\.desktop$' || true)"
[[ -n "$entry" && -f "$entry" ]] || fail "no desktop entry in /usr/share/applications"
check_entry() { # ENTRY ICON_ROOT: the entry names the app, runs, and its icons are under ICON_ROOT
    local entry=$1 icons=$2 size
    grep -qx 'Type=Application' "$entry" || fail "$entry: no Type=Application"
    grep -qx 'Name=Portcullis' "$entry" || fail "$entry: no Name=Portcullis"
    exec_bin="$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$entry")"
    icon="$(sed -n 's/^Icon=//p' "$entry")"
    for size in 32x32 128x128 256x256@2; do
        [[ -f "$icons/hicolor/$size/apps/$icon.png" ]] || fail "no $size icon $icons/hicolor/$size/apps/$icon.png"
    done
    if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$entry"; fi
    echo "$entry: Exec=$exec_bin Icon=$icon (32, 128, 256 px)"
}
check_entry "$entry" /usr/share/icons
[[ -x "$(command -v "$exec_bin")" ]] || fail "$entry: Exec=$exec_bin does not run"

step "the installed app under Xvfb: starts, hosts the gateway, relays a call"
under_xvfb() { env "${home_env[@]}" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- "$@"; }
under_xvfb python3 tests/package/check_installed.py "$scratch/run" "$root/demo/notes_server.py"

step "dpkg --purge leaves nothing behind"
$sudo dpkg --purge "$pkg"
for f in /usr/bin/portcullis /usr/bin/portcullis-desktop "$entry"; do
    [[ ! -e $f ]] || fail "$f is still there after the purge"
done
trap 'rm -rf "$scratch"' EXIT

step "AppImage: the file Tauri's bundler wrote"
printf 'package test: %s (%s bytes)\n' "$appimage" "$(stat -c %s "$appimage")"
bundled="$(realpath -m "$root/target/release/bundle/appimage/$(basename "${deb%.deb}").AppImage")"
if [[ -z ${APPIMAGE_FILE:-} ]]; then
    [[ $appimage == "$bundled" ]] || fail "the AppImage is $appimage, not the bundler's $bundled"
fi

step "AppImage: an ELF file with the type 2 magic, a squashfs at its offset"
bytes() { od -An -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; } # FILE OFFSET COUNT, in hex
[[ "$(bytes "$appimage" 0 4)" == 7f454c46 ]] || fail "$appimage is not an ELF file"
[[ "$(bytes "$appimage" 8 3)" == 414902 ]] || fail "$appimage has no AppImage type 2 magic (AI\\x02 at offset 8)"
offset="$("$appimage" --appimage-offset)"
[[ "$(bytes "$appimage" "$offset" 4)" == 68737173 ]] || fail "no squashfs (hsqs) at --appimage-offset $offset"
printf "ELF, AI\\\\x02, squashfs at %s\n" "$offset"

step "AppImage: --appimage-extract yields the bundler's AppDir"
mkdir "$scratch/extract" "$scratch/deb"
(cd "$scratch/extract" && "$appimage" --appimage-extract >/dev/null)
appdir="$scratch/extract/squashfs-root"
[[ -x $appdir/AppRun ]] || fail "the AppDir has no executable AppRun"
cmp -s "$appdir/AppRun" packaging/appimage/AppRun || fail "the AppDir's AppRun is not packaging/appimage/AppRun (the bundler copies it from target/.tauri/AppRun-x86_64)"
top_entries=("$appdir"/*.desktop)
[[ -f ${top_entries[0]} ]] || fail "the AppDir has no desktop entry at its top"
# The bundler links the entry at the top; its GTK plugin writes the AppRun hook.
[[ "$(readlink "${top_entries[0]}")" == usr/share/applications/*.desktop ]] || fail "${top_entries[0]} is not the bundler's link into usr/share/applications"
[[ -f $appdir/apprun-hooks/linuxdeploy-plugin-gtk.sh ]] || fail "no apprun-hooks/linuxdeploy-plugin-gtk.sh: the bundler's GTK plugin did not run"
check_entry "${top_entries[0]}" "$appdir/usr/share/icons"
[[ -f "$appdir/$icon.png" ]] || fail "no $icon.png (the entry's Icon) at the AppDir's top"
[[ "$(bytes "$(realpath "$appdir/.DirIcon")" 0 4)" == 89504e47 ]] || fail ".DirIcon is not a PNG at the AppDir's top"
dpkg-deb -x "$deb" "$scratch/deb"
cmp -s "$appdir/usr/bin/portcullis" "$scratch/deb/usr/bin/portcullis" || fail "the AppImage's usr/bin/portcullis is not the .deb's"
# The bundler marks the app's binary with the package it goes into (tauri-bundler's patch_binary:
# __TAURI_BUNDLE_TYPE_VAR_DEB, _APP for an AppImage); apart from that mark the two are one file.
python3 - "$appdir/usr/bin/portcullis-desktop" "$scratch/deb/usr/bin/portcullis-desktop" <<'PY' || fail "the AppImage's usr/bin/portcullis-desktop is not the .deb's, marked for an AppImage by the bundler"
import sys
appimage, deb = (open(p, "rb").read() for p in sys.argv[1:3])
mark = b"__TAURI_BUNDLE_TYPE_VAR_"
assert mark + b"APP" in appimage and mark + b"DEB" not in appimage, "the AppImage's app is not marked APP"
assert mark + b"DEB" in deb, "the .deb's app is not marked DEB"
assert appimage.replace(mark + b"APP", mark + b"DEB") == deb, "the two apps differ beyond the mark"
PY
echo "AppRun, $(basename "${top_entries[0]}") -> $(readlink "${top_entries[0]}"), $icon.png, .DirIcon, the GTK hook, the .deb's two binaries (the app marked for an AppImage)"

step "AppImage: WebKitGTK inside, the host-only libraries not"
lib="$appdir/usr/lib"
helpers="$appdir/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/webkit2gtk-4.1"
for f in "$lib/libwebkit2gtk-4.1.so.0" "$lib/libjavascriptcoregtk-4.1.so.0" "$lib/libgtk-3.so.0" "$lib/libglib-2.0.so.0" \
    "$lib/libayatana-appindicator3.so.1" \
    "$helpers/WebKitWebProcess" "$helpers/WebKitNetworkProcess" "$helpers/injected-bundle/libwebkit2gtkinjectedbundle.so"; do
    [[ -f $f ]] || fail "the AppDir has no ${f#"$appdir/"}"
done
for f in libc.so.6 libm.so.6 ld-linux-x86-64.so.2 libstdc++.so.6 libGL.so.1 libEGL.so.1 libX11.so.6 libxcb.so.1 libfontconfig.so.1; do
    [[ ! -e $lib/$f ]] || fail "the AppDir carries $f, which must come from the host (packaging/linuxdeploy/src/exclude.rs)"
done
# The GTK plugin rewrote libwebkit2gtk's built-in /usr paths to ././ (AppRun runs the app in usr/).
grep -qaF "././/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/webkit2gtk-4.1" "$lib/libwebkit2gtk-4.1.so.0" ||
    fail "the AppImage's libwebkit2gtk-4.1 does not look for its helpers under ././ (the GTK plugin's rewrite)"
printf 'libwebkit2gtk-4.1 (%s MiB, helper paths rewritten), the WebKit helpers, GTK, GLib, AppIndicator; %s libraries in usr/lib, none of glibc, GL, X11 core, fontconfig\n' \
    "$(($(stat -c %s "$lib/libwebkit2gtk-4.1.so.0") / 1048576))" "$(find "$lib" -maxdepth 1 -name '*.so*' | wc -l)"

step "AppImage: the CLI inside, through a portcullis symlink to it"
mkdir "$scratch/bin"
ln -s "$appimage" "$scratch/bin/portcullis"
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
first="$(env "${home_env[@]}" "$scratch/bin/portcullis" --version)"
t1=$(ms)
second="$(env "${home_env[@]}" "$scratch/bin/portcullis" --version)"
t2=$(ms)
[[ "$first" == "portcullis $(dpkg-deb --field "$deb" Version)" && "$second" == "$first" ]] ||
    fail "the AppImage's portcullis --version says '$first', then '$second'"
cache="$scratch/home/.cache/portcullis-appimage"
[[ "$(stat -c %a "$cache")" == 700 && "$(ls -A "$cache" | wc -l)" == 1 ]] || fail "$cache: not one private extraction: $(ls -lA "$cache")"
echo "$first: first start (unpacks into the cache) $((t1 - t0)) ms, second start $((t2 - t1)) ms"

step "AppImage: a client installed from it launches the AppImage, whose AppRun hands connect to the CLI"
mkdir -p "$scratch/clients-home/.cursor"
echo '{"mcpServers": {"notes": {"command": "python3", "args": ["notes.py"]}}}' >"$scratch/clients-home/.cursor/mcp.json"
env "${home_env[@]}" "$appimage" clients install cursor --yes --home "$scratch/clients-home" \
    --config "$scratch/clients-home/portcullis.json" --data-dir "$scratch/clients-data" >/dev/null
python3 - "$scratch/clients-home/.cursor/mcp.json" "$appimage" <<'PY' || fail "the client does not launch the AppImage"
import json, sys
entry = json.load(open(sys.argv[1]))["mcpServers"]["notes"]
assert entry["command"] == sys.argv[2] and entry["args"][:2] == ["connect", "notes"], entry
PY
[[ "$(env "${home_env[@]}" "$appimage" connect --help)" == *"Relay stdio"* ]] || fail "the AppImage does not run 'connect' as the CLI"

step "AppImage under Xvfb, with the host's WebKitGTK hidden: starts the app on its own WebKitGTK, hosts the gateway, relays a call"
# The AppImage's extraction, where the app and its WebKitWebProcess must map libwebkit2gtk from.
extracted="$(realpath "$cache/$(ls -A "$cache")")"
run_appimage_app=(python3 tests/package/check_installed.py "$scratch/run-appimage" "$root/demo/notes_server.py"
    "$appimage" "$scratch/bin/portcullis" "$extracted")
# The host's copies of what the AppImage carries and the app loads first: WebKitGTK (and its
# JavaScriptCore) and the tray's AppIndicator, by the soname links the loader follows.
host_copies=()
for soname in libwebkit2gtk-4.1.so.0 libjavascriptcoregtk-4.1.so.0 libayatana-appindicator3.so.1; do
    # awk reads to the end (no early exit): under pipefail, ldconfig would die of SIGPIPE.
    path="$(ldconfig -p | awk -v n="$soname" '$1 == n && !found { print $NF; found = 1 }')"
    [[ -z $path ]] || host_copies+=("$path")
done
mkdir "$scratch/empty-dir" && : >"$scratch/empty-file"
hide_skipped=""
if [[ ${#host_copies[@]} -eq 0 || ${host_copies[0]} != */libwebkit2gtk-4.1.so.0 ]]; then
    hide_skipped="the host has no WebKitGTK to hide"
elif [[ $(id -u) -ne 0 ]]; then
    hide_skipped="hiding the host's WebKitGTK needs root (unshare -m, mount --bind)"
elif ! unshare -m mount --bind "$scratch/empty-file" "${host_copies[0]}" 2>"$scratch/unshare.err"; then
    hide_skipped="unshare -m / mount --bind not permitted here: $(head -1 "$scratch/unshare.err")"
fi
if [[ -z $hide_skipped ]]; then
    # In a mount namespace of its own (private: the host's mounts are untouched): an empty file
    # over each host copy (through its soname link), an empty directory over the WebKit helpers'
    # directory; a check that they are hidden; then the app.
    unshare -m bash -c '
        set -euo pipefail
        empty_file=$1 empty_dir=$2 count=$3
        shift 3
        copies=("${@:1:count}")
        shift "$count"
        helpers="$(dirname "${copies[0]}")/webkit2gtk-4.1"
        for f in "${copies[@]}"; do mount --bind "$empty_file" "$f"; done
        mount --bind "$empty_dir" "$helpers"
        for f in "${copies[@]}"; do [[ ! -s $f ]] || { echo "$f is not hidden" >&2; exit 1; }; done
        [[ -z "$(ls -A "$helpers")" ]] || { echo "$helpers is not hidden" >&2; exit 1; }
        echo "host copies hidden (empty): ${copies[*]} $helpers/"
        exec "$@"' bash "$scratch/empty-file" "$scratch/empty-dir" "${#host_copies[@]}" "${host_copies[@]}" \
        env "${home_env[@]}" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- "${run_appimage_app[@]}"
else
    # shellcheck source=scripts/skip.sh
    source scripts/skip.sh
    cannot_run "hiding the host's WebKitGTK from the AppImage's app: $hide_skipped; the app runs with it visible"
    under_xvfb "${run_appimage_app[@]}"
fi

step "passed ($((SECONDS - started)) s)"
