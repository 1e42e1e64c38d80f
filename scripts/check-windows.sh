#!/usr/bin/env bash
# The Windows build of the workspace (gateway, CLI and the crates under them), checked from
# Linux: `cargo clippy` (which type-checks everything `cargo check` does) for
# x86_64-pc-windows-gnu, all targets, warnings fail. Nothing runs here: this proves the Windows
# code (local_socket/windows.rs, the cfg(not(unix)) branches) compiles and is lint-clean;
# scripts/test-wine.sh runs it under Wine.
#
# Needs the target's std library (rustup) and the mingw C compiler (build scripts compile C, e.g.
# the bundled SQLite). Either one missing is installed; when that is impossible (no rustup, no
# network, not root) the check fails under CI=true and elsewhere says SKIPPED and why (scripts/skip.sh). A compile or lint error fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=x86_64-pc-windows-gnu

# `unsafe_code` is denied workspace-wide (Cargo.toml) and allowed in four files: the pipe's Win32
# calls, glibc's mallopt, the audit's in-place text binding (sqlite3 calls) and the audit writer's
# WAL-gathering VFS (wal_batch.rs). Checked here,
# before anything can be skipped, so no other file quietly allows it.
allowed="crates/audit/src/wal_batch.rs crates/audit/src/writer/uncopied.rs crates/gate/src/allocator.rs crates/gate/src/local_socket/windows.rs "
allowing=$(grep -rl --include='*.rs' 'unsafe_code' crates src-tauri/src packaging | sort | tr '\n' ' ')
if [[ "$allowing" != "$allowed" ]]; then
    printf 'unsafe_code is allowed only in %s; found in: %s\n' "$allowed" "$allowing"
    exit 1
fi

# shellcheck source=scripts/skip.sh
source scripts/skip.sh
skip() {
    cannot_run "the Windows check: $*"
    exit 0
}
profile="${PORTCULLIS_PROFILE:-dev}"

if ! grep -qx "$target" <<<"$(rustup target list --installed 2>/dev/null)"; then
    command -v rustup >/dev/null || skip "no rustup to install the $target std library"
    if ! out=$(rustup target add "$target" 2>&1); then
        head -5 <<<"$out"
        skip "'rustup target add $target' failed (above; this machine may not reach its server)"
    fi
fi

if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
    if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
        skip "no x86_64-w64-mingw32-gcc, and not root with apt-get to install gcc-mingw-w64-x86-64"
    fi
    if ! out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q gcc-mingw-w64-x86-64 2>&1); then
        printf '%s\n' "$out" | tail -5
        skip "'apt-get install gcc-mingw-w64-x86-64' failed (above)"
    fi
fi

# Not built for Windows: the desktop app (Tauri's Windows stack is not fetched here; built on its
# own by scripts/test-desktop.sh), the AppImage runtime and linuxdeploy (Linux by nature), and the
# end-to-end suite's rmcp peer (tests/rmcp-peer: the suite runs on Linux).
cargo clippy --locked --profile "$profile" --target "$target" --workspace --exclude portcullis-desktop \
    --exclude portcullis-appimage-runtime --exclude portcullis-linuxdeploy --exclude portcullis-rmcp-peer \
    --all-targets -- -D warnings
