"""Every shell command in the docs is run by a test.

The pages: README.md, docs/**/*.md and tests/e2e/INTEROP.md. Their convention (also in
docs/README.md, "Commands in these docs"):

- Every fence names its language. A fence tagged `sh`, `bash`, `shell` or `console` is a shell
  block, and needs one of two markers on the line just before it (blank lines allowed between):

    <!-- run -->                          this test runs the block
    <!-- run by: scripts/test-package.sh -->   that file runs these commands (for what cannot run
                                          here: installing packages, the GUI, the Quick start itself)

- A run block may be followed by its expected output: `<!-- output -->` and then a `text` fence.
  Every line shown must appear in one line of what the block printed (stdout and stderr), with runs
  of spaces counted as one; `…` stands for any text (a temporary path, a time), and a line that is
  only `…` is skipped.

How run blocks run: the run blocks of one page run in order, in one scratch directory that stands
in for a clone of the repository (it holds links to the repository's `demo/` and `policies/`,
which the docs only read), with HOME and the XDG directories inside it and `portcullis` on PATH
from $PORTCULLIS_BIN (default target/debug/portcullis). Exported variables and the working
directory carry over from one block to the next, as in a reader's terminal. Each block runs under
`bash -e -o pipefail` with a timeout and must exit 0. Gateways a block leaves running (`connect`
starts one on demand) are stopped when the page ends.

For a "run by" block, the named file must exist and name what the block runs: for each command,
its program (the script's name for `bash x.sh`) and up to two subcommand words
(`portcullis approvals approve` → portcullis, approvals, approve).

Without the binary the run tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHELL_LANGS = {"sh", "bash", "shell", "console"}
RUN = re.compile(r"^<!--\s*run\s*-->$")
RUN_BY = re.compile(r"^<!--\s*run by:\s*(\S+)\s*-->$")
OUTPUT = re.compile(r"^<!--\s*output\s*-->$")
BLOCK_TIMEOUT_S = 30
# Words that start a command without being its program.
PREFIXES = {"sudo", "env", "time", "nice", "exec", "command"}
INTERPRETERS = {"bash", "sh", "python3", "python", "node"}


def doc_pages() -> list[Path]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "tests/e2e/INTEROP.md"]
    return [p for p in pages if p.is_file()]


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    marker: str | None = None  # "run", "run by" or None
    run_by: str | None = None
    expected: list[str] = field(default_factory=list)

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


@dataclass
class Page:
    path: Path
    blocks: list[Block]
    problems: list[str]


def parse(path: Path, text: str | None = None) -> Page:
    """Fenced blocks of a page with their markers; problems are convention breaches."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    rel = path.relative_to(REPO) if path.is_absolute() and REPO in path.parents else path
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(rf"^\s*{re.escape(fence)}\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i >= len(lines):
            problems.append(f"{rel}:{start + 1}: the fence opened here is never closed")
        i += 1
        lang = info.split()[0] if info else ""
        # The nearest non-blank line above the fence is its marker, if it is one.
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        above = lines[j].strip() if j >= 0 else ""
        block = Block(path, start + 1, lang, "\n".join(body))
        if RUN.match(above):
            block.marker = "run"
        elif mb := RUN_BY.match(above):
            block.marker, block.run_by = "run by", mb.group(1)
        elif OUTPUT.match(above):
            block.marker = "output"
        if not lang:
            problems.append(f"{rel}:{start + 1}: a fence without a language; tag it (`sh` for commands, "
                            "`text` for output or a synopsis, `json`, …) so a shell block cannot go unchecked")
        blocks.append(block)
    # Attach expected output to the run block before it; check markers.
    for n, b in enumerate(blocks):
        if b.marker == "output":
            prev = blocks[n - 1] if n else None
            if b.lang != "text" or prev is None or prev.marker != "run":
                problems.append(f"{b.where()}: `<!-- output -->` must mark a `text` fence that follows a "
                                "`<!-- run -->` block")
            else:
                prev.expected = [l for l in b.text.splitlines() if l.strip() and l.strip() != "…"]
        elif b.lang in SHELL_LANGS and b.marker is None:
            problems.append(
                f"{b.where()}: a `{b.lang}` block with no marker. Put `<!-- run -->` on the line before the "
                "fence if tests/docs can run it, or `<!-- run by: PATH -->` naming the test or script that "
                "runs these commands (see docs/README.md, \"Commands in these docs\")")
        elif b.lang not in SHELL_LANGS and b.marker in ("run", "run by"):
            problems.append(f"{b.where()}: a run marker on a `{b.lang or 'untagged'}` fence; only "
                            f"{sorted(SHELL_LANGS)} blocks are run")
    return Page(path, blocks, problems)


# --- "run by": what a block runs, and whether the named file runs it -------------------------------

def commands(script: str) -> list[list[str]]:
    """The simple commands of a shell block, as words (comments, pipes and `&&` split off)."""
    out: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.commenters = "#"
        lexer.wordchars += "~-./:=$*{}[]@%+,"
        cur: list[str] = []
        for tok in lexer:
            if set(tok) <= set(";&|()"):
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(tok)
        if cur:
            out.append(cur)
    return out


def signature(words: list[str]) -> list[str]:
    """Program and up to two subcommand words: what a file that runs this command must name."""
    words = list(words)
    while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[0] in PREFIXES):
        words.pop(0)
    if not words:
        return []
    prog, rest = words[0], words[1:]
    if prog in INTERPRETERS:
        script = next((w for w in rest if not w.startswith("-")), None)
        return [Path(script).name] if script else [prog]
    sig = [Path(prog).name]
    if "/" in prog:  # a path with a version in it: its word parts (Portcullis_0.1.0_amd64.AppImage)
        sig = [p for p in re.split(r"[_.\-]", Path(prog).name) if p.isalpha() and len(p) > 2] or sig
    for w in rest[:2]:
        if not re.fullmatch(r"[a-z][a-z0-9-]*", w):
            break
        sig.append(w)
    return sig


def run_by_problems(block: Block) -> list[str]:
    target = REPO / block.run_by
    if not target.is_file():
        return [f"{block.where()}: `run by: {block.run_by}` names no file in the repository"]
    text = target.read_text(encoding="utf-8", errors="replace").lower()
    problems = []
    for words in commands(block.text):
        missing = [w for w in signature(words) if w.lower() not in text]
        if missing:
            problems.append(f"{block.where()}: `{' '.join(words)}` — {block.run_by} does not mention "
                            f"{', '.join(repr(m) for m in missing)}; name the file that runs this command")
    return problems


# --- running ----------------------------------------------------------------------------------------

def portcullis_bin() -> Path:
    return Path(os.environ.get("PORTCULLIS_BIN") or REPO / "target/debug/portcullis").resolve()


def require_bin() -> Path:
    binary = portcullis_bin()
    if not os.access(binary, os.X_OK):
        message = f"no portcullis binary at {binary} (set PORTCULLIS_BIN or cargo build -p portcullis)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return binary


def scratch_env(scratch: Path, binary: Path) -> dict[str, str]:
    bindir = scratch / ".bin"
    bindir.mkdir()
    (bindir / "portcullis").symlink_to(binary)
    for name in ("demo", "policies"):
        (scratch / name).symlink_to(REPO / name)
    home = scratch / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PORTCULLIS_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_RUNTIME_DIR=str(scratch / ".run"),
        PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        LC_ALL="C.UTF-8",
    )
    for d in ("home", ".run", "home/.config", "home/.local/share"):
        (scratch / d).mkdir(parents=True, exist_ok=True)
    (scratch / ".run").chmod(0o700)
    return env


def stop_gateways(scratch: Path) -> None:
    """End the gateways the page left running (their process groups, servers included)."""
    pids = []
    for info in scratch.rglob("gateway.json"):
        m = re.search(r'"pid"\s*:\s*(\d+)', info.read_text(errors="replace"))
        if not m:
            continue
        pid = int(m.group(1))
        try:
            if b"portcullis" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            os.killpg(os.getpgid(pid), signal.SIGTERM)
            pids.append(pid)
        except (OSError, ProcessLookupError):
            continue
    deadline = time.monotonic() + 5
    for pid in pids:
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.02)
        if Path(f"/proc/{pid}").exists():
            try:
                os.killpg(os.getpgid(pid), signal.SIGKILL)
            except OSError:
                pass


def run_block(block: Block, scratch: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    state, cwd = scratch / ".state.env", scratch / ".state.cwd"
    wrapper = (
        f'if [ -f {shlex.quote(str(state))} ]; then . {shlex.quote(str(state))}; fi\n'
        f'cd "$(cat {shlex.quote(str(cwd))} 2>/dev/null || echo {shlex.quote(str(scratch))})"\n'
        "set -e -o pipefail\n"
        f"{block.text}\n"
        f"export -p > {shlex.quote(str(state))}; pwd > {shlex.quote(str(cwd))}\n"
    )
    proc = subprocess.Popen(["bash", "-c", wrapper], cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{block.where()}: still running after {BLOCK_TIMEOUT_S} s; output so far:\n{out}")
    finally:
        try:  # anything the block put in the background in its own group
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    return subprocess.CompletedProcess(block.text, proc.returncode, out, "")


def squash(s: str) -> str:
    return " ".join(s.split())


def shown_line_found(expected: str, output_lines: list[str]) -> bool:
    parts = [squash(p) for p in expected.split("…")]
    for line in output_lines:
        pos = 0
        for part in parts:
            found = line.find(part, pos)
            if found < 0:
                break
            pos = found + len(part)
        else:
            return True
    return False


# --- the tests --------------------------------------------------------------------------------------

PAGES = doc_pages()
IDS = [str(p.relative_to(REPO)) for p in PAGES]


def test_the_pages_are_found():
    names = set(IDS)
    assert {"README.md", "docs/README.md", "tests/e2e/INTEROP.md"} <= names, f"pages found: {sorted(names)}"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_every_block_is_marked(page: Path):
    parsed = parse(page)
    problems = parsed.problems + [p for b in parsed.blocks if b.marker == "run by" for p in run_by_problems(b)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.marker == "run" for b in parse(p).blocks)],
                         ids=[i for p, i in zip(PAGES, IDS) if any(b.marker == "run" for b in parse(p).blocks)])
def test_run_blocks_run(page: Path, tmp_path: Path):
    binary = require_bin()
    env = scratch_env(tmp_path, binary)
    try:
        for block in (b for b in parse(page).blocks if b.marker == "run"):
            result = run_block(block, tmp_path, env)
            assert result.returncode == 0, (
                f"{block.where()}: exited {result.returncode}; the block:\n{block.text}\n--- output:\n{result.stdout}")
            lines = [squash(l) for l in result.stdout.splitlines()]
            missing = [e for e in block.expected if not shown_line_found(e, lines)]
            assert not missing, (f"{block.where()}: the output the page shows is not what the command printed; "
                                 f"missing {missing}\n--- output:\n{result.stdout}")
    finally:
        stop_gateways(tmp_path)


# The checker itself: breaches it must report.

def test_an_unmarked_shell_block_is_reported_with_its_line():
    page = parse(REPO / "docs/x.md", "# t\n\n```sh\nportcullis audit\n```\n")
    assert any("docs/x.md:3" in p and "<!-- run -->" in p for p in page.problems), page.problems


def test_an_untagged_fence_is_reported():
    page = parse(REPO / "docs/x.md", "```\nportcullis audit\n```\n")
    assert any("without a language" in p for p in page.problems), page.problems


def test_run_by_must_name_a_file_that_runs_the_command():
    page = parse(REPO / "docs/x.md", "<!-- run by: scripts/demo.sh -->\n```sh\nsudo apt-get purge portcullis\n```\n")
    problems = run_by_problems(page.blocks[0])
    assert problems and "'purge'" in problems[0], problems
    gone = parse(REPO / "docs/x.md", "<!-- run by: scripts/no-such.sh -->\n```sh\nls\n```\n")
    assert "names no file" in run_by_problems(gone.blocks[0])[0]


def test_signature_reads_programs_and_subcommands():
    assert signature(["sudo", "apt-get", "install", "./x.deb"]) == ["apt-get", "install"]
    assert signature(["PORTCULLIS_HOME=/tmp/d", "bash", "scripts/demo.sh", "--headless"]) == ["demo.sh"]
    assert signature(["target/debug/portcullis", "approvals", "watch", "--data-dir", "d"]) == \
        ["portcullis", "approvals", "watch"]
    assert signature(["./Portcullis_0.1.0_amd64.AppImage", "--show"]) == ["Portcullis", "AppImage"]
    assert commands("a x && b y | c  # note\nd \\\n  e") == [["a", "x"], ["b", "y"], ["c"], ["d", "e"]]


def test_expected_output_lines_must_appear():
    lines = [squash("write_note   denied    policy   tools.write_note.rules[1]")]
    assert shown_line_found("write_note denied policy tools.write_note.rules[1]", lines)
    assert shown_line_found("write_note … tools.write_note.rules[1]", lines)
    assert not shown_line_found("write_note allowed", lines)
