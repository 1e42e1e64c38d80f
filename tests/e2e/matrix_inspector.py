"""The inspector CLI row of the interop matrix (tests/e2e/matrix.py): `@modelcontextprotocol/inspector`
2.x in `--cli` mode, one process per method, as a person runs it (MCP.md):

    inspector --cli --method tools/list -- <server command...>          # stdio, direct
    inspector --cli --method tools/list -- portcullis connect SERVER    # entry `connect`
    inspector --cli --method tools/list --transport http --server-url URL --header "Authorization: Bearer T"

Each run is a whole session (initialize, the method, close), so a cell's observations are the printed
answers of a few methods: tools/list, the server's sanity call, and resources/list where the server
has resources. The runs of one route go in parallel: much of a run's time is waiting for the stdio
server to shut down.

The package's bin script is run with node rather than through `npx --offline`, which only adds its own
resolution (about a second per run) in front of the same script.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import harness
import matrix

LAUNCHER = harness.NODE_MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"

# The one call per server whose answer carries matrix.SANITY (string arguments only: the CLI's
# `--tool-arg key=value` pairs).
SANITY_CALL = {
    "everything": ("echo", {"message": "matrix"}),
    "filesystem": ("read_text_file", {"path": "$FS/hello.txt"}),
    "time": ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    "fastmcp": ("say", {"text": "matrix"}),
    "mrtr": ("echo", {"message": "matrix"}),
    "rmcp": ("echo", {"message": "matrix"}),
}

# The servers that offer resources (a run costs about a second of CPU, so the others skip resources/list).
WITH_RESOURCES = {"everything", "fastmcp"}

# HOME for the CLI (it keeps a catalog under ~/.mcp-inspector); one per test session.
_HOME = Path(tempfile.mkdtemp(prefix="portcullis-inspector-home-"))


def target(route: str, cell: matrix.Cell, world: matrix.World) -> list[str]:
    """The CLI arguments that name where to connect."""
    spec = world.spec(cell)
    if route == "stdio":  # the entry `connect`
        return ["--", *world.gateway.connect_argv(cell.gateway_server)]
    if route == "http":
        return ["--transport", "http", "--server-url", world.gateway.mcp_url(cell.gateway_server),
                "--header", f"Authorization: Bearer {world.gateway.token}"]
    if "command" in spec:
        env = [a for k, v in spec.get("env", {}).items() for a in ("-e", f"{k}={v}")]
        return [*env, "--", spec["command"], *spec.get("args", [])]
    return ["--transport", "sse" if spec.get("type") == "sse" else "http", "--server-url", spec["url"]]


def run_cli(method_args: list[str], where: list[str]) -> dict[str, Any]:
    """One CLI run: its exit status and its printed answer (or its last error line)."""
    argv = [harness.node_bin(), str(harness.require_file(LAUNCHER)), "--cli", *method_args, *where]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       env={**os.environ, "HOME": str(_HOME)})
    try:
        answer: Any = json.loads(r.stdout)
    except json.JSONDecodeError:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        answer = {"unparsed stdout": r.stdout[-500:], "last stderr line": lines[-1] if lines else ""}
    return {"exit": r.returncode, "answer": answer}


def observe(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    where = target(route, cell, world)
    name, args = SANITY_CALL[cell.server]
    pairs = [f"{k}={v}" for k, v in world.arguments(args).items()]
    runs = {
        "tools/list": ["--method", "tools/list"],
        f"tools/call {name}": ["--method", "tools/call", "--tool-name", name, "--tool-arg", *pairs],
    }
    if cell.server in WITH_RESOURCES:
        runs["resources/list"] = ["--method", "resources/list"]
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = {key: pool.submit(run_cli, method, where) for key, method in runs.items()}
        return {key: f.result() for key, f in futures.items()}
