#!/usr/bin/env bash
# Soak: drive mixed allowed / denied / rate-limited / approved traffic through a real gateway and
# server-everything for SECONDS (default 60), then report calls by decision and the gateway's
# memory and open descriptors at start and end; exits 1 on growth beyond noise (see scripts/soak.py).
#   scripts/soak.sh [SECONDS] [--warmup SECONDS]
# Needs the test peers (scripts/test-peers.sh) and a built binary (PORTCULLIS_BIN, else
# target/debug/portcullis, built here if missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PORTCULLIS_BIN="${PORTCULLIS_BIN:-$root/target/debug/portcullis}"
if [[ ! -x "$PORTCULLIS_BIN" ]]; then
    cargo build -p portcullis
fi
python="$root/tests/.peers/venv1/bin/python"
if [[ ! -x "$python" ]]; then
    bash scripts/test-peers.sh
fi
exec "$python" scripts/soak.py "$@"
