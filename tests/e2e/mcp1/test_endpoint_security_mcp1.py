"""Endpoint security beyond the token (SECURITY.md): the control API answers only the gateway's own
user, and nothing on the MCP channel can decide a held call.

Another local user is simulated with `setpriv` (util-linux) dropping to `nobody` (uid 65534); that
needs root, which CI has. The other-user client is the system `python3` with urllib only, so it needs
nothing `nobody` cannot read.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from approvals import ControlApi

import harness

pytestmark = pytest.mark.gateway

NOBODY = 65534
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
HELD = {"version": "1", "default": "allow", "tools": {"ping_tool": {"action": "require_approval"}}}

# Run as the other user: one control request with the token given in argv; print status and body.
CLIENT = r"""
import sys, urllib.request, urllib.error
url, token, method = sys.argv[1], sys.argv[2], sys.argv[3]
data = b'{"scope": "once"}' if method == "POST" else None
req = urllib.request.Request(url, data=data, method=method,
                             headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=10) as r:
        print(r.status); print(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.read().decode())
"""

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="needs root and setpriv to act as another user (CI runs as root)")


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=30, cwd="/")


@pytest.fixture(scope="module")
def sgw(e2e_tmp: Path):
    root = e2e_tmp / f"endpoint-{uuid.uuid4().hex[:8]}"
    spec = harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "slow_server.py")
    config = harness.write_config(root, {"slow": spec}, {"slow": HELD}, approval_timeout_secs=30)
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (endpoint security) exited with {gateway.stop()}")


@pytest.fixture
def held(sgw):
    """A held `ping_tool` call over a legacy HTTP session, with an approver attached; yields
    (approval id, the MCP session headers, the thread's result box)."""
    api = ControlApi.of(sgw)
    stream = api.subscribe()
    m = "m" + uuid.uuid4().hex[:12]
    init = harness.http_post(sgw.mcp_url("slow"), harness.INITIALIZE_BODY, sgw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**sgw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(sgw.mcp_url("slow"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    box: dict[str, Any] = {}

    def call() -> None:
        box["reply"] = harness.http_post(sgw.mcp_url("slow"), {
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "ping_tool", "arguments": {"marker": m}}}, headers, timeout=40)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    ev = stream.wait_requested(m, "slow", "ping_tool")
    try:
        yield ev["approval"]["id"], headers, box, t
    finally:
        api.deny(ev["approval"]["id"], "test cleanup")
        t.join(15)
        stream.close()


@needs_root
def test_control_api_refuses_another_local_user_even_with_the_token(sgw, held):
    approval_id, _headers, box, t = held
    url = sgw.url
    for method, path in (("GET", "/control/approvals"), ("POST", f"/control/approvals/{approval_id}/approve")):
        r = as_nobody(SYSTEM_PYTHON, "-c", CLIENT, url + path, sgw.token, method)
        assert r.returncode == 0, r.stderr
        status, _, body = r.stdout.partition("\n")
        assert status == "403", f"{method} {path} as nobody with the right token: {r.stdout!r}"
        assert "own user" in body and str(NOBODY) in body, body
    # The held call is still pending: nobody's approve decided nothing.
    api = ControlApi.of(sgw)
    assert any(p["id"] == approval_id for p in api.pending())
    assert "reply" not in box
    assert any("control API request refused" in line for line in sgw.proc.lines), "the log must say so"

    # Positive control: the same client program as the gateway's own user is answered.
    r = subprocess.run([SYSTEM_PYTHON, "-c", CLIENT, url + "/control/approvals", sgw.token, "GET"],
                       capture_output=True, text=True, timeout=30)
    status, _, body = r.stdout.partition("\n")
    assert status == "200" and approval_id in body, r.stdout
    r = subprocess.run([SYSTEM_PYTHON, "-c", CLIENT, url + f"/control/approvals/{approval_id}/approve",
                        sgw.token, "POST"], capture_output=True, text=True, timeout=30)
    assert r.stdout.startswith("200"), r.stdout
    t.join(15)
    msgs = harness.sse_json_messages(box["reply"].body)
    assert any(m.get("id") == 7 and "pong" in json.dumps(m) for m in msgs), msgs


@needs_root
def test_another_user_cannot_read_the_token_file(sgw):
    info = sgw.data_dir / "gateway.json"
    assert stat.S_IMODE(info.stat().st_mode) == 0o600
    probe = "import sys\ntry:\n    open(sys.argv[1]).read(); print('read')\nexcept PermissionError: print('denied')"
    r = as_nobody(SYSTEM_PYTHON, "-c", probe, str(info))
    assert r.stdout.strip() == "denied", (r.stdout, r.stderr)


@needs_root
def test_another_user_without_the_token_gets_401_first(sgw):
    """The token is checked before the user: a wrong token says 401 whoever sends it."""
    r = as_nobody(SYSTEM_PYTHON, "-c", CLIENT, sgw.url + "/control/approvals", "wrong-token", "GET")
    assert r.stdout.startswith("401"), r.stdout


def test_nothing_on_the_mcp_channel_decides_a_held_call(sgw, held):
    approval_id, headers, box, _t = held
    attempts = [
        {"method": "approvals/approve", "params": {"id": approval_id, "scope": "always"}},
        {"method": "control/approvals/approve", "params": {"id": approval_id}},
        {"method": f"/control/approvals/{approval_id}/approve", "params": {}},
        {"method": "notifications/approved", "params": {"id": approval_id}},
        {"method": "tools/call", "params": {"name": "approve", "arguments": {"id": approval_id}}},
    ]
    for i, body in enumerate(attempts):
        msg = {"jsonrpc": "2.0", **body}
        if not body["method"].startswith("notifications/"):
            msg["id"] = 100 + i
        reply = harness.http_post(sgw.mcp_url("slow"), msg, headers, timeout=15)
        assert reply.status in (200, 202), (body, reply.status, reply.text())
    # A control path under the MCP route is just an unknown server name.
    reply = harness.http_post(f"{sgw.url}/mcp/control/approvals/{approval_id}/approve", {"scope": "once"},
                              sgw.auth_headers())
    assert reply.status == 404, (reply.status, reply.text())
    api = ControlApi.of(sgw)
    (still,) = [p for p in api.pending() if p["id"] == approval_id]
    assert still["tool"] == "ping_tool"
    assert "reply" not in box, "the held call must still be waiting"


def test_non_loopback_listen_is_refused_unless_the_config_says_so(e2e_tmp: Path):
    root = e2e_tmp / f"listen-{uuid.uuid4().hex[:8]}"
    spec = harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "slow_server.py")
    config = harness.write_config(root, {"slow": spec}, {"slow": HELD})
    cfg = json.loads(config.read_text())
    cfg["listen"] = "0.0.0.0:0"
    config.write_text(json.dumps(cfg))
    r = subprocess.run([str(harness.portcullis_bin()), "serve", "--config", str(config), "--data-dir",
                        str(root / "data")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, (r.returncode, r.stderr[-500:])
    assert "$.listen" in r.stderr and "allow_remote" in r.stderr, r.stderr[-500:]
    assert not (root / "data" / "gateway.json").exists()

    cfg["allow_remote"] = True
    config.write_text(json.dumps(cfg))
    gw = harness.start_gateway(config, root / "data")
    try:
        assert any("NOT LOOPBACK" in line for line in gw.proc.lines), "consent must be logged loudly"
        port = gw.url.rsplit(":", 1)[1]
        reply = harness.http_post(f"http://127.0.0.1:{port}/mcp/slow", harness.INITIALIZE_BODY, gw.auth_headers())
        assert reply.status == 200, reply.status
    finally:
        gw.stop()
