"""Calls held for approval, for the tests of what a person decides (grants, dry runs, deadlines).

The server is tests/e2e/peers/hostile_server.py as `held`, whose `echo` the policy holds; a call is
an `echo` whose `message` the tests use as a marker (or as a path, for conditions).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from approvals import ControlApi

import harness

HOSTILE = harness.PEERS_DIR / "hostile_server.py"
HOLD_ECHO = {"version": "1", "default": "allow", "tools": {"echo": {"action": "require_approval"}}}


def start(e2e_tmp: Path, name: str, policy: dict[str, Any] | None = None, **config: Any) -> harness.Gateway:
    """A gateway serving `held` under `policy` (default: echo held); `config` goes to write_config."""
    root = e2e_tmp / f"{name}-{uuid.uuid4().hex[:8]}"
    servers = {"held": harness.python_stdio(Path(sys.executable), HOSTILE)}
    return harness.start_gateway(harness.write_config(root, servers, {"held": policy or HOLD_ECHO}, **config),
                                 root / "data")


def approver(gw) -> Iterator[ControlApi]:
    """For a fixture: an attached approver (so calls are held, not refused); afterwards nothing is
    left held for the next test."""
    api = ControlApi.of(gw)
    stream = api.subscribe()
    stream.wait_attached()
    try:
        yield api
    finally:
        stream.close()
        for p in api.pending():
            api.deny(p["id"], "test cleanup")


def session(gw) -> dict[str, str]:
    init = harness.http_post(gw.mcp_url("held"), harness.INITIALIZE_BODY, gw.auth_headers())
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(gw.mcp_url("held"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


_ids = iter(range(100, 1_000_000))


class Call:
    """One echo call in the background (its own request id); `.result()` waits (bounded) for its answer."""

    def __init__(self, gw, headers: dict[str, str], message: str, rid: int | None = None) -> None:
        rid = next(_ids) if rid is None else rid
        self.message = message
        self.out: dict[str, Any] = {}
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": message}}}

        def run() -> None:
            reply = harness.http_post(gw.mcp_url("held"), body, headers, timeout=60)
            msgs = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid] \
                if reply.body.lstrip()[:1] != b"{" else [json.loads(reply.body)]
            self.out["answer"] = msgs[0]

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self, timeout: float = 20) -> dict[str, Any]:
        self.thread.join(timeout)
        assert "answer" in self.out, f"no answer for {self.message!r}"
        return self.out["answer"]["result"]


def held(api: ControlApi, *calls: Call) -> list[str]:
    """Wait until each call is held; its approval ids in the same order."""
    def ids() -> list[str] | None:
        pending = api.pending()
        found = [next((p["id"] for p in pending if p["arguments"].get("message") == c.message), None)
                 for c in calls]
        return found if all(found) else None
    return harness.wait_until(ids, 15, "the calls to be held")


def cli(gw, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(harness.portcullis_bin()), "approvals", *args, "--data-dir", str(gw.data_dir)],
                          capture_output=True, text=True, timeout=30)
