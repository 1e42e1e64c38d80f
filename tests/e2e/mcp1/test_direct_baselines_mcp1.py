"""Direct connections to every peer, without the gateway: the baselines the gateway tests compare with.

They also prove the gateway tests' negative assertions can fail: made directly, write_file creates the
file and git_commit / git_reset change the repository.
"""

from __future__ import annotations

import uuid

import pytest
from v1client import (
    CONDITIONAL_TOOLS,
    ELICIT_NAME,
    ROOT_URI,
    cancel_slow_call,
    exercise_server_requests,
    first_text,
    open_session,
    run,
    tool_map,
)

import harness

UPSTREAMS = ["everything", "everything_http", "everything_sse"]


def test_peers_are_installed():
    for path in (harness.EVERYTHING_JS, harness.FILESYSTEM_JS, harness.MCP_SERVER_GIT):
        assert path.exists(), f"{path} missing: run scripts/test-peers.sh"


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_everything_direct(world, upstream):
    m = uuid.uuid4().hex[:12]
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, init):
            tools = tool_map(await s.list_tools())
            echo = await s.call_tool("echo", {"message": m})
            sums = [await s.call_tool("get-sum", {"a": 1, "b": i}) for i in range(3)]
        return init, tools, echo, sums

    init, tools, echo, sums = run(body)
    assert init.serverInfo.name == "mcp-servers/everything"
    assert {"echo", "get-sum", "get-env", "gzip-file-as-resource", "get-tiny-image",
            "trigger-long-running-operation"} <= set(tools)
    assert first_text(echo) == f"Echo: {m}"
    assert [first_text(r) for r in sums] == [f"The sum of 1 and {i} is {1 + i}." for i in range(3)], \
        "directly there is no rate limit"


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_server_requests_direct(world, upstream):
    m = uuid.uuid4().hex[:12]
    cb, tools, sampling, elicitation, roots = run(
        lambda: exercise_server_requests("direct", upstream, world.spec(upstream), None, m))
    assert CONDITIONAL_TOOLS <= tools
    assert len(cb.sampling) == 1 and len(cb.elicitation) == 1 and cb.roots >= 1
    assert f"prompt {m}" in first_text(sampling)
    assert ELICIT_NAME in "".join(c.text for c in elicitation.content if c.type == "text")
    assert ROOT_URI in first_text(roots)


def test_progress_direct(world):
    seen = []

    async def body():
        async def on_progress(progress, total, message):
            seen.append((progress, total))

        async with open_session("direct", "everything", world.spec("everything")) as (s, _):
            return await s.call_tool("trigger-long-running-operation", {"duration": 0.4, "steps": 4},
                                     progress_callback=on_progress)

    result = run(body)
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert "Long running operation completed" in first_text(result)


def test_cancel_direct(world):
    m = uuid.uuid4().hex[:12]
    text, _outcome, after = run(lambda: cancel_slow_call("direct", world.spec("slow"), None, world.slow_log, m))
    assert f"cancelled {m}" in text and f"finished {m}" not in text
    assert first_text(after) == f"pong {m}"


def test_fs_write_direct_creates_file(world):
    target = world.fs_root / f"direct-{uuid.uuid4().hex[:12]}.txt"

    async def body():
        async with open_session("direct", "fs", world.spec("fs")) as (s, _):
            return await s.call_tool("write_file", {"path": str(target), "content": "direct write"})

    result = run(body)
    assert result.isError is not True, first_text(result)
    assert target.read_text() == "direct write"
    target.unlink()


def test_git_commit_and_reset_direct_change_repo(e2e_tmp):
    repo = harness.make_git_repo(e2e_tmp / f"direct-repo-{uuid.uuid4().hex[:8]}")
    spec = harness.git_stdio(repo)
    before = harness.git_state(repo)

    async def body():
        async with open_session("direct", "git", spec) as (s, _):
            reset = await s.call_tool("git_reset", {"repo_path": str(repo)})
            after_reset = harness.git_state(repo)
            (repo / "again.txt").write_text("again\n")
            await s.call_tool("git_add", {"repo_path": str(repo), "files": ["again.txt"]})
            commit = await s.call_tool("git_commit", {"repo_path": str(repo), "message": "direct commit"})
        return reset, after_reset, commit

    reset, after_reset, commit = run(body)
    assert reset.isError is not True and commit.isError is not True, (first_text(reset), first_text(commit))
    assert before["staged"] == "staged.txt" and after_reset["staged"] == "", "git_reset unstages directly"
    assert harness.git_state(repo)["count"] == "2", "git_commit commits directly"
