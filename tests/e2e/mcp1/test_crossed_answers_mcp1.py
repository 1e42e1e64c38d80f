"""Crossed answers and stray cancels (security issue, class 6), over the HTTP entry with raw messages.

- two requests with one id in flight in one legacy session: the second is refused at once, the first
  is answered normally (the server would not have known which answer was whose);
- a cancel sent before its request changes nothing: the request runs and is audited as completed;
- a stateless client that names another agent's clientInfo cannot withdraw that agent's held call
  by a cancel (stateless clients cancel by closing their response stream);
- ids written with JSON escapes are the same ids: the answer comes back (`"\\u0061bc"` is `"abc"`).
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from approvals import ControlApi, mentions

import harness

pytestmark = pytest.mark.gateway

SLOW = harness.PEERS_DIR / "slow_server.py"
HOSTILE = harness.PEERS_DIR / "hostile_server.py"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def cgw(e2e_tmp: Path):
    root = e2e_tmp / f"crossed-{uuid.uuid4().hex[:8]}"
    python = Path(sys.executable)
    log = root / "slow.log"
    root.mkdir(parents=True, exist_ok=True)
    servers = {
        "slow": harness.python_stdio(python, SLOW, {"SLOW_SERVER_LOG": str(log)}),
        "held": harness.python_stdio(python, HOSTILE),
    }
    policies = {
        "slow": {"version": "1", "default": "allow"},
        "held": {"version": "1", "default": "allow", "tools": {"echo": {"action": "require_approval"}}},
    }
    config = harness.write_config(root, servers, policies, approval_timeout_secs=60)
    gateway = harness.start_gateway(config, root / "data")
    gateway.slow_log = log  # type: ignore[attr-defined]
    yield gateway
    gateway.stop()


def session(gw, server: str) -> dict[str, str]:
    init = harness.http_post(gw.mcp_url(server), harness.INITIALIZE_BODY, gw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def answer(reply: harness.HttpReply, rid: Any) -> dict[str, Any]:
    msgs = [m for m in harness.sse_json_messages(reply.body) if "id" in m and m["id"] == rid] \
        if reply.body.lstrip()[:1] != b"{" else [json.loads(reply.body)]
    assert len(msgs) == 1, (reply.status, reply.text()[:500])
    return msgs[0]


def tool_call(rid: Any, name: str, args: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": args}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def in_background(fn) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except Exception as e:  # surfaced by the test's own assertion on `out`
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_a_second_request_with_an_in_flight_id_is_refused(cgw):
    headers = session(cgw, "slow")
    marker = uuid.uuid4().hex[:8]
    first, out = in_background(lambda: harness.http_post(
        cgw.mcp_url("slow"), tool_call(5, "slow", {"marker": marker, "seconds": 3}), headers, timeout=30))
    harness.wait_until(lambda: f"started {marker}" in cgw.slow_log.read_text() if cgw.slow_log.exists() else False,
                       15, "the first call to start upstream")
    second = harness.http_post(cgw.mcp_url("slow"),
                               tool_call(5, "slow", {"marker": marker + "-2", "seconds": 0}), headers, timeout=15)
    err = answer(second, 5)
    assert "error" in err and "already in flight" in err["error"]["message"], err
    first.join(30)
    assert "value" in out, out
    ok = answer(out["value"], 5)
    assert ok["result"]["content"][0]["text"] == f"slept 3.0s for {marker}", ok
    assert f"started {marker}-2" not in cgw.slow_log.read_text(), "the refused duplicate never ran"


def test_a_cancel_sent_before_its_request_changes_nothing(cgw):
    headers = session(cgw, "slow")
    marker = uuid.uuid4().hex[:8]
    early = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "early"}}
    assert harness.http_post(cgw.mcp_url("slow"), early, headers).status == 202
    reply = harness.http_post(cgw.mcp_url("slow"), tool_call(9, "slow", {"marker": marker, "seconds": 0}),
                              headers, timeout=30)
    assert answer(reply, 9)["result"]["content"][0]["text"] == f"slept 0.0s for {marker}"
    (row,) = cgw.audit_rows_for("slow", "slow", marker, settled=True)
    assert row["decision"] == "allowed" and row["outcome"] == "ok", row.raw


def test_a_stateless_cancel_cannot_withdraw_another_agents_held_call(cgw):
    api = ControlApi.of(cgw)
    approver = api.subscribe()  # held calls wait only while someone can decide them
    approver.wait_attached()
    marker = uuid.uuid4().hex[:8]
    meta = {**MODERN_META, "io.modelcontextprotocol/clientInfo": {"name": "victim", "version": "1"}}
    held, out = in_background(lambda: harness.http_post(
        cgw.mcp_url("held"), tool_call(3, "echo", {"message": marker}, meta), cgw.auth_headers(), timeout=60))
    pending = api.wait_pending(lambda ps: [p for p in ps if mentions(p, marker)], 15, "the held call")
    forged = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": 3, "_meta": meta}}
    assert harness.http_post(cgw.mcp_url("held"), forged, cgw.auth_headers()).status == 202
    # The forged cancel was handled (202) before this list: the call must still be waiting.
    assert [p for p in api.pending() if mentions(p, marker)], "a forged cancel withdrew another agent's call"
    assert api.approve(pending[0]["id"], scope="once").status == 200
    held.join(30)
    approver.close()
    assert "value" in out, out
    assert answer(out["value"], 3)["result"]["content"][0]["text"] == f"Echo: {marker}"


@pytest.mark.parametrize("written", [r'"\u0061bc"', r'"x\/y"', r'"caf\u00e9"'])
def test_ids_written_with_escapes_get_their_answer(cgw, written):
    headers = session(cgw, "slow")
    marker = uuid.uuid4().hex[:8]
    body = ('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"slow","arguments":'
            '{"marker":"%s","seconds":0}}}' % (written, marker)).encode()
    reply = harness.http_post(cgw.mcp_url("slow"), body, {**headers, "Content-Type": "application/json"},
                              timeout=30)
    rid = json.loads(written)
    assert answer(reply, rid)["result"]["content"][0]["text"] == f"slept 0.0s for {marker}"

