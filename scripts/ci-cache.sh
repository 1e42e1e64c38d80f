# shellcheck shell=bash
# The test run's caches, kept outside the checkout (sourced by scripts/test.sh). They are used for
# speed only: every one is rebuilt from nothing when absent, and nothing in them is trusted for
# anything else (a cached build is a cargo target dir that cargo itself checks; a cached venv or
# front end is keyed by the hash of what it was made from).
#
#   PORTCULLIS_CI_CACHE=DIR   where the caches live (default ~/.cache/portcullis-ci)
#
#   DIR/target        cargo's target dir     (the checkout's target/ is a link to it)
#   DIR/fuzz-target   cargo fuzz's           (fuzz/target)
#   DIR/peers         the test peers' venvs, Go caches and Selenium's venv (tests/.peers)
#   DIR/tauri-gen, DIR/tauri-permissions   what tauri-build generates (src-tauri/gen, .../permissions)
#   DIR/npm, DIR/pip  npm's and pip's download caches
#   DIR/tools         cargo-installed tools (tauri-driver, cargo-fuzz), on PATH
#   DIR/ui-dist/KEY   the built front end, by the hash of ui/'s files
#   DIR/mtimes.tsv    each tracked file's blob hash and modification time in the last run
#
# A checkout that already has its own target/ (a developer's) keeps it: links are made only
# where nothing is.

ci_cache="${PORTCULLIS_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/portcullis-ci}"

# link_cache NAME PATH: PATH (in the checkout) becomes a link to $ci_cache/NAME, unless PATH
# already exists as a directory of its own.
link_cache() {
    local name=$1 path=$2
    mkdir -p "$ci_cache/$name"
    if [[ -L $path ]]; then
        ln -sfn "$ci_cache/$name" "$path"
    elif [[ ! -e $path ]]; then
        mkdir -p "$(dirname "$path")"
        ln -s "$ci_cache/$name" "$path"
    fi
}

# restore_mtimes: a fresh clone gives every file the time of the clone, which would make cargo
# rebuild every crate of the workspace. A file whose content (git's blob hash) is what it was in
# the last run gets back the time it had then, which is older than what that run built from it;
# a changed or new file keeps the clone's time, newer than anything built, so cargo rebuilds
# exactly what changed. The manifest is then written for the next run.
#
# Only for a checkout at the same path as the last run's: cargo does not rebuild a workspace
# crate that moved, and its test binaries would still carry the old path (env!
# "CARGO_MANIFEST_DIR"), so every file of a checkout elsewhere gets the time of now and the
# workspace's own crates are rebuilt (the dependencies' builds are still reused).
restore_mtimes() {
    python3 - "$ci_cache/mtimes.tsv" "$PWD" <<'PY'
import os, subprocess, sys
manifest, root = sys.argv[1], sys.argv[2]
before = {}
last_root = None
try:
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#root\t"):
                last_root = line.rstrip("\n").split("\t", 1)[1]
                continue
            blob, mtime, path = line.rstrip("\n").split("\t", 2)
            before[path] = (blob, int(mtime))
except FileNotFoundError:
    pass
moved = last_root != root
if moved:
    print(f"ci cache: the last run was in {last_root or 'an unrecorded checkout'}, not {root}: "
          "the workspace's crates are rebuilt")
    before = {}
listing = subprocess.run(["git", "ls-files", "-s", "-z"], check=True, capture_output=True).stdout
# Files edited in the work tree: their index hash says nothing about their content.
edited = set(subprocess.run(["git", "diff", "--name-only", "-z", "HEAD"], check=True,
                            capture_output=True).stdout.decode("utf-8", "surrogateescape").split("\0"))
restored = kept = 0
rows = [f"#root\t{root}\n"]
for entry in listing.split(b"\0"):
    if not entry:
        continue
    meta, path = entry.decode("utf-8", "surrogateescape").split("\t", 1)
    blob = meta.split()[1]
    try:
        if path not in edited and before.get(path, (None,))[0] == blob:
            os.utime(path, ns=(before[path][1], before[path][1]), follow_symlinks=False)
            restored += 1
        else:
            if moved:  # newer than anything built, even when this checkout is older than the build
                os.utime(path, None, follow_symlinks=False)
            kept += 1
        rows.append(f"{blob}\t{os.lstat(path).st_mtime_ns}\t{path}\n")
    except FileNotFoundError:  # deleted in the work tree: nothing to build from
        pass
tmp = manifest + ".tmp"
with open(tmp, "w", encoding="utf-8") as f:
    f.writelines(rows)
os.replace(tmp, manifest)
print(f"ci cache: {restored} files unchanged since the last run keep its times, {kept} changed or new")
PY
}

# ui_dist_key: the hash of everything the front end is built from.
ui_dist_key() {
    { git ls-files -s ui; node --version; } | sha256sum | cut -c1-16
}

# build_ui_dist: ui/dist from the cache when ui/ is as it was, else `npm run build` (and cached).
# Copied with its times, so the desktop crate (which embeds it) is not rebuilt for nothing.
build_ui_dist() {
    local key cached
    key=$(ui_dist_key)
    cached="$ci_cache/ui-dist/$key"
    if [[ -f $cached/index.html ]]; then
        rm -rf ui/dist
        cp -a "$cached" ui/dist
        echo "ui/dist from the cache ($key)"
        return
    fi
    npm --prefix ui run build
    rm -rf "$ci_cache/ui-dist"
    mkdir -p "$ci_cache/ui-dist"
    cp -a ui/dist "$cached"
}

setup_ci_cache() {
    mkdir -p "$ci_cache"
    link_cache target target
    link_cache fuzz-target fuzz/target
    link_cache peers tests/.peers
    # What tauri-build writes beside the desktop crate on every build: absent from a fresh clone,
    # they would make cargo rerun its build script and rebuild the app each run.
    link_cache tauri-gen src-tauri/gen
    link_cache tauri-permissions src-tauri/permissions
    export npm_config_cache="$ci_cache/npm" PIP_CACHE_DIR="$ci_cache/pip"
    export CARGO_INSTALL_ROOT="$ci_cache/tools"
    export PATH="$ci_cache/tools/bin:$PATH"
    echo "ci cache: $ci_cache ($(du -sh "$ci_cache" 2>/dev/null | cut -f1))"
    # Only where cargo builds into the cache: a developer's own target/ was built from their
    # work tree's times, and moving them back could hide an edit from cargo.
    if [[ -L target ]]; then restore_mtimes; fi
}
