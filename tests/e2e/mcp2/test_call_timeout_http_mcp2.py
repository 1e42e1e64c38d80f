"""The call timeout in front of a Streamable HTTP upstream (peers/modern_http_server.py), both eras, over
raw HTTP to the gateway.

`slow_echo` sleeps far past the server's 2 s `call_timeout_secs`. The gateway must answer with a
`[portcullis]` JSON-RPC error soon after the timeout and cancel the work upstream: for a legacy session
with `notifications/cancelled`, for a 2026-07-28 request by closing the response stream. The peer logs
`slow_echo cancelled <marker>` when its handler is cancelled, so the test sees the server stop.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
from v2client import MODERN

import harness

pytestmark = pytest.mark.gateway

SERVER = "modern_http"
CALL_TIMEOUT = 2
SLACK = 3.0


@pytest.fixture(scope="module")
def server_log(e2e_tmp: Path) -> Path:
    return e2e_tmp / f"timeout-http-{uuid.uuid4().hex[:8]}.log"


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path, server_log: Path):
    proc = harness.Proc("modern_http_server", [sys.executable, str(harness.PEERS_DIR / "modern_http_server.py")],
                        env={"MODERN_SERVER_LOG": str(server_log), "MODERN_HTTP_PING_SECS": "0.2"})
    try:
        port = int(proc.wait_for_line(r"listening on port (\d+)", harness.READY_TIMEOUT).group(1))
        harness.wait_until(lambda: harness.port_accepts("127.0.0.1", port), 10.0, f"port {port} to accept")
        root = e2e_tmp / f"timeout-http-{uuid.uuid4().hex[:8]}"
        spec = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "call_timeout_secs": CALL_TIMEOUT}
        config = harness.write_config(root, {SERVER: spec}, {SERVER: {"version": "1", "default": "allow"}})
        gateway = harness.start_gateway(config, root / "data")
        yield gateway
        gateway.stop()
    finally:
        proc.stop()


def call_body(m: str, modern: bool) -> dict:
    params = {"name": "slow_echo", "arguments": {"message": m, "seconds": 60}}
    if modern:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                           "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}


def legacy_headers(gw) -> dict[str, str]:
    init = harness.http_post(gw.mcp_url(SERVER), harness.INITIALIZE_BODY, gw.auth_headers())
    assert init.status == 200, init.text()
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(gw.mcp_url(SERVER), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_hung_http_call_is_failed_and_cancelled_upstream(gw, server_log, era):
    m = "m" + uuid.uuid4().hex[:12]
    if era == "modern":
        headers = {**gw.auth_headers(), "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                   "Mcp-Name": "slow_echo"}
    else:
        headers = legacy_headers(gw)
    started = time.monotonic()
    reply = harness.http_post(gw.mcp_url(SERVER), call_body(m, era == "modern"), headers, timeout=30)
    waited = time.monotonic() - started
    harness.log(f"[{era}] hung HTTP call answered after {waited:.2f} s (timeout {CALL_TIMEOUT} s)")
    (msg,) = [x for x in harness.sse_json_messages(reply.body) if x.get("id") == 5]
    assert "error" in msg and msg["error"]["message"].startswith("[portcullis]"), msg
    assert f"within {CALL_TIMEOUT} s" in msg["error"]["message"], msg
    assert CALL_TIMEOUT - 0.2 <= waited < CALL_TIMEOUT + SLACK, waited
    harness.wait_until(lambda: f"slow_echo cancelled {m}" in (server_log.read_text() if server_log.exists() else ""),
                       10, "the upstream to see the cancellation")
    (row,) = gw.audit_rows_for(SERVER, "slow_echo", m, settled=True)
    assert row["outcome"] == "failure", row.raw
