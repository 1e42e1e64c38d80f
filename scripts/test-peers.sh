#!/usr/bin/env bash
# Install the real MCP peers the end-to-end suite (tests/e2e) talks to.
#
#   tests/peers/node_modules   npm ci from tests/peers/package-lock.json
#                              (server-everything, server-filesystem, @modelcontextprotocol/client 2.x,
#                              @modelcontextprotocol/sdk 1.x, @modelcontextprotocol/inspector 2.x)
#   tests/.peers/venv1         python venv from tests/requirements-mcp1.txt (mcp 1.x, mcp-server-git, pytest)
#   tests/.peers/venv2         python venv from tests/requirements-mcp2.txt (mcp 2.3.0, mcp-server-time, pytest)
#   tests/.peers/proxmox       python venv from tests/requirements-proxmox.txt (proxmox-mcp-server, fakepve)
#   go (golang-go)             Debian's Go for tests/differential/go (apt-get, sudo unless root, only when missing);
#                              the differential test builds that server offline with caches in tests/.peers/go
#
# Idempotent: each part keeps a stamp holding the hash of its inputs and is skipped while the stamp
# matches. Works non-interactively (CI=true, no stdin, root). Set PYTHON to choose the interpreter.
# Usage: scripts/test-peers.sh [--force]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers_dir="$root/tests/peers"
venvs_dir="$root/tests/.peers"
python="${PYTHON:-python3}"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { printf 'test-peers: %s\n' "$*" >&2; }

hash_of() {
    cat "$@" | sha256sum | cut -d' ' -f1
}

# up_to_date STAMP HASH: true when STAMP holds HASH and --force was not given.
up_to_date() {
    [[ $force -eq 0 && -f "$1" && "$(cat "$1")" == "$2" ]]
}

install_node_peers() {
    command -v node >/dev/null || { log "node not found on PATH"; exit 1; }
    command -v npm >/dev/null || { log "npm not found on PATH"; exit 1; }
    local stamp="$peers_dir/node_modules/.portcullis-stamp"
    local want
    want="$(hash_of "$peers_dir/package.json" "$peers_dir/package-lock.json")-node$(node --version)"
    if up_to_date "$stamp" "$want"; then
        log "npm peers up to date ($peers_dir/node_modules)"
        return
    fi
    log "npm ci in $peers_dir"
    (cd "$peers_dir" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
    printf '%s' "$want" >"$stamp"
}

# install_venv NAME REQUIREMENTS
install_venv() {
    local name="$1" req="$2"
    local venv="$venvs_dir/$name"
    local stamp="$venv/.portcullis-stamp"
    local want
    # The venv's own path is in the stamp: its scripts start with it.
    want="$(hash_of "$req")-$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')-$venv"
    if up_to_date "$stamp" "$want" && [[ -x "$venv/bin/python" ]]; then
        log "venv $name up to date ($venv)"
        return
    fi
    log "creating venv $name at $venv from ${req#"$root"/}"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --no-input -r "$req" </dev/null
    printf '%s' "$want" >"$stamp"
}

# The differential servers (tests/differential) need a Go toolchain; encoding/json is the stack under
# test, so Debian's golang-go (1.19) is enough and no module is ever downloaded.
install_go() {
    if command -v go >/dev/null; then
        log "go present ($(go version))"
        return
    fi
    local sudo=""
    [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
    if command -v apt-get >/dev/null && { [[ -z "$sudo" ]] || command -v sudo >/dev/null; }; then
        log "installing golang-go with apt-get${sudo:+ (sudo)}"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq </dev/null
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq golang-go </dev/null >/dev/null
    else
        log "go not found and no apt-get: install Go 1.19+ for the differential test (tests/differential)"
    fi
}

mkdir -p "$venvs_dir"
install_go
install_node_peers
install_venv venv1 "$root/tests/requirements-mcp1.txt"
install_venv venv2 "$root/tests/requirements-mcp2.txt"
install_venv proxmox "$root/tests/requirements-proxmox.txt"
log "done: node peers in tests/peers/node_modules, venvs in tests/.peers/{venv1,venv2,proxmox}"
