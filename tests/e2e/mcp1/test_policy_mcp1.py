"""Policy decisions seen by a Python mcp 1.x client, through both gateway entries, for every upstream
transport of server-everything, each compared with a direct connection in the same test."""

from __future__ import annotations

import uuid

import pytest
from v1client import CLIENT_INFO, assert_denial, first_text, open_session, result_view, run, tool_map

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
UPSTREAMS = ["everything", "everything_http", "everything_sse"]


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_allowed_call_matches_direct_and_is_audited(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, init):
            direct_init = init
            direct = await s.call_tool("echo", {"message": f"hello {m}"})
        async with open_session(route, upstream, spec, gateway) as (s, init):
            via_init = init
            via = await s.call_tool("echo", {"message": f"hello {m}"})
        return direct_init, direct, via_init, via

    direct_init, direct, via_init, via = run(body)
    assert result_view(via) == result_view(direct), "an allowed call must give the server's own result"
    assert first_text(via) == f"Echo: hello {m}"
    assert via_init.serverInfo == direct_init.serverInfo, "initialize must pass through untouched"
    assert via_init.protocolVersion == direct_init.protocolVersion
    assert via_init.capabilities == direct_init.capabilities

    (row,) = gateway.audit_rows_for(upstream, "echo", m, settled=True)
    assert row["decision"] == "allowed"
    assert row["decided_by"] == "policy"
    assert row["rule"] == "tools.echo"
    assert row["server"] == upstream and row["tool"] == "echo"
    assert row["outcome"] == "ok", f"forwarded call's outcome must be recorded: {row.raw}"
    assert row["upstream_ms"] is not None and row["upstream_ms"] >= 0
    assert row["client_name"] == CLIENT_INFO.name, "the audit row must name the client from initialize"
    assert row["client_version"] == CLIENT_INFO.version
    assert row["session"], "the audit row must carry the agent session"
    assert row.arguments() == {"message": f"hello {m}"}
    assert row["arguments_digest"], "arguments digest must be recorded"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_hidden_tool_is_absent_and_refused(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct_tools = tool_map(await s.list_tools())
        async with open_session(route, upstream, spec, gateway) as (s, _):
            via_tools = tool_map(await s.list_tools())
            refused = await s.call_tool("get-env", {"marker": m})
        return direct_tools, via_tools, refused

    direct_tools, via_tools, refused = run(body)
    assert "get-env" in direct_tools, "baseline: server-everything offers get-env"
    assert "get-env" not in via_tools, "a hidden tool must be filtered out of tools/list"
    expected = {k: v for k, v in direct_tools.items() if k != "get-env"}
    assert via_tools == expected, "every other tool definition must pass through untouched"
    assert_denial(refused, "hidden")
    assert "PATH" not in first_text(refused), "a hidden tool must not run"

    (row,) = gateway.audit_rows_for(upstream, "get-env", m)
    assert row["decision"] == "hidden"
    assert row["outcome"] is None, "a hidden call is never forwarded, so it has no outcome"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_denied_call_gives_reason(world, gateway, route, upstream):
    m = marker()
    spec = world.spec(upstream)
    args = {"name": f"{m}.gz", "data": "https://example.invalid/nothing.txt"}

    async def body():
        async with open_session(route, upstream, spec, gateway) as (s, _):
            denied = await s.call_tool("gzip-file-as-resource", args)
            after = await s.call_tool("echo", {"message": m})
        return denied, after

    denied, after = run(body)
    assert_denial(denied, "tools.gzip-file-as-resource", "no downloads from agents")
    assert first_text(after) == f"Echo: {m}", "the session stays usable after a denial"

    (row,) = gateway.audit_rows_for(upstream, "gzip-file-as-resource", m)
    assert row["decision"] == "denied"
    assert row["decided_by"] == "policy"
    assert row["rule"] == "tools.gzip-file-as-resource"
    assert row["reason"] == "no downloads from agents"
    assert row["outcome"] is None, "a denied call is never forwarded"


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_rate_limit_per_session(world, gateway, route, upstream):
    base = uuid.uuid4().int % 10_000_000 + 10_000_000  # a number unique to this test, found in audit args
    spec = world.spec(upstream)

    async def body():
        async with open_session(route, upstream, spec, gateway) as (s, _):
            first = [await s.call_tool("get-sum", {"a": base, "b": i}) for i in range(2)]
            over = await s.call_tool("get-sum", {"a": base, "b": 2})
        async with open_session(route, upstream, spec, gateway) as (s, _):
            fresh = await s.call_tool("get-sum", {"a": base, "b": 3})
        return first, over, fresh

    first, over, fresh = run(body)
    for i, r in enumerate(first):
        assert r.isError is not True, f"call {i + 1} of max 2 must pass: {result_view(r)}"
        assert first_text(r) == f"The sum of {base} and {i} is {base + i}."
    assert_denial(over, "rate limit", "retry in")
    assert fresh.isError is not True, f"a new session gets a fresh budget: {result_view(fresh)}"
    assert first_text(fresh) == f"The sum of {base} and 3 is {base + 3}."

    rows = gateway.audit_rows_for(upstream, "get-sum", str(base), count=4, settled=True)
    decisions = [r["decision"] for r in rows]
    assert decisions == ["allowed", "allowed", "rate_limited", "allowed"], decisions
    assert all(r["rule"] == "tools.get-sum" for r in rows), [r["rule"] for r in rows]
    assert rows[0]["session"] == rows[1]["session"] == rows[2]["session"] != rows[3]["session"]
    assert rows[2]["outcome"] is None


@pytest.mark.parametrize("route", ROUTES)
def test_require_approval_without_approver_is_refused(world, gateway, route):
    m = marker()

    async def body():
        async with open_session(route, "everything", world.spec("everything"), gateway) as (s, _):
            ruled = await s.call_tool("get-tiny-image", {"marker": m})
        async with open_session(route, "unpoliced", world.spec("unpoliced"), gateway) as (s, _):
            unpoliced = await s.call_tool("echo", {"message": m})
        return ruled, unpoliced

    ruled, unpoliced = run(body, timeout=60)
    assert_denial(ruled, "no approver")
    assert_denial(unpoliced, "no approver")
    assert not any(getattr(c, "type", "") == "image" for c in ruled.content), "the held call must not run"

    for server, tool in (("everything", "get-tiny-image"), ("unpoliced", "echo")):
        (row,) = gateway.audit_rows_for(server, tool, m)
        assert row["decision"] not in ("allowed", "approved"), row.raw
        assert row["decision"] in ("rejected", "timed_out", "failed", "denied", "cancelled"), row.raw
        assert row["outcome"] is None, f"a refused call is never forwarded: {row.raw}"
