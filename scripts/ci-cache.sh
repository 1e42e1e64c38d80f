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
#   DIR/checkout      where a clean clone's run takes place (stable_checkout, below)
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
    # A link made in a fresh clone is newer than any build, and cargo reads a watched path's own
    # time (tauri-build watches src-tauri/permissions): its time says nothing, so an old one.
    if [[ -L $path ]]; then touch -h -d @946684800 "$path" 2>/dev/null || true; fi
}

# restore_mtimes: unchanged files and folders of a fresh clone get back their times of the last
# run, so cargo rebuilds only what changed (scripts/restore-mtimes.py says how and when).
restore_mtimes() {
    python3 "$root/scripts/restore-mtimes.py" "$ci_cache/mtimes.tsv"
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

# stable_checkout: the path a clean clone's tests run at, or nothing (run in place).
#
# cargo and rustc key what they keep by the checkout's path: a clone elsewhere than the last run's
# recompiles every crate of the workspace whole (rustc's incremental cache is void in another
# working directory, and test binaries carry their crate's path), about 5 minutes of a warm run.
# CI clones to a new place each time, so a clean clone brings DIR/checkout to its commit (git
# rewrites only the files that differ, which keep the times cargo compares) and the run goes on
# there. Not for a work tree with changes (they would not be tested) or with a target/ of its own.
stable_checkout() {
    local here stable="$ci_cache/checkout"
    [[ ${PORTCULLIS_CI_IN_PLACE:-0} == 1 || -d target && ! -L target ]] && return 0
    here="$(pwd -P)"
    [[ $here == "$(cd "$stable" 2>/dev/null && pwd -P)" ]] && return 0
    [[ -z "$(git status --porcelain --untracked-files=normal 2>/dev/null)" ]] || return 0
    { [[ -d $stable/.git ]] || git init -q "$stable"; } &&
        git -C "$stable" fetch -q --no-tags "$here" HEAD &&
        # A file whose time the last run moved (restore-mtimes.py) but whose content is the
        # index's would be rewritten by the checkout, and get a new time: refresh the index first.
        { git -C "$stable" update-index -q --refresh >/dev/null || true; } &&
        git -C "$stable" checkout -q -f --detach FETCH_HEAD &&
        # What the last run left (links into the cache, node_modules, logs) goes, as in a fresh clone.
        git -C "$stable" clean -q -ffdx &&
        printf '%s\n' "$stable" ||
        echo "ci cache: could not bring $stable to this commit; the run stays in $here" >&2
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
