"""A JSON-only Streamable HTTP client that hangs up mid-call: the audit row says `cancelled`.

The client asks for `Accept: application/json` only (no SSE), so the gateway holds its POST open
until the upstream answers. It closes the connection while peers/slow_server.py's `slow` tool is
running (the peer logs "started <marker>"). Nobody waits for the answer any more: the decision row's
`outcome` must become `cancelled` soon after, not stay NULL until the tool ends (it sleeps 120 s,
longer than the bounded wait here). Two calls: one the policy allows, and one held for a person and
approved, whose forward runs after the hold (a JSON-only held call waits in a task of its own).
Their log lines carry the session's and the request's spans (server, tool, decision).
"""

from __future__ import annotations

import json
import socket
import sys
import urllib.parse
import uuid
from pathlib import Path

import pytest

from approvals import ControlApi, mentions

import harness

pytestmark = pytest.mark.gateway

SLOW = harness.PEERS_DIR / "slow_server.py"
WAIT = 15.0  # seconds any one step may take (a loaded 2-core CI box)


@pytest.fixture(scope="module")
def hgw(e2e_tmp: Path):
    root = e2e_tmp / f"hang-up-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True, exist_ok=True)
    log = root / "slow.log"
    log.touch()
    peer = harness.python_stdio(Path(sys.executable), SLOW, {"SLOW_SERVER_LOG": str(log)})
    policies = {"direct": {"version": "1", "default": "allow"},
                "held": {"version": "1", "default": "require_approval"}}
    config = harness.write_config(root, {"direct": peer, "held": peer}, policies, approval_timeout_secs=60)
    gateway = harness.start_gateway(config, root / "data")
    gateway.slow_log = log  # type: ignore[attr-defined]
    yield gateway
    gateway.stop()


def legacy_headers(gw, server: str) -> dict[str, str]:
    """A JSON-only legacy session: initialized, its id and version on every later request."""
    json_only = {**gw.auth_headers(), "Accept": "application/json"}
    init = harness.http_post(gw.mcp_url(server), harness.INITIALIZE_BODY, json_only)
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**json_only, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    note = harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    assert note.status == 202, note
    return headers


def open_call(url: str, body: dict, headers: dict[str, str]) -> socket.socket:
    """Sends a JSON-only POST on a connection of its own and returns the connection, unread."""
    parts = urllib.parse.urlsplit(url)
    data = json.dumps(body).encode()
    head = {**headers, "Host": parts.netloc, "Content-Type": "application/json",
            "Accept": "application/json", "Content-Length": str(len(data)), "Connection": "close"}
    request = f"POST {parts.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items()) + "\r\n"
    sock = socket.create_connection((parts.hostname, parts.port), timeout=WAIT)
    sock.sendall(request.encode() + data)
    return sock


def slow_call(marker: str) -> dict:
    params = {"name": "slow", "arguments": {"marker": marker, "seconds": 120}}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


@pytest.mark.parametrize("server", ["direct", "held"])
def test_a_json_only_client_hanging_up_mid_call_leaves_the_row_cancelled(hgw, server):
    marker = "m" + uuid.uuid4().hex[:12]
    headers = legacy_headers(hgw, server)
    api = ControlApi.of(hgw)
    with api.subscribe() as approver:  # a held call waits only while someone can decide it
        approver.wait_attached()
        sock = open_call(hgw.mcp_url(server), slow_call(marker), headers)
        if server == "held":
            pending = api.wait_pending(lambda ps: [p for p in ps if mentions(p, marker)], WAIT, "the held call")
            assert api.approve(pending[0]["id"], scope="once").status == 200
        log: Path = hgw.slow_log
        harness.wait_until(lambda: f"started {marker}" in log.read_text(), WAIT, "the slow tool to start")
        # Running, unanswered: the row is there, with no outcome yet.
        (row,) = hgw.audit_rows_for(server, "slow", marker)
        assert row["outcome"] is None, row.raw
        sock.close()

        (row,) = hgw.audit_rows_for(server, "slow", marker, timeout=WAIT, settled=True)
    decision = "allowed" if server == "direct" else "approved"
    assert row["decision"] == decision, row.raw
    assert row["outcome"] == "cancelled", row.raw
    assert f"finished {marker}" not in log.read_text()
    # The decision's log line names none of its context; its session and request spans do (the
    # held call is decided in a task of its own, which carries the request's span on).
    context = (f"server={server} ", 'tool="slow"', f"decision={decision}")
    assert any("tools/call decided" in line and all(c in line for c in context) for line in hgw.proc.lines), \
        "\n".join(line for line in hgw.proc.lines if "tools/call decided" in line)
