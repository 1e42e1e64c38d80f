"""Destructive tools of real servers: a denied call must never reach the server.

server-filesystem `write_file` and mcp-server-git `git_commit` / `git_reset` are denied by policy; the
file must not exist afterwards and the repository must be unchanged. Allowed read-only calls give the
same result as a direct connection. (test_direct_baselines_mcp1.py shows the same destructive calls
do change things when made directly, so these assertions can fail.)
"""

from __future__ import annotations

import uuid

import pytest
from v1client import assert_denial, first_text, open_session, result_view, run

import harness

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]


@pytest.mark.parametrize("route", ROUTES)
def test_fs_write_denied_never_reaches_server(world, gateway, route):
    m = uuid.uuid4().hex[:12]
    target = world.fs_root / f"denied-{m}.txt"
    hello = str(world.fs_root / "hello.txt")
    spec = world.spec("fs")

    async def body():
        async with open_session("direct", "fs", spec) as (s, _):
            direct_read = await s.call_tool("read_text_file", {"path": hello})
        async with open_session(route, "fs", spec, gateway) as (s, _):
            via_read = await s.call_tool("read_text_file", {"path": hello})
            denied = await s.call_tool("write_file", {"path": str(target), "content": f"written {m}"})
            tools = {t.name for t in (await s.list_tools()).tools}
        return direct_read, via_read, denied, tools

    direct_read, via_read, denied, tools = run(body)
    assert result_view(via_read) == result_view(direct_read), "an allowed read must match the direct result"
    assert "hello from the e2e suite" in first_text(via_read)
    assert_denial(denied, "tools.write_file", "no writes from agents")
    assert not target.exists(), "a denied write_file must never reach server-filesystem"
    assert "write_file" in tools, "a denied (not hidden) tool stays listed"

    (row,) = gateway.audit_rows_for("fs", "write_file", m)
    assert row["decision"] == "denied" and row["rule"] == "tools.write_file", row.raw
    assert row["reason"] == "no writes from agents"
    assert row["outcome"] is None
    reads = [r for r in gateway.audit_cli("--server", "fs", "--tool", "read_text_file", "--decision", "allowed")]
    assert reads, "the allowed read must be audited too"


@pytest.mark.parametrize("route", ROUTES)
def test_git_commit_and_reset_denied_repo_unchanged(world, gateway, route):
    m = uuid.uuid4().hex[:12]
    repo = str(world.repo)
    spec = world.spec("git")
    before = harness.git_state(world.repo)
    assert before["staged"] == "staged.txt", f"fixture repo must have a staged change: {before}"

    async def body():
        async with open_session("direct", "git", spec) as (s, _):
            direct_status = await s.call_tool("git_status", {"repo_path": repo})
        async with open_session(route, "git", spec, gateway) as (s, _):
            via_status = await s.call_tool("git_status", {"repo_path": repo})
            commit = await s.call_tool("git_commit", {"repo_path": repo, "message": f"agent commit {m}"})
            reset = await s.call_tool("git_reset", {"repo_path": repo, "marker": m})
            unlisted = await s.call_tool("git_create_branch", {"repo_path": repo, "branch_name": f"b-{m}"})
        return direct_status, via_status, commit, reset, unlisted

    direct_status, via_status, commit, reset, unlisted = run(body)
    assert result_view(via_status) == result_view(direct_status), "git_status must match the direct result"
    assert "staged.txt" in first_text(via_status)
    assert_denial(commit, "tools.git_commit", "commits are made by people")
    assert_denial(reset, "tools.git_reset", "resetting the index loses work")
    assert_denial(unlisted)  # default: deny
    assert harness.git_state(world.repo) == before, "denied git calls must leave the repository unchanged"

    (c,) = gateway.audit_rows_for("git", "git_commit", m)
    (r,) = gateway.audit_rows_for("git", "git_reset", m)
    (b,) = gateway.audit_rows_for("git", "git_create_branch", m)
    assert (c["decision"], c["rule"], c["reason"]) == ("denied", "tools.git_commit", "commits are made by people")
    assert (r["decision"], r["rule"], r["reason"]) == ("denied", "tools.git_reset", "resetting the index loses work")
    assert b["decision"] == "denied" and "default" in (b["rule"] or ""), b.raw
