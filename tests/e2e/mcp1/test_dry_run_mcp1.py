"""Dry runs (DESIGN §5, §7): `approvals approve/deny --dry-run` and `"dry_run": true` print the grant or rule a
decision would make and how many earlier audited calls it would have matched, and decide nothing.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
import held_calls
from held_calls import Call, held, session

import harness

pytestmark = pytest.mark.gateway



@pytest.fixture(scope="module")
def rgw(e2e_tmp: Path):
    gateway = held_calls.start(e2e_tmp, "dry-run", approval_timeout_secs=60)
    yield gateway
    gateway.stop()


@pytest.fixture
def api(rgw):
    yield from held_calls.approver(rgw)


def cli(gw, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(harness.portcullis_bin()), "approvals", *args, "--data-dir", str(gw.data_dir)],
                          capture_output=True, text=True, timeout=30)


def test_dry_run_counts_earlier_calls_and_leaves_the_call_pending(rgw, api):
    d = f"/tmp/dr-{uuid.uuid4().hex[:6]}"
    s1, s2 = session(rgw), session(rgw)
    # Earlier audited calls: two under d (one per session), one elsewhere; each approved once.
    earlier = [Call(rgw, s1, f"{d}/a"), Call(rgw, s2, f"{d}/b"), Call(rgw, s1, "/etc/elsewhere")]
    for aid in held(api, *earlier):
        assert api.approve(aid, "once").status == 200
    for call in earlier:
        call.result()
    rows = [r for r in rgw.audit_rows_for("held", "echo", "", count=3, settled=True)]
    total = len(rows)
    assert total >= 3, rows

    new = Call(rgw, s1, f"{d}/new")
    (aid,) = held(api, new)
    when = json.dumps({"arguments.message": {"path_under": d}})
    out = cli(rgw, "approve", aid, "--scope", "always", "--for", "1h", "--when", when, "--dry-run")
    assert out.returncode == 0, out
    assert "would make a grant: allow held/echo" in out.stdout and "every session" in out.stdout, out.stdout
    assert f"would have matched 2 of the earlier audited calls of held/echo ({total} in the audit)" in out.stdout, \
        out.stdout
    assert f"nothing was decided: {aid} is still pending" in out.stdout, out.stdout

    # This session only: the call under d from the other session is not counted.
    reply = api.request("POST", f"/control/approvals/{aid}/approve",
                        {"scope": "session", "for": "1h", "when": json.loads(when), "dry_run": True})
    assert reply.status == 200, reply
    body = reply.json()
    assert body["dry_run"] is True and body["pending"] is True and body["matched"] == 1, body
    assert body["grant"]["which"] == "when" and body["grant"]["session"], body

    # "Always" without a condition: the entry written into the policy file, matching every earlier call.
    out = cli(rgw, "deny", aid, "--always", "--reason", "no more", "--dry-run")
    assert out.returncode == 0, out
    assert "would write into held's policy file: \"echo\": " in out.stdout and '"no more"' in out.stdout, out.stdout
    assert f"would have matched {total} of the earlier audited calls" in out.stdout, out.stdout

    # Nothing was decided: no grant, the policy file unchanged, the call still waits and can be decided.
    assert api.request("GET", "/control/grants").json() == []
    policy = json.loads((rgw.config.parent / "policies" / "held.json").read_text())
    assert policy["tools"]["echo"] == {"action": "require_approval"}, policy
    assert aid in {p["id"] for p in api.pending()}
    assert api.approve(aid, "once").status == 200
    assert new.result()["content"][0]["text"] == f"Echo: {d}/new"


def test_an_exact_dry_run_compares_the_argument_digest(rgw, api):
    m = f"exact-{uuid.uuid4().hex[:6]}"
    s = session(rgw)
    first = Call(rgw, s, m)
    (aid,) = held(api, first)
    assert api.approve(aid, "once").status == 200
    first.result()
    again = Call(rgw, s, m)
    (aid,) = held(api, again)
    out = cli(rgw, "approve", aid, "--scope", "once", "--for", "10m", "--dry-run")
    assert out.returncode == 0, out
    assert "this exact call (same arguments)" in out.stdout, out.stdout
    assert "would have matched 1 of the earlier" in out.stdout, out.stdout
    once = api.request("POST", f"/control/approvals/{aid}/approve", {"scope": "once", "dry_run": True}).json()
    assert once["writes"] == "nothing" and once["matched"] == 0 and once["pending"] is True, once
    unknown = api.request("POST", "/control/approvals/999999/approve", {"dry_run": True})
    assert unknown.status == 404, unknown
