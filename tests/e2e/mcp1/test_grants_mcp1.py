"""Standing grants (DESIGN §5, §7): which calls × whose × how long, through the control API and the CLI.

A grant decides at once every held call it covers and says so (`also_settled`); it then lets later calls
through (or refuses them) without a prompt, until it expires or is revoked. The held tool is `echo` on
peers/hostile_server.py under `require_approval`; conditions read its `message` argument as a path.
"""

from __future__ import annotations

import json
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

HOSTILE = harness.PEERS_DIR / "hostile_server.py"


@pytest.fixture(scope="module")
def ggw(e2e_tmp: Path):
    root = e2e_tmp / f"grants-{uuid.uuid4().hex[:8]}"
    servers = {"held": harness.python_stdio(Path(sys.executable), HOSTILE)}
    policies = {"held": {"version": "1", "default": "allow", "tools": {"echo": {"action": "require_approval"}}}}
    gateway = harness.start_gateway(harness.write_config(root, servers, policies, approval_timeout_secs=60),
                                    root / "data")
    yield gateway
    gateway.stop()


@pytest.fixture
def api(ggw):
    api = ControlApi.of(ggw)
    stream = api.subscribe()  # an approver, so calls are held rather than refused
    stream.wait_attached()
    yield api
    stream.close()
    for p in api.pending():  # leave nothing held for the next test
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


def test_a_scoped_session_grant_settles_what_it_covers_and_stands_for_later_calls(ggw, api):
    d = f"/tmp/g-{uuid.uuid4().hex[:6]}"
    s1, s2 = session(ggw), session(ggw)
    a, b, c, e = Call(ggw, s1, f"{d}/a"), Call(ggw, s1, f"{d}/b"), Call(ggw, s2, f"{d}/c"), Call(ggw, s1, "/etc/x")
    ida, idb, idc, ide = held(api, a, b, c, e)
    reply = api.request(
        "POST", f"/control/approvals/{ida}/approve",
        {"scope": "session", "for": "15m", "when": {"arguments.message": {"path_under": d}}})
    assert reply.status == 200, reply
    body = reply.json()
    assert body["also_settled"] == [idb], body  # same session and under d; not c (other session), not e
    assert a.result()["content"][0]["text"] == f"Echo: {d}/a"
    assert b.result()["content"][0]["text"] == f"Echo: {d}/b"
    still = {p["id"] for p in api.pending()}
    assert {idc, ide} <= still, still
    # A later call the grant covers is not held; one outside it is.
    later = Call(ggw, s1, f"{d}/later")
    assert later.result()["content"][0]["text"] == f"Echo: {d}/later"
    escape = Call(ggw, s1, f"{d}/../outside")
    held(api, escape)
    (row,) = ggw.audit_rows_for("held", "echo", f"{d}/later", settled=True)
    assert row["decision"] == "approved" and "grant" in (row["reason"] or ""), row.raw
    # Listed, then revoked: the next call is held again.
    listed = json.loads(cli(ggw, "grants", "--json").stdout)
    (grant,) = [g for g in listed if g["id"] == body["grant"]]
    assert grant["session"] and grant["which"] == "when" and grant["expires_at_ms"], grant
    revoked = cli(ggw, "revoke", body["grant"])
    assert revoked.returncode == 0 and "revoked" in revoked.stdout, revoked
    again = Call(ggw, s1, f"{d}/again")
    held(api, again)


def test_a_timed_every_session_deny_settles_and_refuses_until_it_expires(ggw, api):
    m = uuid.uuid4().hex[:6]
    s1, s2 = session(ggw), session(ggw)
    first, other = Call(ggw, s1, f"deny-{m}-1"), Call(ggw, s2, f"deny-{m}-2")
    id1, id2 = held(api, first, other)
    out = cli(ggw, "deny", id1, "--always", "--for", "2s", "--reason", "not today")
    assert out.returncode == 0, out
    assert f"also settled 1 waiting call(s): {id2}" in out.stdout, out.stdout
    for call in (first, other):
        result = call.result()
        assert result["isError"] is True and "not today" in result["content"][0]["text"], result
    # While the grant stands, a new call from a third session is refused without a prompt.
    refused = Call(ggw, session(ggw), f"deny-{m}-3").result()
    assert refused["isError"] is True and "denied by a person earlier" in refused["content"][0]["text"], refused
    # When it expires, calls are asked about again.
    harness.wait_until(lambda: not any(g["effect"] == "deny" for g in api.request("GET", "/control/grants").json()),
                       10, "the 2 s grant to expire")
    held(api, Call(ggw, s1, f"deny-{m}-4"))


def test_a_bad_condition_is_refused_with_the_reason_and_decides_nothing(ggw, api):
    call = Call(ggw, session(ggw), f"bad-{uuid.uuid4().hex[:6]}")
    (aid,) = held(api, call)
    reply = api.request("POST", f"/control/approvals/{aid}/approve",
                        {"scope": "session", "for": "1h", "when": {"arguments.message": {"path_under": "/a/../.."}}})
    assert reply.status == 400 and "path_under" in reply.text(), reply
    bad_for = api.request("POST", f"/control/approvals/{aid}/approve", {"scope": "session", "for": "soon"})
    assert bad_for.status == 400 and "duration" in bad_for.text(), bad_for
    assert aid in {p["id"] for p in api.pending()}, "still waiting for a person"


def test_approve_with_edits_runs_the_edit_records_both_and_never_loosens(e2e_tmp: Path):
    """DESIGN §5 "approve with edits": the upstream gets the edited arguments; the audit row keeps what
    ran and what the agent asked; an edit the policy denies is refused and the call keeps waiting."""
    root = e2e_tmp / f"edits-{uuid.uuid4().hex[:8]}"
    servers = {"held": harness.python_stdio(Path(sys.executable), HOSTILE)}
    policies = {"held": {"version": "1", "default": "allow", "tools": {"echo": {
        "action": "require_approval",
        "rules": [{"when": {"arguments.message": {"contains": "rm -rf"}}, "action": "deny", "reason": "no rm"}]}}}}
    gw = harness.start_gateway(harness.write_config(root, servers, policies, approval_timeout_secs=60), root / "data")
    api = ControlApi.of(gw)
    stream = api.subscribe()
    stream.wait_attached()
    try:
        m = uuid.uuid4().hex[:6]
        call = Call(gw, session(gw), f"asked {m}")
        (aid,) = held(api, call)
        loosened = cli(gw, "approve", aid, "--arguments", json.dumps({"message": f"rm -rf / {m}"}))
        assert loosened.returncode == 1 and "no rm" in loosened.stderr, loosened
        assert aid in {p["id"] for p in api.pending()}, "a refused edit decides nothing"
        colliding = api.request("POST", f"/control/approvals/{aid}/approve",
                                {"arguments": {"message": "x", "MESSAGE": "y"}})
        assert colliding.status == 400, colliding
        ok = cli(gw, "approve", aid, "--arguments", json.dumps({"message": f"edited {m}"}))
        assert ok.returncode == 0 and "edited arguments" in ok.stdout, ok
        assert call.result()["content"][0]["text"] == f"Echo: edited {m}"
        (row,) = gw.audit_rows_for("held", "echo", f"edited {m}", settled=True)
        assert row["decision"] == "approved" and row["outcome"] == "ok", row.raw
        assert row["arguments"] == {"message": f"edited {m}"}, row.raw
        assert row.raw["original_arguments"] == {"message": f"asked {m}"}, row.raw
    finally:
        stream.close()
        gw.stop()
