"""Gateway lifecycle, each test with a gateway of its own: policy hot reload (and an invalid file keeping
the last good policy in force), and SIGTERM ending the gateway together with its upstream children."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import approvals
import pytest
from approvals import ControlApi
from v1client import first_text, open_session, run

import harness

pytestmark = pytest.mark.gateway


def children_of(pid: int) -> list[int]:
    """Live (non-zombie) processes whose parent is `pid`, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == pid and state != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


@pytest.fixture
def own_gateway(e2e_tmp):
    root = e2e_tmp / f"lifecycle-{uuid.uuid4().hex[:8]}"
    policy = {"version": "1", "default": "allow", "tools": {"echo": {}}}
    config = harness.write_config(root, {"everything": harness.everything_stdio()}, {"everything": policy})
    gw = harness.start_gateway(config, root / "data")
    yield gw, root / "policies" / "everything.json"
    gw.stop()


def echo_once(gw, m: str):
    async def body():
        async with open_session("http", "everything", harness.everything_stdio(), gw) as (s, _):
            return await s.call_tool("echo", {"message": m})

    return run(body, timeout=30)


def test_policy_hot_reload_and_invalid_file_keeps_last_good(own_gateway):
    gw, policy_file = own_gateway
    assert first_text(echo_once(gw, "before")) == "Echo: before"

    policy_file.write_text(json.dumps({"version": "1", "default": "allow", "tools": {
        "echo": {"action": "deny", "reason": "reloaded policy says no"}}}))

    def denied_now():
        r = echo_once(gw, f"poll-{uuid.uuid4().hex[:6]}")
        return r if r.isError else None

    r = harness.wait_until(denied_now, 15.0, "the edited policy to take effect", interval=0.3)
    assert first_text(r).startswith("[portcullis]") and "reloaded policy says no" in first_text(r)

    lines_before = len(gw.proc.lines)
    policy_file.write_text('{"version": "1", "default": "allow", "tools": {"echo": {"action": "maybe"}}}')
    harness.wait_until(lambda: any("everything.json" in line or "invalid" in line.lower()
                                   for line in gw.proc.lines[lines_before:]),
                       15.0, "the gateway to report the invalid policy file")
    r = echo_once(gw, "after-invalid")
    assert r.isError is True and "reloaded policy says no" in first_text(r), \
        f"an invalid file must keep the last good policy in force: {first_text(r)!r}"

    # The condition is visible beyond the log: GET /control/status and the CLI say so ...
    (problem,) = ControlApi.of(gw).request("GET", "/control/status").json()["policies"]
    assert problem["server"] == "everything" and problem["last_good_in_force"] is True, problem
    assert any("maybe" in p for p in problem["problems"]), problem
    listed = approvals.cli(gw.data_dir, "approvals", "list")
    assert listed.returncode == 0, listed.stderr
    assert 'policy file of server "everything" was rejected' in listed.stderr, listed.stderr
    assert "last good policy stays in force" in listed.stderr, listed.stderr

    # ... until a valid file is in force again.
    policy_file.write_text(json.dumps({"version": "1", "default": "allow"}))
    harness.wait_until(lambda: first_text(echo_once(gw, "fixed")) == "Echo: fixed", 15.0, "the fixed policy")
    assert ControlApi.of(gw).request("GET", "/control/status").json()["policies"] == []
    assert "rejected" not in approvals.cli(gw.data_dir, "approvals", "list").stderr


def test_sigterm_stops_gateway_and_upstream_children(own_gateway):
    gw, _ = own_gateway
    # Open a legacy session over raw HTTP and leave it open: the gateway starts an upstream child for it.
    init = harness.http_post(gw.mcp_url("everything"), harness.INITIALIZE_BODY, headers=gw.auth_headers())
    assert init.status == 200, init.text()
    kids = harness.wait_until(lambda: children_of(gw.proc.pid), 10.0, "an upstream child of the gateway")

    os.kill(gw.proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while gw.proc.popen.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    code = gw.proc.popen.poll()
    assert code is not None, "the gateway must exit within 10 s of SIGTERM"
    assert code == 0, f"a SIGTERM shutdown is orderly: exit {code}"
    harness.wait_until(lambda: not any(alive(k) for k in kids), 5.0,
                       f"upstream children {kids} to be stopped with the gateway")


def test_decision_survives_sigkill(own_gateway):
    """The audit row is committed before the answer: a gateway killed right after still has it."""
    gw, policy_file = own_gateway
    m = uuid.uuid4().hex[:12]
    result = echo_once(gw, m)
    assert first_text(result) == f"Echo: {m}"
    os.kill(gw.proc.pid, signal.SIGKILL)
    gw.proc.popen.wait(timeout=10)
    rows = [r for r in gw.audit_db("tool = ?", ["echo"]) if m in str(r.get("arguments"))]
    assert len(rows) == 1 and rows[0]["decision"] == "allowed", [r.raw for r in rows]
