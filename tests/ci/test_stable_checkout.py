"""scripts/ci-cache.sh's stable_checkout: where a run of scripts/test.sh takes place.

A clean clone runs from one fixed checkout beside the cache (cargo and rustc key their caches by
the checkout's path). Getting this wrong tests the wrong thing: a work tree with edits moved to the
fixed checkout would test the commit, not the edits. Each test builds a real git repository and
runs the real function under bash.

Run: python3 -m pytest tests/ci (stdlib and pytest only).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_CACHE = ROOT / "scripts" / "ci-cache.sh"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def stable_checkout(where: Path, cache: Path, **env: str) -> tuple[str, str]:
    """(stdout, stderr) of stable_checkout run in `where` with the cache at `cache`."""
    out = subprocess.run(
        ["bash", "-c", f"source {CI_CACHE}; stable_checkout"],
        cwd=where, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PORTCULLIS_CI_CACHE": str(cache), **env},
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip(), out.stderr.strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    (repo / "kept.rs").write_text("fn kept() {}\n")
    (repo / "changed.rs").write_text("fn first() {}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    return repo


def clone(origin: Path, to: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(to)], check=True)
    return to


def test_a_clean_clone_moves_to_the_fixed_checkout_which_keeps_unchanged_files_times(origin: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first = clone(origin, tmp_path / "a")
    out, _ = stable_checkout(first, cache)
    stable = cache / "checkout"
    assert out == str(stable)
    assert git(stable, "rev-parse", "HEAD") == git(first, "rev-parse", "HEAD")
    os.utime(stable / "kept.rs", (1_000_000_000, 1_000_000_000))

    (origin / "changed.rs").write_text("fn second() {}\n")
    git(origin, "commit", "-qam", "two")
    second = clone(origin, tmp_path / "b")  # another path, as CI's next clone
    assert stable_checkout(second, cache)[0] == str(stable)
    assert git(stable, "rev-parse", "HEAD") == git(second, "rev-parse", "HEAD")
    assert (stable / "changed.rs").read_text() == "fn second() {}\n"
    assert (stable / "kept.rs").stat().st_mtime == 1_000_000_000, "an unchanged file was rewritten"


def test_what_the_last_run_left_in_the_fixed_checkout_is_gone(origin: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    stable_checkout(clone(origin, tmp_path / "a"), cache)
    stable = cache / "checkout"
    (stable / "kept.rs").write_text("edited by a test\n")
    (stable / "left.log").write_text("a log\n")
    (stable / "target").symlink_to(tmp_path)

    stable_checkout(clone(origin, tmp_path / "b"), cache)
    assert (stable / "kept.rs").read_text() == "fn kept() {}\n"
    assert not (stable / "left.log").exists()
    assert not (stable / "target").is_symlink()
    assert tmp_path.is_dir(), "the link's target was removed, not the link"


@pytest.mark.parametrize("change", ["edited", "untracked", "own target", "in place asked"])
def test_a_tree_that_is_not_a_clean_clone_runs_where_it_is(origin: Path, tmp_path: Path, change: str):
    work = clone(origin, tmp_path / "work")
    env = {}
    if change == "edited":
        (work / "kept.rs").write_text("fn edited() {}\n")
    elif change == "untracked":
        (work / "new.rs").write_text("fn new() {}\n")
    elif change == "own target":
        (work / "target").mkdir()
    else:
        env["PORTCULLIS_CI_IN_PLACE"] = "1"
    cache = tmp_path / "cache"
    assert stable_checkout(work, cache, **env)[0] == ""
    assert not (cache / "checkout").exists()


def test_a_link_into_the_cache_is_not_a_target_of_its_own(origin: Path, tmp_path: Path):
    work = clone(origin, tmp_path / "work")
    (work / ".git" / "info" / "exclude").write_text("/target\n")
    (work / "target").symlink_to(tmp_path)
    assert stable_checkout(work, tmp_path / "cache")[0] == str(tmp_path / "cache" / "checkout")


def test_the_fixed_checkout_itself_runs_in_place(origin: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    stable_checkout(clone(origin, tmp_path / "a"), cache)
    assert stable_checkout(cache / "checkout", cache)[0] == ""


def test_a_checkout_git_cannot_update_says_so_and_runs_in_place(origin: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    (cache / "checkout").mkdir(parents=True)
    (cache / "checkout" / ".git").write_text("not a repository\n")
    out, err = stable_checkout(clone(origin, tmp_path / "a"), cache)
    assert out == ""
    assert "the run stays in" in err
