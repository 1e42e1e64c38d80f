#!/usr/bin/env bash
# Fuzzes the wire and policy parsers with cargo fuzz (libFuzzer): scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Runs each target (default: every one of `cargo fuzz list`, i.e. every [[bin]] of fuzz/Cargo.toml:
# line_codec, jsonrpc_message, sse_decoder, policy_load, policy_eval, strict_reader) for SECONDS (default 60) on its
# committed seed corpus fuzz/corpus/<target>. What a run discovers goes to a scratch corpus,
# fuzz/corpus-run/<target> (gitignored, emptied first), so the committed corpus never grows by
# itself. Prints per target: seconds run, executions, corpus size, and any crash; exits non-zero
# when a target crashed (a failed assertion, a panic, a timeout or running out of memory). The
# crashing input is kept in fuzz/artifacts/<target>/; replay it with
#   cd fuzz && cargo fuzz run --sanitizer none <target> artifacts/<target>/<file>
#
# FUZZ_PHASE=build only builds the targets; FUZZ_PHASE=run only runs them (built before): CI builds
# them before the end-to-end lanes and runs them in one, where a core is otherwise idle at the end.
#
# Stable Rust is enough. cargo fuzz's default sanitizer, AddressSanitizer, needs `-Zsanitizer`
# (nightly only), but `--sanitizer none` builds with stable flags alone (SanitizerCoverage through
# -Cpasses/-Cllvm-args, --cfg fuzzing, debug assertions and overflow checks on) and libFuzzer
# itself is C++ built by libfuzzer-sys. The crates fuzzed here forbid unsafe code, so ASan would
# mostly slow the search down. To fuzz with it anyway: FUZZ_SANITIZER=address, which sets
# RUSTC_BOOTSTRAP=1 so that a stable rustc accepts the -Z flag.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
sanitizer="${FUZZ_SANITIZER:-none}"
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    # A debug build: cargo-fuzz only drives cargo and the target, and builds in half the CPU time.
    echo "installing cargo-fuzz (cargo install cargo-fuzz --locked --debug)"
    cargo install cargo-fuzz --locked --debug --quiet
fi
if [[ "$sanitizer" != none ]]; then
    export RUSTC_BOOTSTRAP=1
fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    # Not `mapfile < <(cargo fuzz list)`: a failing list would leave no targets, and fuzz nothing.
    listed="$(cargo fuzz list)"
    mapfile -t targets <<<"$listed"
    [[ -n $listed && ${#targets[@]} -gt 0 ]] || { echo "fuzz: cargo fuzz list named no target" >&2; exit 1; }
fi

# One build of every target; the target dir is fuzz/target (fuzz/ is a workspace of its own).
phase="${FUZZ_PHASE:-all}"
case "$phase" in
    all | build | run) ;;
    *) echo "fuzz: FUZZ_PHASE is build, run or all, not $phase" >&2; exit 1 ;;
esac
if [[ $phase != run ]]; then
    if [[ $# -eq 0 ]]; then
        cargo fuzz build --sanitizer "$sanitizer"
    else
        for target in "${targets[@]}"; do
            cargo fuzz build --sanitizer "$sanitizer" "$target"
        done
    fi
fi
if [[ $phase == build ]]; then
    echo "fuzz: ${#targets[@]} targets built"
    exit 0
fi

summary=()
failed=()
for target in "${targets[@]}"; do
    scratch="corpus-run/$target"
    rm -rf "$scratch"
    mkdir -p "$scratch" "artifacts/$target"
    log="corpus-run/$target.log"
    echo "fuzzing $target for ${seconds}s"
    start=$(date +%s)
    status=0
    # The scratch dir comes first: libFuzzer writes new inputs to the first corpus dir only.
    cargo fuzz run --sanitizer "$sanitizer" "$target" "$scratch" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="artifacts/$target/" >"$log" 2>&1 || status=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1 || true)
    corpus=$(grep -Eo 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1 | cut -d' ' -f2 || true)
    if [[ $status -eq 0 ]]; then
        result=ok
    else
        artifact=$(ls -t "artifacts/$target" 2>/dev/null | head -n 1 || true)
        result="CRASH (exit $status): fuzz/artifacts/$target/$artifact"
        failed+=("$target")
        echo "---- $target: last lines of $root/fuzz/$log" >&2
        grep -v '^#\|^INFO\|^stat::' "$log" | grep -B2 -A12 -m1 'panicked\|ERROR: libFuzzer' >&2 || tail -n 30 "$log" >&2
    fi
    summary+=("$(printf '%-16s %8s %12s %12s  %s' "$target" "$took" "${execs:-?}" "${corpus:-?}" "$result")")
done

printf '\n%-16s %8s %12s %12s  %s\n' target seconds executions corpus result
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzzing found crashes in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, no crash"
