#!/usr/bin/env bash
# The Portcullis benchmark suite (issue 5) in one command. Not part of CI's pass/fail; `--smoke`
# is a run of seconds that CI could afford.
#
#   1. cargo build --release -p portcullis
#   2. peers: scripts/test-peers.sh (server-everything, server-filesystem, Python mcp 1.x + mcp-server-git)
#      and sparfenyuk mcp-proxy (pinned in bench/requirements-mcp-proxy.txt) in tests/.peers/mcp-proxy;
#      eqtylab mcp-guardian-proxy built from its source (MCP_GUARDIAN_SRC: a git dir or a source tree;
#      default /work/.mirror/eqtylab+mcp-guardian/repo when it exists) under
#      ${XDG_CACHE_HOME:-~/.cache}/portcullis-bench/mcp-guardian, once (rebuilt only when the binary is
#      missing: remove that dir to rebuild); without a source its rows are skipped, and the run says so
#   3. the load client and the floor: crates/gate/benches/{loadgen,byte_relay}.rs (cargo bench --no-run)
#   4. criterion: policy evaluation (1,000 entries), audit record→commit and query (1,000,000 rows),
#      wire parse / SSE encode, a 20,000-tool tools/list filtered; summary from target/criterion
#      (bench/criterion_summary.py)
#   5. end to end, in one run, alternating: bench/e2e.py (direct / a Python line relay and a compiled
#      byte relay, the floor of any proxy / portcullis connect / portcullis HTTP / mcp-proxy; 50 sessions x 1,000 calls; held call → ApprovalRequested; idle RSS)
#      then bench/big_message.py (peak gateway memory for a 15 MiB argument and a 15 MiB result)
#   6. with --profile: bench/profile.py (perf record on the gateway under load, CPU per call by part)
#   7. with --desktop: the desktop app's footprint on its release build (PSS of the app and its WebKit
#      processes, from /proc/*/smaps_rollup: idle in the tray, a prompt shown, the main window on
#      1,000 audit rows, that window closed again), src-tauri/tests/e2e/test_memory.py under Xvfb,
#      then src-tauri/tests/e2e/footprint_plain.py (the same app without WebDriver: idle, a prompt,
#      idle again with no WebKit process left); the desktop packages, tauri-driver and the Selenium
#      venv come from scripts/test-desktop.sh
#   8. with --desktop-soak[=MINUTES]: the release app under mixed use for MINUTES (default 60), its
#      memory idle in the tray after every round; fails on growth (src-tauri/tests/e2e/soak_desktop.py)
#
# Usage: [MCP_GUARDIAN_SRC=DIR] scripts/bench.sh [--smoke] [--profile] [--desktop] [--desktop-soak[=MINUTES]] [--no-criterion] [--no-e2e]
# Figures: printed, and written to target/bench/{criterion.json,audit.json,e2e.json,profile/}.
# The machine is shared: cargo waits for the build lock by itself; nothing here builds in parallel.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
smoke=0 profile=0 desktop=0 soak_minutes=0 criterion=1 e2e=1
for arg in "$@"; do
    case "$arg" in
        --smoke) smoke=1 ;;
        --profile) profile=1 ;;
        --desktop) desktop=1 ;;
        --desktop-soak) soak_minutes=60 ;;
        --desktop-soak=*) soak_minutes="${arg#*=}" ;;
        --no-criterion) criterion=0 ;;
        --no-e2e) e2e=0 ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) echo "bench: unknown argument $arg" >&2; exit 1 ;;
    esac
done

log() { printf '\n== bench: %s\n' "$*" >&2; }
python="${PYTHON:-python3}"
out="$root/target/bench"
mkdir -p "$out"

log "build (release)"
cargo build --release -p portcullis

log "peers"
bash scripts/test-peers.sh

# mcp-proxy in its own venv: it pins its own `mcp`, which must not disturb the test venvs.
mp_venv="$root/tests/.peers/mcp-proxy"
mp_req="$root/bench/requirements-mcp-proxy.txt"
mp_want="$(sha256sum "$mp_req" | cut -d' ' -f1)-$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
if [[ -x "$mp_venv/bin/mcp-proxy" && -f "$mp_venv/.portcullis-stamp" && "$(cat "$mp_venv/.portcullis-stamp")" == "$mp_want" ]]; then
    echo "bench: mcp-proxy venv up to date ($mp_venv)" >&2
else
    log "mcp-proxy venv at $mp_venv"
    rm -rf "$mp_venv"
    "$python" -m venv "$mp_venv"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$mp_venv/bin/pip" install --quiet --no-input -r "$mp_req" </dev/null
    printf '%s' "$mp_want" >"$mp_venv/.portcullis-stamp"
fi
echo "bench: $("$mp_venv/bin/mcp-proxy" --version 2>&1 | head -1)" >&2

# mcp-guardian-proxy (eqtylab; Rust, a one-hop stdio proxy that logs every message): the stdio peer of
# `portcullis connect`. Built from a source given by path (no network beyond the registries here), in a
# cache outside the checkout with a target dir of its own; its code is not copied into this repository.
mg_default=/work/.mirror/eqtylab+mcp-guardian/repo
mg_src="${MCP_GUARDIAN_SRC:-}"
[[ -z "$mg_src" && -e "$mg_default" ]] && mg_src="$mg_default"
mg_cache="${XDG_CACHE_HOME:-$HOME/.cache}/portcullis-bench/mcp-guardian"
mg_bin="$mg_cache/target/release/mcp-guardian-proxy"
mcp_guardian=""
mg_skip() { echo "bench: SKIPPING the mcp-guardian rows: $*" >&2; }
if [[ -x "$mg_bin" ]]; then
    echo "bench: mcp-guardian-proxy already built ($mg_bin, source $(cat "$mg_cache/SOURCE" 2>/dev/null || echo '?'))" >&2
    mcp_guardian="$mg_bin"
elif [[ -z "$mg_src" ]]; then
    mg_skip "no source (set MCP_GUARDIAN_SRC to a git dir or a source tree of eqtylab/mcp-guardian; $mg_default does not exist)"
elif [[ ! -e "$mg_src" ]]; then
    mg_skip "MCP_GUARDIAN_SRC=$mg_src does not exist"
else
    log "mcp-guardian-proxy from $mg_src (build in $mg_cache)"
    rm -rf "$mg_cache/src"
    mkdir -p "$mg_cache/src"
    mg_ok=1
    if [[ -f "$mg_src/Cargo.toml" ]]; then
        # A source tree (perhaps a checkout with local changes): its files as they are, without build output.
        tar -C "$mg_src" --exclude=./target --exclude=./.git -cf - . | tar -C "$mg_cache/src" -xf -
        mg_rev="tree $mg_src"
        if [[ -e "$mg_src/.git" ]] && mg_head="$(git -C "$mg_src" rev-parse HEAD 2>/dev/null)"; then
            mg_rev+=" at $mg_head$(git -C "$mg_src" diff --quiet HEAD 2>/dev/null || echo ' with local changes')"
        fi
    elif mg_head="$(git --git-dir="$mg_src" rev-parse --verify -q HEAD 2>/dev/null)"; then
        # A git dir (bare, as the mirror is): its HEAD.
        git --git-dir="$mg_src" archive HEAD | tar -C "$mg_cache/src" -xf -
        mg_rev="$mg_head of $mg_src"
    else
        mg_skip "$mg_src is neither a source tree (no Cargo.toml) nor a git dir with a HEAD"
        mg_ok=0
    fi
    if [[ $mg_ok -eq 1 ]]; then
        mg_t0=$SECONDS
        if CARGO_TARGET_DIR="$mg_cache/target" cargo build --release -p mcp-guardian-proxy \
                --manifest-path "$mg_cache/src/Cargo.toml" </dev/null; then
            printf '%s\n' "$mg_rev" >"$mg_cache/SOURCE"
            echo "bench: mcp-guardian-proxy built in $((SECONDS - mg_t0)) s ($mg_rev)" >&2
            mcp_guardian="$mg_bin"
        else
            mg_skip "cargo build --release -p mcp-guardian-proxy failed in $mg_cache/src (see above)"
        fi
    fi
fi

log "load client and byte relay (crates/gate/benches/{loadgen,byte_relay}.rs)"
bench_exes="$(cargo bench -p portcullis-gate --bench loadgen --bench byte_relay --no-run --message-format=json \
    | "$python" -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])')"
bench_exe() { awk -v name="$1" '$1 == name { print $2 }' <<<"$bench_exes"; }
loadgen="$(bench_exe loadgen)" byte_relay="$(bench_exe byte_relay)"
[[ -x "$loadgen" && -x "$byte_relay" ]] || { echo "bench: loadgen or byte_relay was not built" >&2; exit 1; }

if [[ $criterion -eq 1 ]]; then
    crit_args=()
    if [[ $smoke -eq 1 ]]; then
        crit_args=(--warm-up-time 0.1 --measurement-time 0.2 --sample-size 10)
        export AUDIT_BENCH_ROWS=20000 AUDIT_BENCH_CALLS=2000
    fi
    rm -f "$out/audit.json"
    : >"$out/criterion.log"
    for spec in portcullis-policy:policy_eval portcullis-wire:wire portcullis-audit:audit portcullis-gate:tools_list; do
        log "criterion ${spec#*:}"
        cargo bench -p "${spec%%:*}" --bench "${spec#*:}" -- "${crit_args[@]}" 2>&1 \
            | grep -v -E '^(Benchmarking|Gnuplot|Found [0-9]+ outliers|  [0-9]+ \([0-9.]+%\) (low|high) (mild|severe)|Warning: Unable to complete)' \
            | tee -a "$out/criterion.log"
    done
    log "criterion summary (median of samples; target/criterion)"
    "$python" bench/criterion_summary.py --json "$out/criterion.json"
fi

if [[ $e2e -eq 1 ]]; then
    log "end to end$([[ $smoke -eq 1 ]] && echo ' (smoke)')"
    e2e_args=(--bin "$root/target/release/portcullis" --loadgen "$loadgen" --mcp-proxy "$mp_venv/bin/mcp-proxy"
              --byte-relay "$byte_relay" --json "$out/e2e.json")
    [[ -n "$mcp_guardian" ]] && e2e_args+=(--mcp-guardian "$mcp_guardian")
    [[ $smoke -eq 1 ]] && e2e_args+=(--smoke)
    tests/.peers/venv1/bin/python bench/e2e.py "${e2e_args[@]}"
    log "15 MiB call and result: peak gateway memory"
    tests/.peers/venv1/bin/python bench/big_message.py --bin "$root/target/release/portcullis" --json "$out/big_message.json"
fi

if [[ $profile -eq 1 ]]; then
    log "profile (perf)"
    if ! perf record -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
        echo "bench: perf does not work here; install it with: apt-get install linux-perf" >&2
        exit 1
    fi
    tests/.peers/venv1/bin/python bench/profile.py --bin "$root/target/release/portcullis" --loadgen "$loadgen" \
        --out "$out/profile"
fi

if [[ $desktop -eq 1 || $soak_minutes != 0 ]]; then
    log "the desktop app (release build)"
    npm --prefix ui ci --no-audit --no-fund --loglevel=error </dev/null
    npm --prefix ui run build
    cargo build --release -p portcullis-desktop --features tauri/custom-protocol
    [[ -x tests/.peers/desktop/bin/pytest ]] || { echo "bench: run scripts/test-desktop.sh once first (Selenium venv)" >&2; exit 1; }
    export PORTCULLIS_DESKTOP_BIN="$root/target/release/portcullis-desktop" PORTCULLIS_BIN="$root/target/release/portcullis"
fi
if [[ $desktop -eq 1 ]]; then
    log "desktop footprint (release build)"
    PORTCULLIS_FOOTPRINT_OUT="$out/footprint.json" PORTCULLIS_SCREENSHOTS="$out/screenshots" \
        xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
        tests/.peers/desktop/bin/pytest -q -s -c src-tauri/tests/e2e/pytest.ini src-tauri/tests/e2e/test_memory.py
    # The same app as a person runs it, without WebDriver (which keeps WebKit's network process).
    log "desktop footprint without WebDriver (release build)"
    PORTCULLIS_FOOTPRINT_OUT="$out/footprint-plain.json" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
        tests/.peers/desktop/bin/python -u src-tauri/tests/e2e/footprint_plain.py
fi
if [[ $soak_minutes != 0 ]]; then
    log "desktop soak, $soak_minutes minutes (release build)"
    PORTCULLIS_SCREENSHOTS="$out/screenshots" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
        tests/.peers/desktop/bin/python src-tauri/tests/e2e/soak_desktop.py --minutes "$soak_minutes" \
        --out "$out/desktop-soak.json"
fi
