"""The gateway tells the policy where a server resolves paths (its working directory, the directories
its arguments name, its HOME) and refuses an argument a rule reads whose type the pinned schema does
not allow (issue 28, points 1 and 2), seen through the real gateway with real servers:
server-filesystem reading files, server-everything's zod-typed get-sum."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from v1client import first_text, open_session, run

import harness

pytestmark = pytest.mark.gateway


@pytest.fixture()
def places_world(e2e_tmp: Path):
    base = e2e_tmp / f"places-{uuid.uuid4().hex[:6]}"
    home = base / "files" / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_test").write_text("PRIVATE-KEY-MATERIAL")
    (home / "notes.txt").write_text("just notes")
    files = base / "files"
    fs = harness.filesystem_stdio(files)
    fs["env"] = {"HOME": str(home)}
    fs["cwd"] = str(files)
    servers = {"fs": fs, "everything": harness.everything_stdio()}
    policies = {
        "fs": {"version": "1", "default": "allow", "tools": {"read_text_file": {"rules": [
            {"when": {"arguments.path": {"path_under": str(home / ".ssh")}}, "action": "deny", "reason": "reason-keys"}]}}},
        "everything": {"version": "1", "default": "allow", "tools": {"get-sum": {"rules": [
            {"when": {"arguments.a": {"gt": 100}}, "action": "deny", "reason": "reason-big"}]}}},
    }
    config = harness.write_config(base / "gateway", servers, policies)
    gw = harness.start_gateway(config, base / "data")
    yield gw, fs, home
    gw.stop()


@pytest.mark.parametrize("spelling", [
    "~/.ssh/id_test",                # HOME as the server's environment sets it
    "home/.ssh/id_test",             # relative to the server's directory (its argument and cwd)
    "./home//.ssh/./id_test",        # dot segments and repeated separators
    "home/notes/../.ssh/id_test",    # a dot-dot back into the denied directory
])
def test_a_private_key_is_not_read_however_the_path_is_spelled(places_world, spelling):
    gw, fs, home = places_world

    async def body():
        async with open_session("http", "fs", fs, gw) as (s, _):
            return await s.call_tool("read_text_file", {"path": spelling})

    result = run(body)
    text = first_text(result)
    assert "PRIVATE-KEY-MATERIAL" not in text, f"{spelling!r} read the key: {text!r}"
    assert result.isError and "reason-keys" in text, f"{spelling!r} must be denied by the rule: {text!r}"


def test_a_relative_path_outside_the_denied_directory_is_read(places_world):
    gw, fs, home = places_world

    async def body():
        async with open_session("http", "fs", fs, gw) as (s, _):
            return await s.call_tool("read_text_file", {"path": "home/notes.txt"})

    result = run(body)
    assert not result.isError and "just notes" in first_text(result), first_text(result)


def test_a_rule_read_argument_of_another_type_than_the_pinned_schema_is_refused(places_world):
    gw, _, _ = places_world
    spec = harness.everything_stdio()

    async def body():
        async with open_session("http", "everything", spec, gw) as (s, _):
            await s.list_tools()  # pins get-sum's schema (a, b: number)
            typed = await s.call_tool("get-sum", {"a": 50, "b": 1})
            spelled = await s.call_tool("get-sum", {"a": "50", "b": 1})
            big = await s.call_tool("get-sum", {"a": "500", "b": 1})
            return typed, spelled, big

    typed, spelled, big = run(body)
    assert not typed.isError and "51" in first_text(typed), first_text(typed)
    text = first_text(spelled)
    assert spelled.isError and text.startswith(harness.DENIAL_PREFIX), text
    assert "number" in text and "a" in text, f"the refusal says which argument and type: {text!r}"
    assert big.isError and "reason-big" in first_text(big), "a denied value spelled as a string is still denied"
    rows = gw.audit_db("tool = ?", ["get-sum"])
    assert [r["decision"] for r in rows][-3:] == ["allowed", "denied", "denied"], [r.raw for r in rows]
