#!/usr/bin/env bash
# Quick start, command 1: build Portcullis and its desktop app, install the demo MCP servers and
# start the app on the bundled demo config (demo/portcullis.json, policies in policies/): it
# lives in the tray, opens its main window, and raises a prompt for every call that needs
# approval. Quitting it (tray menu, Ctrl-C) stops the gateway.
#
#   bash scripts/demo.sh              the desktop app (installs its Debian packages if missing)
#   bash scripts/demo.sh --headless   the gateway alone (`portcullis serve`), no GUI packages
#
#   PORTCULLIS_HOME=DIR   data dir (audit.db, gateway.json); default demo/.data
#   SKIP_APT=1            do not check or install system packages
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf 'demo: %s\n' "$*" >&2; }

headless=""
case "${1:-}" in
    --headless) headless=1 ;;
    "") ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) log "unknown option $1 (try --headless or --help)"; exit 2 ;;
esac

command -v cargo >/dev/null || { log "cargo not found: install Rust from https://rustup.rs"; exit 1; }
command -v npm >/dev/null || { log "npm not found: apt-get install -y nodejs npm"; exit 1; }

data="${PORTCULLIS_HOME:-$root/demo/.data}"
config="$root/demo/portcullis.json"

# Checked before the long build: the app needs a display to show anything.
if [[ -z "$headless" && -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    cat >&2 <<TEXT
demo: there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the desktop app
      cannot open its windows. Either:
        - run this from a desktop session (or with ssh -X), or
        - give it a virtual one: xvfb-run -a bash scripts/demo.sh   (apt-get install xvfb), or
        - run the gateway alone, no GUI: bash scripts/demo.sh --headless
TEXT
    exit 2
fi

if [[ -z "$headless" && -z "${SKIP_APT:-}" ]]; then
    # shellcheck source=scripts/desktop-deps.sh
    source "$root/scripts/desktop-deps.sh"
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}"
fi

if [[ ! -f demo/node_modules/.portcullis-stamp || demo/package-lock.json -nt demo/node_modules/.portcullis-stamp ]]; then
    log "installing the demo MCP servers (npm ci in demo/)"
    (cd demo && npm ci --no-audit --no-fund --loglevel=error </dev/null)
    touch demo/node_modules/.portcullis-stamp
fi

log "building portcullis (the first build takes a few minutes)"
cargo build --quiet -p portcullis

if [[ -n "$headless" ]]; then
    cat >&2 <<TEXT
demo: starting the gateway; data (audit.db, gateway.json) in $data
demo: point a client at it, e.g.
        $root/target/debug/portcullis connect everything --data-dir $data
      or Streamable HTTP at http://127.0.0.1:7470/mcp/everything with the token from $data/gateway.json
demo: be the approver:   $root/target/debug/portcullis approvals watch --data-dir $data
demo: watch decisions:   $root/target/debug/portcullis audit --data-dir $data
TEXT
    exec "$root/target/debug/portcullis" serve --config "$config" --data-dir "$data"
fi

# The front end is embedded in the binary: build it first, when its sources changed.
if [[ ! -f ui/dist/index.html || -n "$(find ui/src ui/index.html ui/prompt.html ui/package-lock.json -newer ui/dist/index.html -print -quit)" ]]; then
    log "building the front end (ui/)"
    npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
    npm --prefix ui run build --silent
fi
log "building the desktop app (the first build takes several minutes)"
cargo build --quiet -p portcullis-desktop --features tauri/custom-protocol

cat >&2 <<TEXT
demo: starting the desktop app; data (audit.db, gateway.json) in $data
demo: point a client at it, e.g.
        $root/target/debug/portcullis connect everything --data-dir $data
      or Streamable HTTP at http://127.0.0.1:7470/mcp/everything with the token from $data/gateway.json
demo: held calls raise the approval prompt; quit from the tray menu or with Ctrl-C
TEXT
app=("$root/target/debug/portcullis-desktop" --config "$config" --data-dir "$data" --show)
# The tray and notifications talk D-Bus; a bare session (root on a server, xvfb-run) has none.
if [[ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]] && command -v dbus-run-session >/dev/null; then
    exec dbus-run-session -- "${app[@]}"
fi
exec "${app[@]}"
