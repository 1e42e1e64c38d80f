#!/usr/bin/env python3
"""Gives a fresh clone's unchanged files and folders back the times they had in the last CI run.

Usage: restore-mtimes.py MANIFEST   (run at the checkout's root; scripts/ci-cache.sh calls it)

A fresh clone gives every file and folder the time of the clone, which would make cargo rebuild
every crate of the workspace (and a build script that watches a folder, such as tauri-build's
`capabilities/`, reruns when the folder is newer). A file whose content (git's blob hash) is what it
was in the last run gets back the time it had then, which is older than what that run built from
it; a folder gets back its time when it holds the same tracked names. A changed or new file keeps
the clone's time, newer than anything built, so cargo rebuilds exactly what changed. The manifest
is then written for the next run.

Only for a checkout at the same path as the last run's: cargo does not rebuild a workspace crate
that moved, and its test binaries would still carry the old path (env! "CARGO_MANIFEST_DIR"), so
every file of a checkout elsewhere gets the time of now and the workspace's own crates are rebuilt
(the dependencies' builds are still reused).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import defaultdict


def read_manifest(path: str) -> tuple[str | None, dict[str, tuple[str, int]]]:
    root, entries = None, {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("#root\t"):
                    root = line.split("\t", 1)[1]
                    continue
                key, mtime, name = line.split("\t", 2)
                entries[name] = (key, int(mtime))
    except FileNotFoundError:
        pass
    return root, entries


def tracked() -> list[tuple[str, str]]:
    """(path, blob) of every tracked file; a file edited in the work tree gets no blob (its
    index hash says nothing about its content)."""
    git = lambda *args: subprocess.run(["git", *args], check=True, capture_output=True).stdout  # noqa: E731
    edited = set(git("diff", "--name-only", "-z", "HEAD").decode("utf-8", "surrogateescape").split("\0"))
    files = []
    for entry in git("ls-files", "-s", "-z").split(b"\0"):
        if entry:
            meta, path = entry.decode("utf-8", "surrogateescape").split("\t", 1)
            files.append((path, "" if path in edited else meta.split()[1]))
    return files


def folders(files: list[tuple[str, str]]) -> dict[str, str]:
    """Each folder holding tracked files (the root aside), keyed by the hash of its tracked names."""
    children: dict[str, set[str]] = defaultdict(set)
    for path, _ in files:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            children["/".join(parts[:depth])].add(parts[depth])
    return {folder: hashlib.sha1("\0".join(sorted(names)).encode()).hexdigest()
            for folder, names in children.items()}


def main() -> int:
    manifest, root = sys.argv[1], os.getcwd()
    last_root, before = read_manifest(manifest)
    moved = last_root != root
    if last_root is None:
        print("ci cache: no earlier run in this cache: everything is built")
        before = {}
    elif moved:
        print(f"ci cache: the last run was in {last_root}, not {root}: the workspace's crates are rebuilt")
        before = {}
    files = tracked()
    rows = [f"#root\t{root}\n"]
    restored = kept = 0
    for path, key in files + [(f"{d}/", f"dir:{k}") for d, k in sorted(folders(files).items())]:
        try:
            if key and before.get(path, (None,))[0] == key:
                os.utime(path, ns=(before[path][1],) * 2, follow_symlinks=False)
                restored += 1
            else:
                if moved:  # newer than anything built, even when this checkout is older than the build
                    os.utime(path, None, follow_symlinks=False)
                kept += 1
            rows.append(f"{key}\t{os.lstat(path).st_mtime_ns}\t{path}\n")
        except FileNotFoundError:  # deleted in the work tree: nothing to build from
            pass
    tmp = manifest + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(rows)
    os.replace(tmp, manifest)
    print(f"ci cache: {restored} files and folders unchanged since the last run keep their times, "
          f"{kept} changed or new")
    return 0


if __name__ == "__main__":
    sys.exit(main())
