#!/usr/bin/env bash
# Quick start, command 2 (and CI's .ci/run): install what the tests need and run every test.
# Cheap tests first: Rust unit and integration tests, then the end-to-end suite against real MCP
# servers and clients (npm and PyPI peers installed by scripts/test-peers.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never

# Each step's wall time, printed as a table when the run ends, passed or failed: CI's time is a
# budget (cold <= 40 min, warm <= 15), and this table is where it is read.
step_names=()
step_secs=()
step_name=""
step_start=$SECONDS
run_start=$SECONDS
end_step() {
    if [[ -n $step_name ]]; then
        step_names+=("$step_name")
        step_secs+=("$((SECONDS - step_start))")
    fi
    step_name=""
}
step() {
    end_step
    step_name="$*"
    step_start=$SECONDS
    printf '\n==== %s\n' "$*"
}
step_table() {
    local status=$? failed="" i
    [[ $status -ne 0 && -n $step_name ]] && failed=$step_name
    end_step
    printf '\n==== step times (wall clock)\n'
    for i in "${!step_names[@]}"; do
        local mark=""
        [[ ${step_names[$i]} == "$failed" ]] && mark="  <- FAILED (exit $status)"
        printf '%6d s  %s%s\n' "${step_secs[$i]}" "${step_names[$i]:0:90}" "$mark"
    done
    printf '%6d s  total\n' "$((SECONDS - run_start))"
}
trap step_table EXIT

step "toolchain"
cargo --version
node --version
python3 --version

step "system packages: the desktop app's build dependencies, and squashfs-tools for the AppImage tools' tests"
# shellcheck source=scripts/desktop-deps.sh
source "$root/scripts/desktop-deps.sh"
install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}" squashfs-tools

step "module import graph: no crate's modules import each other in a circle"
python3 scripts/check-module-cycles.py --self-test
python3 scripts/check-module-cycles.py

step "windows: the workspace (not the desktop app) type-checks and lints clean for x86_64-pc-windows-gnu (skipped, saying why, if the target cannot be installed)"
t=$SECONDS
bash scripts/check-windows.sh
printf '(windows check: %s s)\n' "$((SECONDS - t))"

step "cargo build"
cargo build --locked --all-targets

step "clippy (workspace lints: unreachable_pub, pedantic with the allow-list in Cargo.toml; warnings fail)"
cargo clippy --locked --all-targets -- -D warnings

step "cargo test (unit, schema drift, integration)"
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --locked --no-fail-fast
    cargo test --locked --doc
else
    cargo test --locked --no-fail-fast
fi

step "fuzz smoke run: each cargo fuzz target for 10 s (fuzz/README.md)"
bash scripts/fuzz.sh 10

step "ui: unit and component tests (vitest, mocked backend)"
npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
npm --prefix ui run check
npm --prefix ui test

step "test peers (npm + Python venvs)"
bash scripts/test-peers.sh

export PORTCULLIS_BIN="$root/target/debug/portcullis"
export PORTCULLIS_E2E_REQUIRE_GATEWAY=1

step "end-to-end: Python mcp 1.x clients"
tests/.peers/venv1/bin/pytest -c tests/e2e/pytest.ini tests/e2e/mcp1

step "soak (smoke): 20 s of mixed traffic, memory and descriptors must not grow"
bash scripts/soak.sh 20 --warmup 5

step "end-to-end: Python mcp 2.x and TypeScript SDK 2.x clients"
tests/.peers/venv2/bin/pytest -c tests/e2e/pytest.ini tests/e2e/mcp2

step "windows build under Wine: the gateway's unit tests, and connect over the named pipe end to end"
t=$SECONDS
bash scripts/test-wine.sh
printf '(wine: %s s)\n' "$((SECONDS - t))"

step "desktop app: Rust tests and end-to-end on the real binary (Xvfb, D-Bus, tauri-driver)"
bash scripts/test-desktop.sh

step "package: build the .deb and the AppImage (scripts/package.sh, release build), test them by installing and starting them"
t=$SECONDS
bash scripts/package.sh
bash scripts/test-package.sh
printf '(package build and test: %s s)\n' "$((SECONDS - t))"

end_step
printf '\n==== all tests passed\n'
