"""The interop matrix (issue 12): one scripted session per cell, run direct and through Portcullis,
the answers compared after masking volatile values.

A cell is data: client driver × server × entry × upstream transport. `cells()` lists every combination
of the axes with the reason it does not exist (N/A: a server with no such transport, a row served by
another peer, a client that has no way in), or None for a real cell; `params()` gives the drivers
(mcp1/test_matrix_mcp1.py, mcp2/test_matrix_mcp2.py) the real cells only, so every collected cell runs,
and `table()` is the matrix as tests/e2e/INTEROP.md shows it, the N/A cells with their reasons. One gateway serves every server/transport pair of a module
(`start_world`), named `<server>_<transport>` there.

Axes:
  clients     mcp1 (Python mcp 1.x), mcp2-legacy / mcp2-2026 (Python mcp 2.3, mode "legacy" / pinned
              "2026-07-28"), ts2-legacy / ts2-auto (`@modelcontextprotocol/client` 2.4 via ts/client.mjs),
              ts1 (TS SDK 1.x), inspector (inspector CLI), rmcp (rmcp 3.x, the Rust SDK, dual-era: tests/rmcp-peer)
  servers     everything (server-everything), filesystem (server-filesystem), time (mcp-server-time),
              fastmcp (peers/fastmcp_server.py), ts-features (a TS SDK server with sampling/elicitation/
              roots/subscriptions), mrtr (peers/modern_server.py, mcp 2.3 MCPServer), rmcp (rmcp 3.x
              server, dual-era: tests/rmcp-peer)
  entries     connect (`portcullis connect`, stdio), http (the Streamable HTTP entry)
  transports  stdio, http (Streamable HTTP), sse (legacy HTTP+SSE)
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import harness
import rmcp_client

CLIENTS = ["mcp1", "mcp2-legacy", "mcp2-2026", "ts2-legacy", "ts2-auto", "ts1", "inspector", "rmcp"]
SERVERS = ["everything", "filesystem", "time", "fastmcp", "ts-features", "mrtr", "rmcp"]
ENTRIES = ["connect", "http"]
TRANSPORTS = ["stdio", "http", "sse"]

# The transports each server offers as a peer here.
OFFERED = {
    "everything": ["stdio", "http", "sse"],
    "filesystem": ["stdio"],
    "time": ["stdio"],
    "fastmcp": ["stdio", "http", "sse"],
    "ts-features": ["stdio"],
    "mrtr": ["stdio", "http"],
    "rmcp": ["stdio"],
}

# Servers that speak the 2026-07-28 era (Python mcp 2.3 MCPServer), so a pinned-2026 client has a baseline.
MODERN_SERVERS = {"mrtr", "time", "rmcp"}

# Transports a peer could serve but the matrix does not start it on yet.
NOT_STARTED = {
    ("mrtr", "sse"): "the MRTR peer is a 2026-era server; 2026-07-28 has no SSE transport",
    ("rmcp", "http"): "the rmcp peer serves stdio only (rmcp's HTTP server would bring a second HTTP stack to build)",
    ("rmcp", "sse"): "the rmcp peer serves stdio only, and rmcp 3.x has no legacy HTTP+SSE server",
}

# Whole rows that do not exist, and why.
SERVER_NOT_APPLICABLE = {
    "ts-features": "no separate peer: server-everything is the TS SDK server with sampling/elicitation/roots/"
                   "subscriptions and is the `everything` row",
}
@dataclass(frozen=True)
class Cell:
    client: str
    server: str
    entry: str
    transport: str

    @property
    def gateway_server(self) -> str:
        return f"{self.server}_{self.transport}"

    @property
    def id(self) -> str:
        return f"{self.client}-{self.server}-{self.transport}-via-{self.entry}"


def not_applicable(cell: Cell) -> str | None:
    """Why `cell` is a combination that does not exist (N/A), or None for a real cell."""
    if cell.server in SERVER_NOT_APPLICABLE:
        return SERVER_NOT_APPLICABLE[cell.server]
    if (cell.server, cell.transport) in NOT_STARTED:
        return NOT_STARTED[(cell.server, cell.transport)]
    if cell.transport not in OFFERED[cell.server]:
        return f"{cell.server} has no {cell.transport} transport"
    if cell.client == "rmcp" and (cell.entry, cell.transport) != ("connect", "stdio"):
        return ("the rmcp client here speaks stdio only (rmcp's HTTP client needs reqwest 0.13, a second "
                "HTTP stack to build), so it has no baseline over HTTP and no way into the HTTP entry")
    if cell.client == "mcp2-2026" and cell.server not in MODERN_SERVERS:
        return (f"{cell.server} is a legacy-era server and a client pinned to 2026-07-28 does not fall back "
                "to initialize, so there is no direct baseline (the legacy and auto rows cover it)")
    return None


def cells() -> Iterator[tuple[Cell, str | None]]:
    """Every combination of the axes, with its N/A reason or None."""
    for client in CLIENTS:
        for server in SERVERS:
            for transport in TRANSPORTS:
                for entry in ENTRIES:
                    cell = Cell(client, server, entry, transport)
                    yield cell, not_applicable(cell)


def params(implemented: set[str], client_prefix: str) -> list[Any]:
    """pytest params for the real cells of the clients starting with `client_prefix` (N/A ones are
    not collected: there is nothing to run). Every such client must be driven by the caller."""
    import pytest

    out = []
    for cell, why in cells():
        if not cell.client.startswith(client_prefix) or why:
            continue
        if cell.client not in implemented:
            raise ValueError(f"client {cell.client} has real cells but the driver does not implement it")
        out.append(pytest.param(cell, id=cell.id))
    return out


def table() -> str:
    """The matrix as tests/e2e/INTEROP.md shows it: one row per server and upstream
    transport, one column per client, each cell "connect / HTTP entry": ✓ (a real cell, run) or a
    letter for its N/A reason, the reasons listed below the table."""
    grid = dict(cells())
    letters: dict[str, str] = {}
    counts: dict[str, int] = {}
    rows = ["| server | upstream | " + " | ".join(CLIENTS) + " |", "|---|---|" + "---|" * len(CLIENTS)]
    for server in SERVERS:
        for transport in TRANSPORTS:
            shown = []
            for client in CLIENTS:
                marks = []
                for entry in ENTRIES:
                    why = grid[Cell(client, server, entry, transport)]
                    if why is None:
                        marks.append("✓")
                        continue
                    letter = letters.setdefault(why, chr(ord("a") + len(letters)))
                    counts[letter] = counts.get(letter, 0) + 1
                    marks.append(letter)
                shown.append(" / ".join(marks))
            rows.append(f"| {server} | {transport} | " + " | ".join(shown) + " |")
    real = sum(1 for why in grid.values() if why is None)
    head = f"{real} real cells, each run; {len(grid) - real} N/A (of {len(grid)}):"
    notes = [f"- **{letter}** (N/A, {counts[letter]}): {why}" for why, letter in letters.items()]
    return "\n".join([head, "", *rows, "", *notes]) + "\n"


# --------------------------------------------------------------------------------------------------
# Masking: what legitimately differs between two runs of the same session

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\b")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?\b")
_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")
_LONG_HEX = re.compile(r"\b[0-9a-f]{24,}\b", re.I)
_EPOCH_MS = re.compile(r"\b1[6-9]\d{11}\b")
VOLATILE_KEYS = {"sessionId", "requestId", "progressToken", "_meta", "timestamp", "callMs"}


def mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE_KEYS else mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, str):
        for pattern, token in ((_UUID, "<uuid>"), (_TIME, "<time>"), (_CLOCK, "<clock>"), (_PORT, "<host:port>"),
                               (_LONG_HEX, "<hex>"), (_EPOCH_MS, "<epoch-ms>")):
            value = pattern.sub(token, value)
        return value
    return value


# Text the direct session must have seen, so that two equally broken sessions cannot pass.
SANITY = {
    "everything": "Echo: matrix",
    "filesystem": "hello from the matrix",
    "fastmcp": "said: matrix",
    "time": "+9.0h",
    "mrtr": "Echo: matrix",
    "rmcp": "rmcp echo: matrix",
}


def assert_same(cell: Cell, direct: dict[str, Any], via: dict[str, Any]) -> None:
    """Every observation of the session matches, key by key, after masking."""
    assert direct, f"{cell.id}: the direct session observed nothing"
    assert SANITY[cell.server] in json.dumps(direct), f"{cell.id}: the direct session is broken: {str(direct)[:1500]}"
    assert set(via) == set(direct), f"{cell.id}: observations differ: {sorted(set(via) ^ set(direct))}"
    for key in direct.keys() - VOLATILE_KEYS:
        d, v = mask(direct[key]), mask(via[key])
        assert v == d, f"{cell.id}: {key!r} differs through Portcullis\n direct: {str(d)[:1500]}\n    via: {str(v)[:1500]}"


# --------------------------------------------------------------------------------------------------
# The servers of one module, and one gateway for all of them


@dataclass
class World:
    servers: dict[str, dict[str, Any]]  # gateway server name -> upstream spec
    gateway: harness.Gateway
    procs: list[Any]
    fs_root: Path

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """`arguments` with `$FS` standing for the filesystem server's root."""
        return {k: v.replace("$FS", str(self.fs_root)) if isinstance(v, str) else v for k, v in arguments.items()}

    def spec(self, cell: Cell) -> dict[str, Any]:
        return self.servers[cell.gateway_server]

    def stop(self) -> None:
        self.gateway.stop()
        for proc in self.procs:
            proc.stop()


VENV1_PYTHON = harness.VENV1 / "bin" / "python"
VENV2_PYTHON = harness.VENV2 / "bin" / "python"


MCP_SERVER_TIME = harness.VENV2 / "bin" / "mcp-server-time"
MRTR_ENV = {"MODERN_SERVER_MATRIX": "1"}  # adds the `announce` tool (subscriptions/listen events)


def start_fastmcp(transport: str) -> tuple[Any, str]:
    """FastMCP over `streamable-http` (endpoint /mcp) or `sse` (GET /sse)."""
    port = harness.free_port()
    proc = harness.Proc(f"fastmcp[{transport}]", [str(VENV1_PYTHON), str(harness.PEERS_DIR / "fastmcp_server.py")],
                        env={"FASTMCP_HTTP_PORT": str(port), "FASTMCP_TRANSPORT": transport})
    try:
        harness.wait_until(lambda: harness.port_accepts("127.0.0.1", port), harness.READY_TIMEOUT,
                           f"fastmcp {transport} on port {port}")
    except BaseException:
        proc.stop()
        raise
    return proc, f"http://127.0.0.1:{port}/{'mcp' if transport == 'streamable-http' else 'sse'}"


def start_mrtr_http() -> tuple[Any, str]:
    """The MRTR peer's MCPServer over Streamable HTTP (it binds port 0 and says which port it got)."""
    proc = harness.Proc("mrtr[http]", [str(VENV2_PYTHON), str(harness.PEERS_DIR / "modern_http_server.py")],
                        env=MRTR_ENV)
    try:
        port = int(proc.wait_for_line(r"listening on port (\d+)", harness.READY_TIMEOUT).group(1))
    except BaseException:
        proc.stop()
        raise
    return proc, f"http://127.0.0.1:{port}/mcp"


def start_world(root: Path, everything_http: Any, everything_sse: Any) -> World:
    """Every offered server/transport pair, allowed by policy, behind one gateway."""
    root = root / f"matrix-{uuid.uuid4().hex[:8]}"
    fs_root = root / "fsroot"
    fs_root.mkdir(parents=True)
    (fs_root / "hello.txt").write_text("hello from the matrix\n")
    procs: list[Any] = []
    try:
        urls = {}
        for name, start in (("fastmcp_http", lambda: start_fastmcp("streamable-http")),
                            ("fastmcp_sse", lambda: start_fastmcp("sse")), ("mrtr_http", start_mrtr_http)):
            proc, urls[name] = start()
            procs.append(proc)
        servers = {
            "everything_stdio": harness.everything_stdio(),
            "everything_http": {"url": everything_http.url},
            "everything_sse": {"type": "sse", "url": everything_sse.url},
            "filesystem_stdio": harness.filesystem_stdio(fs_root),
            "time_stdio": {"command": str(harness.require_file(MCP_SERVER_TIME)), "args": ["--local-timezone", "UTC"],
                           "env": {}},
            "fastmcp_stdio": harness.python_stdio(VENV1_PYTHON, harness.PEERS_DIR / "fastmcp_server.py"),
            "fastmcp_http": {"url": urls["fastmcp_http"]},
            "fastmcp_sse": {"type": "sse", "url": urls["fastmcp_sse"]},
            "mrtr_stdio": harness.python_stdio(VENV2_PYTHON, harness.PEERS_DIR / "modern_server.py", MRTR_ENV),
            "mrtr_http": {"url": urls["mrtr_http"]},
            "rmcp_stdio": rmcp_client.server_stdio(),
        }
        # Every door written out: the cells that exercise sampling, elicitation (legacy requests and
        # MRTR input requests) and roots, and read resources or prompts, run under explicit entries
        # rather than the default.
        allow = {"version": "1", "default": "allow",
                 "resources": {"*": {}}, "prompts": {"*": {}},
                 "server_requests": {"sampling": {}, "elicitation": {}, "roots": {}}}
        config = harness.write_config(root / "gateway", servers, {name: allow for name in servers})
        gateway = harness.start_gateway(config, root / "data")
    except BaseException:
        for proc in procs:
            proc.stop()
        raise
    return World(servers=servers, gateway=gateway, procs=procs, fs_root=fs_root)


# --------------------------------------------------------------------------------------------------
# What each server's script calls (only tools the server lists are called)

CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "everything": [
        ("echo", {"message": "matrix"}),
        ("get-sum", {"a": 2, "b": 3}),
        ("get-tiny-image", {}),
        ("get-structured-content", {"location": "New York"}),
        ("get-resource-links", {"count": 2}),
        ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
        ("get-annotated-message", {"messageType": "error", "includeImage": False}),
        ("echo", {"wrong": "arguments"}),
    ],
    "filesystem": [
        ("list_allowed_directories", {}),
        ("read_text_file", {"path": "$FS/hello.txt"}),
        ("read_text_file", {"path": "/definitely/outside"}),
    ],
    "fastmcp": [
        ("say", {"text": "matrix"}),
        ("weather", {"city": "Oslo"}),
        ("pixel", {}),
        ("tone", {}),
        ("linked", {}),
        ("embedded", {}),
        ("fail", {"why": "matrix"}),
    ],
    "time": [
        ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
        ("get_current_time", {"timezone": "Europe/Oslo"}),
        ("convert_time", {"source_timezone": "Nowhere/Atlantis", "time": "12:00", "target_timezone": "UTC"}),
    ],
    "mrtr": [
        ("echo", {"message": "matrix"}),
    ],
    "rmcp": [
        ("echo", {"message": "matrix"}),
        ("drop_table", {"table": "matrix"}),
        ("echo", {"wrong": "arguments"}),
    ],
}

# Prompt and completion requests per server, where it offers them.
PROMPTS = {
    "everything": ("args-prompt", {"city": "Oslo"}),
    "fastmcp": ("greet", {"name": "Ada"}),
}
COMPLETIONS = {
    "everything": ("completable-prompt", "department", "E"),
    "fastmcp": ("greet", "name", "A"),
}


if __name__ == "__main__":
    print(table(), end="")
