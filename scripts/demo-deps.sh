#!/usr/bin/env bash
# The demo's MCP servers (npm ci in demo/), unless demo/node_modules is as demo/package-lock.json
# says. Used by scripts/demo.sh, scripts/test-desktop.sh and scripts/test.sh (which runs it once
# before its end-to-end lanes: two lanes running `npm ci` in demo/ at once break each other).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ ! -f demo/node_modules/.portcullis-stamp || demo/package-lock.json -nt demo/node_modules/.portcullis-stamp ]]; then
    (cd demo && npm ci --no-audit --no-fund --loglevel=error </dev/null)
    touch demo/node_modules/.portcullis-stamp
fi
