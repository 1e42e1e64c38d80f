"""Standing grants (DESIGN §5, §7): which calls × whose × how long, through the control API and the CLI.

A grant decides at once every held call it covers and says so (`also_settled`); it then lets later calls
through (or refuses them) without a prompt, until it expires or is revoked. The held tool is `echo` on
peers/hostile_server.py under `require_approval`; conditions read its `message` argument as a path.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import harness
import held_calls
from held_calls import Call, cli, held, session

pytestmark = pytest.mark.gateway


@pytest.fixture(scope="module")
def ggw(e2e_tmp: Path):
    gateway = held_calls.start(e2e_tmp, "grants", approval_timeout_secs=60)
    yield gateway
    gateway.stop()


@pytest.fixture
def api(ggw):
    yield from held_calls.approver(ggw)


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
    assert refused["isError"] is True and "denied by the user earlier" in refused["content"][0]["text"], refused
    # When it expires, calls are asked about again.
    harness.wait_until(lambda: not any(g["effect"] == "deny" for g in api.request("GET", "/control/grants").json()),
                       10, "the 2 s grant to expire")
    held(api, Call(ggw, s1, f"deny-{m}-4"))


def test_an_always_with_a_condition_writes_a_rule_that_decides_only_what_it_covers(ggw, api):
    """DESIGN §5 "always" with a condition: a `path_under` allow rule is written into the policy file (only
    echo's entry changes), settles the held calls it covers, lets later calls under the directory through
    by that rule, leaves a call outside and a `..` escape held, and can be undone."""
    m = uuid.uuid4().hex[:6]
    d = f"/tmp/always-{m}"
    policy_file = ggw.config.parent / "policies" / "held.json"
    before = policy_file.read_text()
    s1, s2 = session(ggw), session(ggw)
    prior = Call(ggw, s1, f"{d}/prior")
    (idp,) = held(api, prior)
    assert cli(ggw, "approve", idp).returncode == 0
    prior.result()
    a, b = Call(ggw, s1, f"{d}/a"), Call(ggw, s2, f"{d}/sub/b")
    outside, escape = Call(ggw, s1, f"/tmp/other-{m}"), Call(ggw, s1, f"{d}/../escape-{m}")
    ida, idb, ido, ide = held(api, a, b, outside, escape)
    when = json.dumps({"arguments.message": {"path_under": d}})

    # The dry run shows the rule as it will be written and counts the earlier calls it decides.
    dry = cli(ggw, "approve", ida, "--scope", "always", "--when", when, "--dry-run")
    assert dry.returncode == 0, dry
    assert "the new rule is tools.echo.rules[0]" in dry.stdout and "path_under" in dry.stdout, dry.stdout
    audited = [r for r in ggw.audit_cli("--server", "held", "--tool", "echo", "--limit", "1000")
               if str((r.get("arguments") or {}).get("message", "")).startswith(f"{d}/")
               and ".." not in r["arguments"]["message"]]
    assert audited, "the approved earlier call is in the audit"
    assert f"it would have matched {len(audited)} of the earlier audited calls" in dry.stdout, dry.stdout
    assert policy_file.read_text() == before, "a dry run writes nothing"

    out = cli(ggw, "approve", ida, "--scope", "always", "--when", when)
    assert out.returncode == 0, out
    assert f"also settled 1 waiting call(s): {idb}" in out.stdout, out.stdout
    assert "undo within 30 s: portcullis approvals undo " in out.stdout and d in out.stdout, out.stdout
    assert a.result()["content"][0]["text"] == f"Echo: {d}/a"
    assert b.result()["content"][0]["text"] == f"Echo: {d}/sub/b"
    still = {p["id"] for p in api.pending()}
    assert {ido, ide} <= still, still

    after = policy_file.read_text()
    assert after.startswith(before.split('"echo"')[0]), after  # everything before the entry as it was
    assert json.loads(after)["tools"]["echo"] == {"action": "require_approval", "rules": [
        {"when": {"arguments.message": {"path_under": d}}, "action": "allow"}]}, after

    # A later call under the directory, from a third session, passes by the rule without a prompt.
    later = Call(ggw, session(ggw), f"{d}/x/later")
    assert later.result()["content"][0]["text"] == f"Echo: {d}/x/later"
    (row,) = ggw.audit_rows_for("held", "echo", f"{d}/x/later", settled=True)
    assert (row["decision"], row["decided_by"], row["rule"]) == ("allowed", "policy", "tools.echo.rules[0]"), row.raw
    (ide2,) = held(api, Call(ggw, s1, f"{d}/../escape2-{m}"))

    write_id = out.stdout.split("portcullis approvals undo ")[1].split()[0]
    undone = cli(ggw, "undo", write_id)
    assert undone.returncode == 0, undone
    assert policy_file.read_text() == before, "undo puts the file back byte for byte"
    for aid in (ido, ide, ide2):
        assert cli(ggw, "deny", aid).returncode == 0


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
    policy = {"version": "1", "default": "allow", "tools": {"echo": {
        "action": "require_approval",
        "rules": [{"when": {"arguments.message": {"contains": "rm -rf"}}, "action": "deny", "reason": "no rm"}]}}}
    gw = held_calls.start(e2e_tmp, "edits", policy, approval_timeout_secs=60)
    approver = held_calls.approver(gw)
    api = next(approver)
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
        approver.close()
        gw.stop()
