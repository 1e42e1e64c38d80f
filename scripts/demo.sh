#!/usr/bin/env bash
# Quick start, command 1: build Portcullis, install the demo MCP servers and run the gateway on
# the bundled demo config (demo/portcullis.json, policies in policies/). Ctrl-C stops it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf 'demo: %s\n' "$*" >&2; }

command -v cargo >/dev/null || { log "cargo not found: install Rust from https://rustup.rs"; exit 1; }
command -v npm >/dev/null || { log "npm not found: apt-get install -y nodejs npm"; exit 1; }

log "building portcullis (first build takes a few minutes)"
cargo build --quiet -p portcullis

if [[ ! -f demo/node_modules/.portcullis-stamp || demo/package-lock.json -nt demo/node_modules/.portcullis-stamp ]]; then
    log "installing the demo MCP servers (npm ci in demo/)"
    (cd demo && npm ci --no-audit --no-fund --loglevel=error </dev/null)
    touch demo/node_modules/.portcullis-stamp
fi

data="${PORTCULLIS_HOME:-$root/demo/.data}"
cat >&2 <<TEXT
demo: starting the gateway; data (audit.db, gateway.json) in $data
demo: point a client at it, e.g.
        $root/target/debug/portcullis connect everything --data-dir $data
      or Streamable HTTP at http://127.0.0.1:7470/mcp/everything with the token from $data/gateway.json
demo: watch decisions with: $root/target/debug/portcullis audit --data-dir $data
TEXT
exec "$root/target/debug/portcullis" serve --config "$root/demo/portcullis.json" --data-dir "$data"
