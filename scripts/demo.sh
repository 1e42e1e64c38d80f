#!/usr/bin/env bash
# Quick start, command 1: build Portcullis and its desktop app, install the demo MCP servers and
# start the app on the demo config: it lives in the tray, opens its main window, and raises a
# prompt for every call that needs approval. Quitting it (tray menu, Ctrl-C) stops the gateway.
#
#   bash scripts/demo.sh                          the desktop app (installs its Debian packages if missing)
#   bash scripts/demo.sh --headless [--listen A]  the gateway alone (`portcullis serve`), no GUI packages;
#                                                 --listen 127.0.0.1:0 picks a free port
#
#   PORTCULLIS_HOME=DIR   data dir (config, policies, audit.db, gateway.json); default demo/.data
#   SKIP_APT=1            do not check or install system packages
#
# The demo never writes into tracked files: on first use it copies demo/portcullis.template.json,
# the shipped policies (policies/everything.json, policies/filesystem.json, demo/policies/) and
# demo/sandbox into the data dir, and runs on those copies ("always" decisions edit the copies).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf 'demo: %s\n' "$*" >&2; }
started=$SECONDS
step() { printf '\ndemo: [%s s] %s\n' "$((SECONDS - started))" "$*" >&2; }

headless=""
listen=()
while (($#)); do
    case "$1" in
        --headless) headless=1 ;;
        --listen)
            [[ $# -ge 2 ]] || { log "--listen needs an address, e.g. 127.0.0.1:0"; exit 2; }
            listen=(--listen "$2")
            shift
            ;;
        -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
        *) log "unknown option $1 (try --headless, --listen ADDR or --help)"; exit 2 ;;
    esac
    shift
done
if [[ ${#listen[@]} -gt 0 && -z "$headless" ]]; then
    log "--listen is for --headless (the app listens where its config says: \"listen\" in portcullis.json)"
    exit 2
fi

command -v cargo >/dev/null || { log "cargo not found: install Rust from https://rustup.rs"; exit 1; }
command -v npm >/dev/null || { log "npm not found: apt-get install -y nodejs npm"; exit 1; }
command -v python3 >/dev/null || { log "python3 not found (the demo's notes server): apt-get install -y python3"; exit 1; }

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

data="$(mkdir -p "${PORTCULLIS_HOME:-$root/demo/.data}" && cd "${PORTCULLIS_HOME:-$root/demo/.data}" && pwd)"
config="$data/portcullis.json"

# running_gateway: "PID EXE URL" of the live gateway serving $data, nothing if there is none.
running_gateway() {
    [[ -f "$data/gateway.json" ]] || return 0
    local pid url
    read -r pid url < <(python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); print(g["pid"], g["url"])' \
        "$data/gateway.json" 2>/dev/null) || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    printf '%s %s %s\n' "$pid" "$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null || echo unknown)")" "$url"
}

# Another demo already serves this data dir: the app brings the running one forward by itself
# (even from another D-Bus session); anything else is named rather than failing on the port.
read -r other_pid other_exe other_url < <(running_gateway) || true
if [[ -n "${other_pid:-}" && ! ( "$other_exe" == portcullis-desktop && -z "$headless" ) ]]; then
    cat >&2 <<TEXT
demo: a gateway already serves $data: $other_exe, pid $other_pid, at $other_url.
      Use it, stop it (kill $other_pid), or start a second demo beside it with its own data dir:
        PORTCULLIS_HOME=/tmp/demo2 bash scripts/demo.sh --headless --listen 127.0.0.1:0
TEXT
    exit 1
elif [[ -n "${other_pid:-}" ]]; then
    log "Portcullis is already running on $data (pid $other_pid): the app will bring its window forward"
fi

step "1/4 the demo's data dir: $data"
if [[ ! -f "$config" ]]; then
    # The template's @DEMO@ becomes the absolute demo/ path (the servers' code); everything else
    # is relative to the config, so it stays in the data dir.
    python3 - "$root/demo/portcullis.template.json" "$root/demo" "$config" <<'PY'
import json, sys
template, demo, out = sys.argv[1:4]
def fill(v):
    if isinstance(v, str): return v.replace("@DEMO@", demo)
    if isinstance(v, list): return [fill(x) for x in v]
    if isinstance(v, dict): return {k: fill(x) for k, x in v.items()}
    return v
with open(template) as f: config = fill(json.load(f))
with open(out, "w") as f: json.dump(config, f, indent=2); f.write("\n")
PY
    log "wrote $config (from demo/portcullis.template.json)"
fi
mkdir -p "$data/policies"
for p in policies/everything.json policies/filesystem.json demo/policies/*.json; do
    # Copied once: later "always" decisions and edits in the app change the copy, not the repository.
    [[ -f "$data/policies/$(basename "$p")" ]] || cp "$p" "$data/policies/"
done
[[ -d "$data/sandbox" ]] || cp -r demo/sandbox "$data/sandbox"

if [[ -z "$headless" && -z "${SKIP_APT:-}" ]]; then
    step "2/4 system packages (WebKitGTK, AppIndicator)"
    # shellcheck source=scripts/desktop-deps.sh
    source "$root/scripts/desktop-deps.sh"
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}"
fi

step "2/4 the demo MCP servers (npm ci in demo/ unless up to date)"
bash scripts/demo-deps.sh

# Cargo's own progress (a bar on a terminal, one line per crate otherwise): a first build takes
# minutes and should be seen to move.
step "3/4 building portcullis (the first build takes a few minutes)"
# Binaries already built (scripts/test.sh sets PORTCULLIS_BIN / PORTCULLIS_DESKTOP_BIN to its
# ci build) are used as they are; otherwise the dev build.
cli="${PORTCULLIS_BIN:-$root/target/debug/portcullis}"
[[ -n ${PORTCULLIS_BIN:-} ]] || cargo build -p portcullis

if [[ -n "$headless" ]]; then
    step "4/4 starting the gateway"
    cat >&2 <<TEXT
demo: point a client at it, e.g.
        $cli connect everything --data-dir $data
      or Streamable HTTP at the url in $data/gateway.json with its token
demo: try a held call: $cli connect demo-notes --data-dir $data  (tool write_note)
demo: be the approver:   $cli approvals watch --data-dir $data
demo: watch decisions:   $cli audit --data-dir $data
TEXT
    exec "$cli" serve --config "$config" --data-dir "$data" "${listen[@]}"
fi

desktop_bin="${PORTCULLIS_DESKTOP_BIN:-$root/target/debug/portcullis-desktop}"
# A given binary (the test run's) has its front end embedded already; ui/dist is left alone, since
# rebuilding it would make cargo rebuild the desktop app the next time.
if [[ -z ${PORTCULLIS_DESKTOP_BIN:-} ]]; then
    # The front end is embedded in the binary: build it first, when its sources changed.
    if [[ ! -f ui/dist/index.html || -n "$(find ui/src ui/index.html ui/prompt.html ui/package-lock.json -newer ui/dist/index.html -print -quit)" ]]; then
        step "3/4 building the front end (ui/)"
        npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
        npm --prefix ui run build
    fi
    step "3/4 building the desktop app (the first build takes several minutes)"
    cargo build -p portcullis-desktop --features tauri/custom-protocol
fi

step "4/4 starting the desktop app"
cat >&2 <<TEXT
demo: point a client at it, e.g.
        $cli connect everything --data-dir $data
      or use "Try a held call" on the first screen (the demo-notes server's write_note tool)
demo: held calls raise the approval prompt; quit from the tray menu or with Ctrl-C
TEXT
app=("$desktop_bin" --config "$config" --data-dir "$data" --show)
# The tray and notifications talk D-Bus; a bare session (root on a server, xvfb-run) has none.
if [[ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]] && command -v dbus-run-session >/dev/null; then
    exec dbus-run-session -- "${app[@]}"
fi
exec "${app[@]}"
