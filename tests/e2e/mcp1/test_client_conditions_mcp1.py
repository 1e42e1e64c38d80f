"""`client.name` / `client.version` conditions (DESIGN §4) through the real gateway: a rule reads the
clientInfo the client gave at initialize."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import harness

pytestmark = pytest.mark.gateway

SLOW = harness.PEERS_DIR / "slow_server.py"


def tool_call(rid: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}}


def answer(reply: harness.HttpReply, rid: Any) -> dict[str, Any]:
    if reply.body.lstrip()[:1] == b"{":
        return json.loads(reply.body)
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid]
    return msg


def test_a_client_name_condition_decides_by_the_initialize_client_info(e2e_tmp: Path):
    root = e2e_tmp / f"client-cond-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True, exist_ok=True)
    servers = {"slow": harness.python_stdio(Path(sys.executable), SLOW, {"SLOW_SERVER_LOG": str(root / "l")})}
    policies = {"slow": {"version": "1", "default": "deny", "tools": {"slow": {
        "action": "deny", "reason": "only for the e2e client",
        "rules": [{"when": {"client.name": {"eq": "portcullis-e2e-raw"}}, "action": "allow"}]}}}}
    gw = harness.start_gateway(harness.write_config(root, servers, policies), root / "data")
    try:
        def call_as(name: str) -> dict[str, Any]:
            body = json.loads(json.dumps(harness.INITIALIZE_BODY))
            body["params"]["clientInfo"]["name"] = name
            init = harness.http_post(gw.mcp_url("slow"), body, gw.auth_headers())
            sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
            headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
            reply = harness.http_post(gw.mcp_url("slow"), tool_call(2, "slow", {"marker": name, "seconds": 0}),
                                      headers, timeout=30)
            return answer(reply, 2)["result"]

        assert call_as("portcullis-e2e-raw")["isError"] is False
        denied = call_as("someone-else")
        assert denied["isError"] is True and "only for the e2e client" in denied["content"][0]["text"], denied
    finally:
        gw.stop()
