#!/usr/bin/env bash
# The desktop app's tests (a CI step beside scripts/test.sh): system packages, the demo MCP servers,
# tauri-driver and a Python venv for Selenium, ui/dist, the app built with its front end embedded,
# the desktop crate's Rust tests, then the end-to-end suite on the real binary under Xvfb with a
# D-Bus session (dunst answers notifications by D-Bus activation). Idempotent; fast when done.
#
#   bash scripts/test-desktop.sh              all of it
#   bash scripts/test-desktop.sh --e2e-only   only the end-to-end suite, on binaries already built
#                                             (scripts/test.sh: its nextest and clippy steps cover
#                                             the desktop crate, its build makes the binaries)
#
#   PORTCULLIS_PROFILE=P    the cargo profile to build and run (default dev; scripts/test.sh: ci)
#   PORTCULLIS_E2E_KEEP=1   keep the suite's scratch dir (config, policies, data, logs)
#   SKIP_APT=1              do not check or install system packages
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CARGO_TERM_COLOR=never

step() { printf '\n==== %s\n' "$*"; }
e2e_only=""
[[ ${1:-} == --e2e-only ]] && e2e_only=yes
profile="${PORTCULLIS_PROFILE:-dev}"
profile_dir=$profile
[[ $profile == dev ]] && profile_dir=debug
elapsed() { printf '(%s s)\n' "$((SECONDS - $1))"; }

# shellcheck source=scripts/desktop-deps.sh
source scripts/desktop-deps.sh
if [[ -z "${SKIP_APT:-}" ]]; then
    step "system packages"
    install_missing_packages "${DESKTOP_BUILD_PACKAGES[@]}" "${DESKTOP_TEST_PACKAGES[@]}"
fi

step "demo MCP servers (npm ci in demo/)"
bash scripts/demo-deps.sh

step "tauri-driver"
if ! tauri-driver --help >/dev/null 2>&1; then
    # Into CARGO_INSTALL_ROOT when set (scripts/test.sh: its cache), else ~/.cargo/bin.
    cargo install tauri-driver --locked --version '^2'
fi
command -v WebKitWebDriver >/dev/null || { echo "WebKitWebDriver missing (package webkit2gtk-driver)" >&2; exit 1; }

step "Python venv for Selenium (tests/.peers/desktop)"
venv=tests/.peers/desktop
reqs=src-tauri/tests/e2e/requirements.txt
# The stamp names the requirements and the venv's own path (its scripts start with it).
want="$(cat "$reqs" | sha256sum | cut -c1-16)-$root/$venv"
if [[ ! -x $venv/bin/pytest || "$(cat "$venv/.stamp" 2>/dev/null)" != "$want" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r "$reqs"
    printf '%s' "$want" >"$venv/.stamp"
fi

if [[ -z $e2e_only ]]; then # to the end suite's binaries

step "front end (ui/dist)"
t=$SECONDS
npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
npm --prefix ui run build
elapsed $t

# The front end is embedded only with tauri/custom-protocol; build and test with the same features
# so neither rebuilds the other's artefacts. Tests first: the e2e binary is the plain build.
features=(--features tauri/custom-protocol --profile "$profile")

step "cargo test -p portcullis-desktop"
t=$SECONDS
cargo test --locked -p portcullis-desktop "${features[@]}"
elapsed $t

step "cargo build -p portcullis-desktop (and the portcullis CLI the suite runs beside it)"
t=$SECONDS
cargo build --locked -p portcullis-desktop "${features[@]}"
cargo build --locked -p portcullis --profile "$profile"
elapsed $t

step "clippy -p portcullis-desktop (workspace lints: unreachable_pub, pedantic; warnings fail)"
t=$SECONDS
cargo clippy --locked -p portcullis-desktop "${features[@]}" --all-targets -- -D warnings
elapsed $t

fi # --e2e-only

export PORTCULLIS_DESKTOP_BIN="${PORTCULLIS_DESKTOP_BIN:-$root/target/$profile_dir/portcullis-desktop}"
export PORTCULLIS_BIN="${PORTCULLIS_BIN:-$root/target/$profile_dir/portcullis}"

step "end to end: the real app under Xvfb (tauri-driver, WebKitWebDriver, D-Bus, dunst)"
t=$SECONDS
xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
    "$venv/bin/pytest" -s -c src-tauri/tests/e2e/pytest.ini src-tauri/tests/e2e
elapsed $t

step "desktop tests passed (screenshots in docs/screenshots/)"
