"""Process harness for the Portcullis end-to-end suite (standard library only).

Both test venvs (mcp 1.x in tests/.peers/venv1, mcp 2.3.0 in tests/.peers/venv2) import this module,
so it must not import anything outside the standard library.

What it does:
  * finds the peers installed by scripts/test-peers.sh and the `portcullis` binary;
  * starts server-everything over Streamable HTTP or legacy SSE on a free loopback port;
  * writes a gateway config plus per-server policy files into a temporary directory;
  * starts `portcullis serve`, waits (bounded) for its ready line and `gateway.json`;
  * reads the audit trail through `portcullis audit --format jsonl` or `audit.db`;
  * stops every process it started by pid: SIGTERM, a bounded wait, then SIGKILL.

Every wait here has a deadline; nothing synchronises by sleeping a fixed time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

E2E_DIR = Path(__file__).resolve().parent
REPO = E2E_DIR.parent.parent
NODE_MODULES = REPO / "tests" / "peers" / "node_modules"
PEERS_DIR = E2E_DIR / "peers"
TS_DIR = E2E_DIR / "ts"
VENV1 = REPO / "tests" / ".peers" / "venv1"
VENV2 = REPO / "tests" / ".peers" / "venv2"

EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
FILESYSTEM_JS = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
MCP_SERVER_GIT = VENV1 / "bin" / "mcp-server-git"

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
DENIAL_PREFIX = "[portcullis]"


class HarnessError(RuntimeError):
    """A peer or the gateway did not come up or behave as the harness expects."""


# --------------------------------------------------------------------------------------------------
# Small utilities


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for peers that cannot bind port 0 and tell)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll `predicate` until it returns a truthy value or `timeout` seconds pass; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise HarnessError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


def port_accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def node_bin() -> str:
    return os.environ.get("NODE", "node")


def require_file(path: Path, hint: str = "run scripts/test-peers.sh") -> Path:
    if not path.exists():
        raise HarnessError(f"{path} is missing ({hint})")
    return path


# --------------------------------------------------------------------------------------------------
# Processes


class Proc:
    """A child process whose stderr (and optionally stdout) lines are collected by reader threads.

    The child runs in its own process group so that `stop()` can also end anything it spawned, by that
    group's id, after the child itself is gone.
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
        capture_stdout: bool = False,
    ) -> None:
        self.name = name
        self.argv = [str(a) for a in argv]
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        self.popen = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture_stdout else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=str(cwd) if cwd else None,
            start_new_session=True,
        )
        self.pid = self.popen.pid
        self.lines: list[str] = []
        self._lines_lock = threading.Lock()
        self._new_line = threading.Condition(self._lines_lock)
        self._readers = [threading.Thread(target=self._read, args=(self.popen.stderr,), daemon=True)]
        if capture_stdout:
            self._readers.append(threading.Thread(target=self._read, args=(self.popen.stdout,), daemon=True))
        for t in self._readers:
            t.start()

    def _read(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self._new_line:
                self.lines.append(line)
                self._new_line.notify_all()
        with self._new_line:
            self._new_line.notify_all()

    def output(self) -> str:
        with self._lines_lock:
            return "\n".join(self.lines)

    def wait_for_line(self, pattern: str, timeout: float) -> re.Match[str]:
        """Wait until a collected line matches `pattern` (regex search); fail early if the child exits."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self._new_line:
            while True:
                while seen < len(self.lines):
                    m = rx.search(self.lines[seen])
                    seen += 1
                    if m:
                        return m
                if self.popen.poll() is not None and not any(t.is_alive() for t in self._readers):
                    raise HarnessError(
                        f"{self.name} exited with code {self.popen.returncode} before printing /{pattern}/;"
                        f" output:\n{self.output_unlocked()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise HarnessError(
                        f"{self.name} did not print /{pattern}/ within {timeout:.0f}s; output:\n{self.output_unlocked()}"
                    )
                self._new_line.wait(min(remaining, 0.2))

    def output_unlocked(self) -> str:
        return "\n".join(self.lines[-60:])

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM, wait up to `timeout`, then SIGKILL; then end leftovers of its process group."""
        if self.popen.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait(timeout=timeout)
        # Children the process started (upstream servers) share its process group; end those we left.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for t in self._readers:
            t.join(timeout=1.0)
        return self.popen.returncode


# --------------------------------------------------------------------------------------------------
# Upstream peers


@dataclass
class HttpPeer:
    """server-everything listening on loopback."""

    proc: Proc
    url: str

    def stop(self) -> None:
        self.proc.stop()


def start_everything_http(transport: str = "streamableHttp", timeout: float = READY_TIMEOUT) -> HttpPeer:
    """Start server-everything over `streamableHttp` (endpoint /mcp) or `sse` (GET /sse, POST /message).

    server-everything reads its port from $PORT (default 3001) and logs the env value, not the bound
    port, so the harness picks a free port itself and retries on a lost race.
    """
    if transport not in ("streamableHttp", "sse"):
        raise ValueError(transport)
    require_file(EVERYTHING_JS)
    path = "/mcp" if transport == "streamableHttp" else "/sse"
    last_error: Exception | None = None
    for _attempt in range(3):
        port = free_port()
        proc = Proc(f"server-everything[{transport}]", [node_bin(), EVERYTHING_JS, transport], env={"PORT": str(port)})
        try:
            proc.wait_for_line(r"(listening on port|running on port|Failed to start)", timeout)
            if "Failed to start" in proc.output():
                raise HarnessError(proc.output())
            wait_until(lambda: port_accepts("127.0.0.1", port), 5.0, f"port {port} to accept")
            return HttpPeer(proc=proc, url=f"http://127.0.0.1:{port}{path}")
        except HarnessError as e:
            last_error = e
            proc.stop()
    raise HarnessError(f"could not start server-everything {transport}: {last_error}")


@contextlib.contextmanager
def python_http_peer(name: str, script: str, env: dict[str, str]):
    """Run tests/e2e/peers/`script` (a Python HTTP MCP server that prints `listening on port N`);
    yield its config spec once the port accepts, stop it after."""
    proc = Proc(name, [sys.executable, str(PEERS_DIR / script)], env=env)
    try:
        port = int(proc.wait_for_line(r"listening on port (\d+)", READY_TIMEOUT).group(1))
        wait_until(lambda: port_accepts("127.0.0.1", port), 10.0, f"port {port} to accept")
        yield {"url": f"http://127.0.0.1:{port}/mcp"}
    finally:
        proc.stop()


def everything_stdio() -> dict[str, Any]:
    return {"command": node_bin(), "args": [str(require_file(EVERYTHING_JS)), "stdio"], "env": {}}


def filesystem_stdio(root: Path) -> dict[str, Any]:
    return {"command": node_bin(), "args": [str(require_file(FILESYSTEM_JS)), str(root)], "env": {}}


def git_stdio(repo: Path) -> dict[str, Any]:
    return {"command": str(require_file(MCP_SERVER_GIT)), "args": ["--repository", str(repo)], "env": {}}


def python_stdio(python: Path, script: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"command": str(python), "args": [str(script)], "env": dict(env or {})}


def make_git_repo(path: Path) -> Path:
    """A git repository with one commit and one staged (uncommitted) change."""
    path.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@example.invalid",
               GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@example.invalid")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True,
                              env=env, timeout=20).stdout

    git("init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "initial")
    (path / "staged.txt").write_text("staged change\n")
    git("add", "staged.txt")
    return path


def git_state(path: Path) -> dict[str, str]:
    """HEAD commit, staged files and the commit count: what git_commit / git_reset would change."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True,
                              timeout=20).stdout.strip()

    return {
        "head": git("rev-parse", "HEAD"),
        "staged": git("diff", "--cached", "--name-only"),
        "count": git("rev-list", "--count", "HEAD"),
    }


# --------------------------------------------------------------------------------------------------
# The gateway


def require(ok: bool, why: str) -> None:
    """Skip when a peer is missing, or fail when the run requires every peer (CI)."""
    if ok:
        return
    import pytest  # the harness is also imported outside pytest
    if os.environ.get("PORTCULLIS_E2E_REQUIRE_GATEWAY") == "1":
        pytest.fail(why)
    pytest.skip(why)


def go_build(source: Path, binary: Path) -> Path:
    """`go build` of the Go module in `source` into `binary`, offline, caches under tests/.peers/go."""
    go = shutil.which("go")
    require(go is not None, "go not found (scripts/test-peers.sh installs golang-go)")
    cache = REPO / "tests" / ".peers" / "go"
    env = dict(os.environ, GOCACHE=str(cache / "cache"), GOPATH=str(cache / "path"), GOPROXY="off",
               GOFLAGS="-mod=mod", GO111MODULE="on", CGO_ENABLED="0")
    r = subprocess.run([go, "build", "-o", str(binary), "."], cwd=source, env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"go build failed: {r.stderr[-2000:]}"
    return binary


def portcullis_bin() -> Path:
    return Path(os.environ.get("PORTCULLIS_BIN") or REPO / "target" / "debug" / "portcullis")


_gateway_probe: tuple[bool, str] | None = None


def gateway_available() -> tuple[bool, str]:
    """Whether `portcullis serve --help` runs; (ok, reason). Cached per process."""
    global _gateway_probe
    if _gateway_probe is None:
        binary = portcullis_bin()
        if not binary.exists():
            _gateway_probe = (False, f"{binary} not built (set PORTCULLIS_BIN or build the cli crate)")
        else:
            try:
                r = subprocess.run([str(binary), "serve", "--help"], capture_output=True, text=True, timeout=20)
                # A skeleton binary exits 0 and prints nothing; the real one documents --config.
                ok = r.returncode == 0 and "--config" in (r.stdout + r.stderr)
                _gateway_probe = (ok, "" if ok else f"`{binary} serve --help` exited {r.returncode} without"
                                  f" documenting --config: {(r.stdout + r.stderr)[-300:]!r}")
            except (OSError, subprocess.TimeoutExpired) as e:
                _gateway_probe = (False, f"`{binary} serve --help` failed: {e}")
    return _gateway_probe


def write_config(
    directory: Path,
    servers: dict[str, dict[str, Any]],
    policies: dict[str, dict[str, Any]],
    approval_timeout_secs: int = 10,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write `portcullis.json` and `policies/<server>.json` into `directory`; return the config path.

    A server missing from `policies` gets no policy file (the gateway's "requires approval" default).
    """
    directory.mkdir(parents=True, exist_ok=True)
    pol_dir = directory / "policies"
    pol_dir.mkdir(exist_ok=True)
    for server, policy in policies.items():
        (pol_dir / f"{server}.json").write_text(json.dumps(policy, indent=2))
    config = {
        "listen": "127.0.0.1:0",
        "policies": "policies",
        "approval": {"timeout_secs": approval_timeout_secs},
        "mcpServers": servers,
    }
    config.update(extra or {})  # further top-level keys (e.g. "upstream")
    path = directory / "portcullis.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@dataclass
class AuditRow:
    raw: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def arguments(self) -> Any:
        args = self.raw.get("arguments")
        if isinstance(args, str):
            try:
                return json.loads(args)
            except ValueError:
                return args
        return args


@dataclass
class Gateway:
    proc: Proc
    config: Path
    data_dir: Path
    url: str
    token: str
    pid: int
    ready_line: str
    servers: list[str] = field(default_factory=list)

    # -- addresses -------------------------------------------------------------------------------
    def mcp_url(self, server: str) -> str:
        return f"{self.url}/mcp/{server}"

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def connect_argv(self, server: str) -> list[str]:
        """The stdio command a client launches to reach `server` through the gateway."""
        return [str(portcullis_bin()), "connect", server, "--data-dir", str(self.data_dir)]

    # -- audit ---------------------------------------------------------------------------------
    def audit_cli(self, *filters: str, timeout: float = 20.0) -> list[AuditRow]:
        """`portcullis audit --format jsonl` with extra filter arguments; rows as dicts."""
        argv = [str(portcullis_bin()), "audit", "--data-dir", str(self.data_dir), "--config", str(self.config),
                "--format", "jsonl", *filters]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise HarnessError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()[-1000:]}")
        rows = []
        for line in r.stdout.splitlines():  # the export escapes every line break a reader splits on
            line = line.strip()
            if line:
                rows.append(AuditRow(json.loads(line)))
        return rows

    def audit_db(self, where: str = "1=1", params: Iterable[Any] = ()) -> list[AuditRow]:
        """Rows of the `calls` view (decisions with their outcomes) in DATA/audit.db, read-only."""
        db = self.data_dir / "audit.db"
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
        try:
            conn.row_factory = sqlite3.Row
            cur = conn.execute(f"SELECT * FROM calls WHERE {where} ORDER BY id", tuple(params))
            return [AuditRow(dict(r)) for r in cur.fetchall()]
        finally:
            conn.close()

    def audit_rows_for(self, server: str, tool: str, marker: str, timeout: float = 10.0,
                       count: int = 1, settled: bool = False, method: str | None = None) -> list[AuditRow]:
        """Wait (bounded) until at least `count` audit rows for server/tool carry `marker` in arguments.

        Rows come back oldest first, whatever order the CLI prints.

        With `settled`, also wait until each forwarded row (allowed/approved) has its outcome filled in.
        With `method` (`resources/read`, `prompts/get`, `sampling/createMessage`, ...), only rows of that
        method (`tool` is then the URI, the prompt name or `sampling`/`elicitation`/`roots`).
        """
        by_method = ("--method", method) if method else ()

        def fetch() -> list[AuditRow] | None:
            rows = [r for r in self.audit_cli("--server", server, "--tool", tool, *by_method, "--limit", "1000")
                    if marker in json.dumps(r.get("arguments"))]
            rows.sort(key=lambda r: (r.get("time_ms") or 0, r.get("id") or 0))  # oldest first
            if len(rows) < count:
                return None
            if settled and any(r.get("decision") in ("allowed", "approved") and r.get("outcome") is None
                               for r in rows):
                return None
            return rows

        try:
            return wait_until(fetch, timeout, f"{count} audit row(s) for {server}/{tool} marker {marker}",
                              interval=0.2)
        except HarnessError:
            rows = [r.raw for r in self.audit_cli("--server", server, "--limit", "1000")]
            raise HarnessError(f"expected {count} settled={settled} audit row(s) for {server}/{tool} with "
                               f"{marker!r}; rows for {server}: {json.dumps(rows)[-3000:]}")

    def stop(self) -> int | None:
        return self.proc.stop()


def start_gateway(config: Path, data_dir: Path, timeout: float = READY_TIMEOUT,
                  env: dict[str, str] | None = None) -> Gateway:
    """Run `portcullis serve`, wait for its ready line on stderr and for DATA/gateway.json."""
    ok, reason = gateway_available()
    if not ok:
        raise HarnessError(reason)
    data_dir.mkdir(parents=True, exist_ok=True)
    proc_env = {"RUST_BACKTRACE": "1"}
    proc_env.update(env or {})
    proc = Proc("portcullis serve",
                [str(portcullis_bin()), "serve", "--config", str(config), "--data-dir", str(data_dir)],
                env=proc_env)
    try:
        m = proc.wait_for_line(r"\bready\b", timeout)
        info_path = data_dir / "gateway.json"

        def read_info() -> dict[str, Any] | None:
            try:
                info = json.loads(info_path.read_text())
            except (OSError, ValueError):
                return None
            return info if info.get("url") and info.get("token") else None

        info = wait_until(read_info, 10.0, f"{info_path} with url and token")
    except BaseException:
        proc.stop()
        raise
    return Gateway(proc=proc, config=config, data_dir=data_dir, url=str(info["url"]).rstrip("/"),
                   token=str(info["token"]), pid=int(info.get("pid") or proc.pid), ready_line=m.string)


# --------------------------------------------------------------------------------------------------
# Raw HTTP (security tests and protocol probes)


@dataclass
class HttpReply:
    status: int
    headers: dict[str, str]
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


INITIALIZE_BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "portcullis-e2e-raw", "version": "0.0.0"},
    },
}


def http_post(url: str, body: Any, headers: dict[str, str] | None = None, timeout: float = 15.0) -> HttpReply:
    """POST JSON with the Streamable HTTP Accept header; never raises on an HTTP error status.

    An SSE reply is read until the response to the posted request's id (or the end of the stream), since
    the stream may stay open and may carry notifications first. urllib sets Host from the URL unless
    `headers` overrides it.
    """
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    want_id = body.get("id") if isinstance(body, dict) else None
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    hdrs.update(headers or {})
    req = urllib.request.Request(url, data=data, headers=hdrs, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return HttpReply(resp.status, dict(resp.headers), _read_body(resp, want_id))
    except urllib.error.HTTPError as e:
        return HttpReply(e.code, dict(e.headers or {}), e.read() if e.fp else b"")


def http_get_json(url: str, headers: dict[str, str] | None = None, timeout: float = 15.0) -> Any:
    """GET a JSON document (the control API); raises on an HTTP error status."""
    req = urllib.request.Request(url, headers=headers or {}, method="GET")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def _read_body(resp, want_id: Any) -> bytes:
    if "text/event-stream" not in resp.headers.get("Content-Type", ""):
        return resp.read()
    out = b""
    while True:
        line = resp.readline()
        if not line:
            return out
        out += line
        payload = line[5:].strip() if line.startswith(b"data:") else b""
        if not payload:
            continue
        try:
            msg = json.loads(payload)
        except ValueError:
            continue
        if want_id is None or (isinstance(msg, dict) and msg.get("id") == want_id
                               and ("result" in msg or "error" in msg)):
            return out


def sse_json_messages(body: bytes) -> list[dict[str, Any]]:
    """JSON-RPC messages in a JSON or SSE response body."""
    text = body.decode("utf-8", "replace").strip()
    if text.startswith("{") or text.startswith("["):
        value = json.loads(text)
        return value if isinstance(value, list) else [value]
    msgs = []
    for line in text.split("\n"):
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload:
                msgs.append(json.loads(payload))
    return msgs


def log(msg: str) -> None:
    print(f"[harness] {msg}", file=sys.stderr, flush=True)


def denial_text(result_content: list[Any]) -> str:
    """The first text content of a tool result (SDK objects or plain dicts)."""
    for c in result_content:
        text = c.get("text") if isinstance(c, dict) else getattr(c, "text", None)
        if text is not None:
            return text
    return ""
