#!/usr/bin/env bash
# Run the Portcullis end-to-end suite against target/debug/portcullis (or $PORTCULLIS_BIN).
#
#   tests/e2e/run.sh            install peers if needed, then run the mcp1 and mcp2 suites
#   tests/e2e/run.sh -k echo    extra arguments go to both pytest runs
#
# Gateway tests are skipped when the binary is missing, unless PORTCULLIS_E2E_REQUIRE_GATEWAY=1
# (the default when CI=true), which makes a missing binary fail them.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if [[ "${CI:-}" == "true" ]]; then
    export PORTCULLIS_E2E_REQUIRE_GATEWAY="${PORTCULLIS_E2E_REQUIRE_GATEWAY:-1}"
fi

scripts/test-peers.sh || exit 1

status=0
tests/.peers/venv1/bin/pytest tests/e2e/mcp1 "$@" </dev/null || status=1
tests/.peers/venv2/bin/pytest tests/e2e/mcp2 "$@" </dev/null || status=1
exit $status
