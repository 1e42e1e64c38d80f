#!/usr/bin/env bash
# Quick start, command 2 (and CI's .ci/run): install what the tests need and run every test.
#
# Cheap checks first, so a broken build stops the run in minutes: the module graph, the front
# end's type check and tests, clippy (Linux and Windows). Then one build serves everything after
# it: the `ci` cargo profile (Cargo.toml) builds the Rust tests, the binaries both end-to-end
# suites and the desktop suite run, and the packages under test. Build outputs, the cargo
# installs, the peers' venvs and npm's and pip's downloads live in a cache outside the checkout
# (scripts/ci-cache.sh), so a second run compiles only what changed.
#
# Under CI=true nothing is skipped quietly: a step or test that cannot run fails the run. Outside
# CI a step that cannot run says SKIPPED and why, and the reason is listed in the step table
# printed at the end of every run (passed or failed), beside each step's wall time and its test
# runner's summary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never

# shellcheck source=scripts/ci-cache.sh
source "$root/scripts/ci-cache.sh"
if stable="$(stable_checkout)" && [[ -n $stable ]]; then
    echo "ci cache: this clean clone of $(git rev-parse --short HEAD) runs from $stable (scripts/ci-cache.sh: stable_checkout)"
    exec bash "$stable/scripts/test.sh" "$@"
fi

# ---- the step table ------------------------------------------------------------------------
step_names=()
step_secs=()
step_results=()
step_name=""
step_result=""
step_start=$SECONDS
run_start=$SECONDS
PORTCULLIS_SKIPS="$(mktemp)"
export PORTCULLIS_SKIPS
step_log="$(mktemp)"
end_step() {
    if [[ -n $step_name ]]; then
        local skipped
        skipped="$(paste -sd ';' "$PORTCULLIS_SKIPS")"
        : >"$PORTCULLIS_SKIPS"
        step_names+=("$step_name")
        step_secs+=("$((SECONDS - step_start))")
        step_results+=("${step_result}${skipped:+ SKIPPED: $skipped}")
    fi
    step_name=""
    step_result=""
}
# step NAME [WHAT]: a new step; NAME goes in the table, WHAT (what it checks) only in the log.
step() {
    end_step
    step_name="$1"
    step_start=$SECONDS
    printf '\n==== %s%s\n' "$1" "${2:+: $2}"
}
step_table() {
    local status=$? failed="" i
    [[ $status -ne 0 && -n $step_name ]] && failed=$step_name
    end_step
    printf '\n==== step times (wall clock)\n'
    for i in "${!step_names[@]}"; do
        local mark=""
        [[ ${step_names[$i]} == "$failed" ]] && mark="  <- FAILED (exit $status)"
        printf '%6d s  %-24s %s%s\n' "${step_secs[$i]}" "${step_names[$i]}" "${step_results[$i]}" "$mark"
    done
    printf '%6d s  total\n' "$((SECONDS - run_start))"
    rm -f "$PORTCULLIS_SKIPS" "$step_log"
}
trap step_table EXIT

# summary_of LOG: the last summary line a test runner (nextest, pytest, vitest, fuzz.sh) wrote.
summary_of() {
    sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -E \
        '^ *Summary \[|^(=+ )?[0-9]+ .*(passed|failed|error|skipped).* in [0-9.]+s|^ +Tests +[0-9]+|^test result: |^fuzz: [0-9]+ targets' |
        tail -n 1 | sed -E 's/^ *Summary \[ *[0-9.]+s\] //; s/^=+ //; s/ in [0-9.]+s.*//; s/^ +Tests +//; s/^(test result|fuzz): //' ||
        true
}

# tested CMD...: runs a test runner with its output shown and kept, and puts its summary line in
# the step table.
tested() {
    local status=0
    "$@" 2>&1 | tee "$step_log" || status=$?
    step_result="${step_result:+$step_result; }$(summary_of "$step_log")"
    return "$status"
}

# side_by_side LANE...: the end-to-end suites mostly wait on processes they start, so on 2 cores
# they run in lanes side by side. A lane is a function name; it calls `item NAME CMD...` for each
# suite, one after another. Each item's output goes to its own log, printed whole when all lanes
# are done, and each item gets its own row in the step table (its own wall time and summary).
# The step fails when any item failed; a lane stops at its first failure.
lanes_dir=""
item() {
    local name=$1 start=$SECONDS status=0 log
    shift
    log="$lanes_dir/$(printf '%s' "$name" | tr -c 'A-Za-z0-9' _).log"
    "$@" >"$log" 2>&1 </dev/null || status=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$((SECONDS - start))" "$status" "$log" >>"$lanes_dir/items"
    return "$status"
}
side_by_side() {
    local lane pids=() failed=0 name secs status log
    lanes_dir="$(mktemp -d)"
    : >"$lanes_dir/items"
    for lane in "$@"; do
        ("$lane") &
        pids+=($!)
    done
    for lane in "${pids[@]}"; do wait "$lane" || failed=1; done
    while IFS=$'\t' read -r name secs status log; do
        printf '\n---- %s (%s s, exit %s)\n' "$name" "$secs" "$status"
        cat "$log"
        step_names+=("  $name")
        step_secs+=("$secs")
        step_results+=("$(summary_of "$log")$([[ $status -eq 0 ]] || echo "  <- FAILED (exit $status)")")
    done <"$lanes_dir/items"
    rm -rf "$lanes_dir"
    return "$failed"
}

# ---- setup ---------------------------------------------------------------------------------
step "toolchain, cache"
cargo --version
node --version
python3 --version
setup_ci_cache

step "system packages"
# Everything the run installs from Debian, in one apt-get: the desktop app's build and test
# packages, the AppImage tools' (squashfs-tools, dpkg-dev, ...), the Windows cross build's
# (mingw) and Wine, and Go for the differential servers.
# shellcheck source=scripts/desktop-deps.sh
source "$root/scripts/desktop-deps.sh"
install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}" "${DESKTOP_TEST_PACKAGES[@]}" "${PACKAGE_BUILD_PACKAGES[@]}" \
    gcc-mingw-w64-x86-64 wine64 golang-go

# ---- cheap checks --------------------------------------------------------------------------
step "module graph" "no crate's modules import each other in a circle"
python3 scripts/check-module-cycles.py --self-test
python3 scripts/check-module-cycles.py
python3 scripts/count-doctests.py --self-test

step "ui: check, vitest, dist" "the type check, the component tests and the front end the app embeds"
npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
npm --prefix ui run check
tested npm --prefix ui test
build_ui_dist

# tauri-build rewrites what it generates (src-tauri/permissions, src-tauri/gen) each time the desktop
# crate's build script runs, and watches permissions/. Clippy, the tests and the binaries each run
# that script (clippy's wrapper and the dev-dependencies' features keep their builds apart), so each
# would make the next one rebuild the app, in every run. What it generates follows from tracked
# inputs cargo watches anyway (build.rs, tauri.conf.json, capabilities/), so after each cargo command
# its outputs get one fixed old time.
settle_tauri_generated() {
    find src-tauri/permissions/ src-tauri/gen/ -exec touch -h -d @946684800 {} + 2>/dev/null || true
}

# One feature set for every cargo command below, so they share what they build: the desktop app
# with its front end embedded.
profile=(--profile ci --locked)
features=(--features portcullis-desktop/custom-protocol)

step "clippy" "the workspace and the desktop app (unreachable_pub, pedantic with Cargo.toml's allow-list; warnings fail)"
cargo clippy "${profile[@]}" --workspace --all-targets "${features[@]}" -- -D warnings
settle_tauri_generated

step "clippy for Windows" "the workspace (not the desktop app) for x86_64-pc-windows-gnu"
PORTCULLIS_PROFILE=ci bash scripts/check-windows.sh

# ---- the build, and the Rust tests ---------------------------------------------------------
step "cargo nextest, doctests" "unit, schema drift, integration and the desktop crate's tests"
tested cargo nextest run --cargo-profile ci --locked --workspace "${features[@]}" --no-fail-fast
settle_tauri_generated
# rustdoc's pass costs about 40 s even with nothing to run: only when a doc comment holds Rust.
doctests=$(python3 scripts/count-doctests.py)
if [[ $doctests -gt 0 ]]; then
    cargo test "${profile[@]}" --workspace "${features[@]}" --doc
else
    echo "doctests: none (every code block in a doc comment names another language; scripts/count-doctests.py)"
fi

step "cargo build (bins)" "the binaries the end-to-end suites, the desktop suite and the packages run"
# After the tests: their build links the same binaries with the dev-dependencies' features on,
# and the suites run what a user builds.
cargo build "${profile[@]}" --workspace --bins "${features[@]}" \
    --exclude portcullis-appimage-runtime --exclude portcullis-linuxdeploy
settle_tauri_generated
# Real paths: what the binaries write about themselves (autostart entries, client configs) names
# them so, and target/ is a link into the cache.
export PORTCULLIS_BIN="$(realpath target/ci/portcullis)" PORTCULLIS_DESKTOP_BIN="$(realpath target/ci/portcullis-desktop)"
export PORTCULLIS_E2E_REQUIRE_GATEWAY=1

# Built here, run in the mcp2 lane below: that lane ends first, and a core idles until the others do.
step "fuzz build" "the cargo fuzz targets (fuzz/README.md), run for 10 s each in the mcp2 lane"
tested env FUZZ_PHASE=build bash scripts/fuzz.sh

# ---- end to end ----------------------------------------------------------------------------
step "test peers" "npm packages and Python venvs"
bash scripts/test-peers.sh
# The demo's servers too, here and once: the demo test (mcp1 lane) and the desktop suite (its own
# lane) would otherwise both run `npm ci` in demo/ at the same moment and break each other.
bash scripts/demo-deps.sh

step "docs, CI scripts" "the commands in README.md and docs/ run; where a run takes place (tests/ci)"
tested tests/.peers/venv1/bin/pytest -q -rs tests/docs tests/ci

lane_mcp1() {
    item "e2e mcp1" tests/.peers/venv1/bin/pytest -c tests/e2e/pytest.ini tests/e2e/mcp1
}
lane_mcp2() {
    item "soak" bash scripts/soak.sh 20 --warmup 5 &&
        item "e2e mcp2" tests/.peers/venv2/bin/pytest -c tests/e2e/pytest.ini tests/e2e/mcp2 &&
        item "fuzz" env FUZZ_PHASE=run bash scripts/fuzz.sh 10
}
lane_desktop() {
    item "Wine" env PORTCULLIS_PROFILE=ci PORTCULLIS_WINDOWS_PROFILE=dev bash scripts/test-wine.sh &&
        item "desktop e2e" env SKIP_APT=1 PORTCULLIS_PROFILE=ci bash scripts/test-desktop.sh --e2e-only
}
lane_all() { lane_mcp1 && lane_mcp2 && lane_desktop; }
# Side by side the suites take about half the time they take one after another (they mostly wait
# on processes they start). PORTCULLIS_E2E_LANES=1 runs them one after another.
if [[ ${PORTCULLIS_E2E_LANES:-3} == 3 ]]; then
    step "end to end, in three lanes" "mcp1 | soak, mcp2, fuzz | Wine, desktop (Xvfb, D-Bus, dunst, tauri-driver)"
    side_by_side lane_mcp1 lane_mcp2 lane_desktop
else
    step "end to end" "mcp1, soak, mcp2, fuzz, Wine, desktop (Xvfb, D-Bus, dunst, tauri-driver), one after another"
    side_by_side lane_all
fi

step "package" "the .deb and the AppImage of this build, installed and started"
SKIP_APT=1 bash scripts/package.sh --profile ci
SKIP_APT=1 bash scripts/test-package.sh

end_step
printf '\n==== all tests passed\n'
