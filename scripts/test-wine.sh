#!/usr/bin/env bash
# The Windows build run, not only type-checked (scripts/check-windows.sh): under Wine, the
# gateway crate's unit tests (the named pipe's own tests among them) and `portcullis connect` over
# the named pipe end to end (tests/e2e/wine: a Linux MCP client launching `portcullis.exe connect`,
# `portcullis.exe serve` with the pipe on, the Windows build of the rmcp server behind it).
#
# What this shows and what it cannot: the pipe's code paths work on a Win32 implementation
# (create, accept, the peer-user checks, hang-up, a restart); Wine enforces no DACL and ignores
# FILE_FLAG_FIRST_PIPE_INSTANCE, so the pipe's guard still needs a Windows run (SECURITY.md), and
# the pipe stays off by default.
#
# Needs: the x86_64-pc-windows-gnu std library and mingw (as check-windows.sh), Wine (Debian's
# wine64, installed when root with apt-get), and the e2e venvs (scripts/test-peers.sh). When Wine
# or the target cannot be had, it fails under CI=true and elsewhere says SKIPPED and why
# (scripts/skip.sh); a failing test fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target=x86_64-pc-windows-gnu
work="$root/target/wine"

# shellcheck source=scripts/skip.sh
source scripts/skip.sh
skip() {
    cannot_run "the Windows build under Wine: $*"
    exit 0
}
# The Linux build the rmcp client comes from, and the Windows build's own profile: nothing is
# shared across targets, so CI builds Windows with `dev` (no optimization: less compile time than
# its `ci` profile, and these tests do not wait on the binaries).
profile="${PORTCULLIS_PROFILE:-dev}"
profile_dir=$profile
[[ $profile == dev ]] && profile_dir=debug
windows_profile="${PORTCULLIS_WINDOWS_PROFILE:-$profile}"
windows_profile_dir=$windows_profile
[[ $windows_profile == dev ]] && windows_profile_dir=debug
wine_bin() {
    local candidate
    for candidate in /usr/lib/wine/wine64 "$(command -v wine64 || true)" "$(command -v wine || true)"; do
        [[ -n $candidate && -x $candidate ]] && { echo "$candidate"; return 0; }
    done
    return 1
}

grep -qx "$target" <<<"$(rustup target list --installed 2>/dev/null)" || skip "no $target std library (scripts/check-windows.sh installs it)"
command -v x86_64-w64-mingw32-gcc >/dev/null || skip "no mingw C compiler (scripts/check-windows.sh installs it)"
if ! wine="$(wine_bin)"; then
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
        skip "no Wine, and not root with apt-get to install wine64"
    fi
    echo "installing wine64 (Debian's Wine, about 100 MB)"
    if ! out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends wine64 2>&1); then
        printf '%s\n' "$out" | tail -5
        skip "'apt-get install wine64' failed (above)"
    fi
    wine="$(wine_bin)" || skip "wine64 installed but no wine binary found"
fi
"$wine" --version

# Rust's std (1.78+) imports ProcessPrng from bcryptprimitives.dll, which Wine 8 lacks: a shim
# beside each executable (a Wine that has the DLL loads its own first).
mkdir -p "$work/bin"
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" \
    scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -lbcrypt

echo "building for $target: the unit tests of the gate and atomic-file crates, portcullis.exe, rmcp-peer.exe"
mapfile -t test_exes < <(cargo test --locked --profile "$windows_profile" --target "$target" \
    -p portcullis-gate -p portcullis-atomic-file --lib --no-run --message-format=json \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("portcullis_gate", "portcullis_atomic_file"):
        print(m["executable"])')
[[ ${#test_exes[@]} -eq 2 ]] || { echo "test-wine: expected 2 test executables, got: ${test_exes[*]}" >&2; exit 1; }
cargo build --locked --profile "$windows_profile" --target "$target" -p portcullis -p portcullis-rmcp-peer
windows_bin="$root/target/$target/$windows_profile_dir"
cp "$work/bcryptprimitives.dll" "$(dirname "${test_exes[0]}")/"
cp "$work/bcryptprimitives.dll" "$windows_bin/"

export WINEPREFIX="$work/prefix" WINEDEBUG=-all
echo "the Wine prefix (made once: $WINEPREFIX)"
"$wine" cmd /c exit >/dev/null 2>&1 || true

echo "the unit tests under Wine (the named pipe's, and file replacement while a reader holds the file)"
for test_exe in "${test_exes[@]}"; do "$wine" "$test_exe"; done

echo "connect over the named pipe, end to end under Wine (tests/e2e/wine)"
# The e2e harness runs $PORTCULLIS_BIN and finds the Linux rmcp client beside it.
cat >"$work/bin/portcullis" <<EOF
#!/bin/sh
export WINEPREFIX='$WINEPREFIX' WINEDEBUG=-all PORTCULLIS_EXPERIMENTAL_PIPE=1
exec '$wine' '$windows_bin/portcullis.exe' "\$@"
EOF
chmod +x "$work/bin/portcullis"
ln -sf "$root/target/$profile_dir/rmcp-peer" "$work/bin/rmcp-peer"
[[ -x "$root/target/$profile_dir/rmcp-peer" ]] || { echo "test-wine: build the Linux rmcp client first (cargo build)" >&2; exit 1; }
status=0
PORTCULLIS_BIN="$work/bin/portcullis" PORTCULLIS_WINE_RMCP_SERVER="$windows_bin/rmcp-peer.exe" \
    PORTCULLIS_E2E_REQUIRE_GATEWAY=1 \
    tests/.peers/venv2/bin/pytest -c tests/e2e/pytest.ini tests/e2e/wine || status=$?
# Wine's server lingers a few seconds after its last process; end it with the run.
"$(dirname "$wine")/wineserver" -k 2>/dev/null || true
exit "$status"
