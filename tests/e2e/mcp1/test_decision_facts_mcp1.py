"""What a held call's prompt is told (DESIGN §5 "the prompt explains the call"), and undoing an "always".

- GET /control/approvals carries the policy's own reason, which part of the policy asked in words,
  the class and risk from the policy entry, and the tool's inputSchema; a tool the server never
  listed is high risk whatever its name says.
- An "always" decision changes only the new entry's lines of a hand-formatted policy file, names the
  write in its answer, and `portcullis approvals undo WRITE_ID` puts the file back byte for byte.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
import harness
import held_calls
from held_calls import Call, cli, held, session

pytestmark = pytest.mark.gateway

POLICY = {
    "version": "1",
    "default": "require_approval",
    "tools": {"echo": {"action": "require_approval", "reason": "echo talks back", "class": "read", "risk": "medium"}},
}


@pytest.fixture(scope="module")
def fgw(e2e_tmp: Path):
    gateway = held_calls.start(e2e_tmp, "facts", POLICY, approval_timeout_secs=60)
    yield gateway
    gateway.stop()


@pytest.fixture
def api(fgw):
    yield from held_calls.approver(fgw)


def list_tools(gw, headers: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = harness.http_post(gw.mcp_url("held"), body, headers)
    assert b"echo" in reply.body, reply.body


def call_in_background(gw, headers: dict[str, str], tool: str, arguments: dict) -> dict:
    out: dict = {}
    body = {"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}

    def run() -> None:
        out["reply"] = harness.http_post(gw.mcp_url("held"), body, headers, timeout=60)

    threading.Thread(target=run, daemon=True).start()
    return out


def test_a_held_call_carries_the_policys_reason_rule_words_risk_and_schema(fgw, api):
    s = session(fgw)
    list_tools(fgw, s)
    call = Call(fgw, s, "facts-1")
    [aid] = held(api, call)
    p = next(p for p in api.pending() if p["id"] == aid)
    assert p["reason"] == "echo talks back", p
    assert p["asked_by"] == "the policy entry for echo in held.json", p
    assert p["rule"] == "tools.echo", "the stable rule name stays"
    assert (p["risk"], p["risk_level"], p["risk_basis"]) == ("read", "medium", "policy"), p
    assert p["input_schema"] == {"type": "object", "properties": {"message": {"type": "string"}}}, p


def test_a_never_listed_tools_held_call_is_high_risk(fgw, api):
    s = session(fgw)
    list_tools(fgw, s)
    # The name reads as harmless ("get"), but the server never listed it.
    call_in_background(fgw, s, "get_status_now", {"x": 1})
    p = api.wait_pending(lambda ps: next((p for p in ps if p["tool"] == "get_status_now"), None), 15,
                         "the never-listed call to be held")
    assert p["risk_basis"] == "never_listed", p
    assert p["risk_level"] in ("high", "critical"), p
    assert p["asked_by"] == "the default of held.json (no entry names get_status_now)", p
    assert p["input_schema"] is None, p


def test_always_changes_only_its_lines_and_undo_restores_the_file(e2e_tmp: Path):
    gw = held_calls.start(e2e_tmp, "undo", {"version": "1", "default": "require_approval", "tools": {}})
    path = gw.config.parent / "policies" / "held.json"
    hand = '{\n    "version":  "1",\n    "default":  "require_approval",\n    "tools": {\n        "other": {}\n    }\n}\n'
    path.write_text(hand)
    api_iter = held_calls.approver(gw)
    try:
        api = next(api_iter)
        harness.wait_until(lambda: cli(gw, "list", "--json").returncode == 0, 10, "the CLI to reach the gateway")
        call = Call(gw, session(gw), "undo-1")
        [aid] = held(api, call)
        done = cli(gw, "approve", aid, "--scope", "always")
        assert done.returncode == 0, done.stderr
        match = re.search(r"portcullis approvals undo (w-[0-9a-f]+)", done.stdout)
        assert match, done.stdout
        written = path.read_text()
        assert written == hand.replace('"other": {}\n', '"other": {},\n        "echo": {}\n'), written
        assert call.result()["content"][0]["text"] == "Echo: undo-1"

        undone = cli(gw, "undo", match.group(1))
        assert undone.returncode == 0, undone.stderr
        assert path.read_text() == hand, "the file is back byte for byte"
        again = cli(gw, "undo", match.group(1))
        assert again.returncode == 1 and "no policy write" in again.stderr, again
    finally:
        api_iter.close()
        gw.stop()


def test_undo_after_an_external_edit_is_refused(e2e_tmp: Path):
    gw = held_calls.start(e2e_tmp, "undo-edit", {"version": "1", "default": "require_approval", "tools": {}})
    path = gw.config.parent / "policies" / "held.json"
    api_iter = held_calls.approver(gw)
    try:
        api = next(api_iter)
        call = Call(gw, session(gw), "undo-2")
        [aid] = held(api, call)
        answer = api.approve(aid, "always").json()
        write = answer["policy_write"]
        assert write["path"] == str(path) and write["key"] == "echo", write
        assert write["rule_text"] == '"echo": {}', write
        edited = path.read_text().replace('"default"', ' "default"')
        path.write_text(edited)
        reply = api.request("POST", "/control/policy/undo", {"write_id": write["write_id"]})
        assert reply.status == 409 and "changed since" in reply.json()["error"], reply
        assert path.read_text() == edited, "the person's edit stays"
    finally:
        api_iter.close()
        gw.stop()


def test_one_decision_settles_n_identical_calls(fgw, api):
    """N identical held calls of one session: one "for this session" answers them all (the timing of
    this is bench/settle_n.py's figure)."""
    s = session(fgw)
    calls = [Call(fgw, s, "settle-all") for _ in range(10)]
    ids = api.wait_pending(
        lambda ps: (found := [p["id"] for p in ps if p["arguments"].get("message") == "settle-all"])
        and len(found) == 10 and found, 20, "ten calls to be held")
    answer = api.approve(ids[0], "session").json()
    assert sorted(answer["also_settled"]) == sorted(ids[1:]), answer
    for c in calls:
        assert c.result()["content"][0]["text"] == "Echo: settle-all"
