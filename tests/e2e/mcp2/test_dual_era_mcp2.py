"""The dual-era Python client (mcp 2.3.0, mode "auto") through Portcullis.

Against a legacy server (server-everything) the client's `server/discover` probe must fail and it falls
back to `initialize`; against a modern server (peers/modern_server.py) the probe must succeed end to end
so the client speaks 2026-07-28 through the gateway. Each gateway test compares with a direct connection.
"""

from __future__ import annotations

import uuid

import pytest
import harness
from v2client import (
    CLIENT_INFO,
    ELICIT_NAME,
    MODERN,
    Elicitations,
    assert_denial,
    first_text,
    open_client,
    result_view,
    run,
)

ROUTES = ["http", "stdio"]


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


# ---- direct baselines (no gateway) -------------------------------------------------------------


def test_direct_legacy_server_falls_back_to_initialize(world):
    m = marker()

    async def body():
        async with open_client("direct", "everything", world.spec("everything")) as c:
            return c.protocol_version, await c.call_tool("echo", {"message": m})

    version, echo = run(body)
    assert version != MODERN and version.startswith("20"), f"server-everything is legacy: {version}"
    assert first_text(echo) == f"Echo: {m}"


def test_direct_modern_server(world):
    m = marker()
    asked = Elicitations()

    async def body():
        async with open_client("direct", "modern", world.spec("modern"), elicitation_callback=asked) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            echo = await c.call_tool("echo", {"message": m})
            greet = await c.call_tool("greet", {"marker": m})
            deleted = await c.call_tool("delete_everything", {})
            return c.protocol_version, tools, echo, greet, deleted

    version, tools, echo, greet, deleted = run(body)
    assert version == MODERN, f"modern_server speaks {MODERN} directly: {version}"
    assert tools == {"echo", "greet", "delete_everything", "internal_debug"}
    assert first_text(echo) == f"Echo: {m}"
    assert first_text(greet) == f"Hello, {ELICIT_NAME} ({m})" and len(asked.asked) == 1
    assert deleted.is_error is not True and "delete_everything" in world.modern_log.read_text(), \
        "baseline: made directly, delete_everything runs (so the gateway test's check can fail)"


# ---- through the gateway --------------------------------------------------------------------------


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_legacy_server_through_gateway(world, gateway, route):
    m = marker()
    spec = world.spec("everything")

    async def body():
        async with open_client("direct", "everything", spec) as c:
            direct = (c.protocol_version, await c.call_tool("echo", {"message": m}))
        async with open_client(route, "everything", spec, gateway) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            via = (c.protocol_version, await c.call_tool("echo", {"message": m}),
                   await c.call_tool("gzip-file-as-resource", {"name": f"{m}.gz", "data": "x"}))
        return direct, tools, via

    (d_version, d_echo), tools, (version, echo, denied) = run(body)
    assert version == d_version, f"the client must fall back to initialize as it does directly: {version}"
    assert result_view(echo) == result_view(d_echo)
    assert "echo" in tools and "get-env" not in tools, "hidden tools are filtered for 2.x clients too"
    assert_denial(denied, "tools.gzip-file-as-resource", "no downloads from agents")

    (row,) = gateway.audit_rows_for("everything", "echo", m, settled=True)
    assert (row["decision"], row["rule"], row["outcome"]) == ("allowed", "tools.echo", "ok"), row.raw
    assert row["client_name"] == CLIENT_INFO.name


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_server_through_gateway_matches_direct(world, gateway, route):
    m = marker()
    spec = world.spec("modern")

    async def body():
        async with open_client("direct", "modern", spec) as c:
            direct = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}))
        async with open_client(route, "modern", spec, gateway) as c:
            via = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}))
        return direct, via

    (d_version, d_tools, d_echo), (version, tools, echo) = run(body)
    assert d_version == MODERN
    assert version == MODERN, f"server/discover must pass through so the client speaks {MODERN}: {version}"
    dump = lambda ts: {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in ts}  # noqa: E731
    assert "internal_debug" in dump(d_tools) and "internal_debug" not in dump(tools), \
        "a hidden tool (glob internal_*) must be filtered from a modern tools/list"
    expected = {k: v for k, v in dump(d_tools).items() if k != "internal_debug"}
    assert dump(tools) == expected, "every other modern tool definition must pass through untouched"
    assert result_view(echo) == result_view(d_echo), "modern result (content, structuredContent, resultType)"
    assert echo.structured_content == {"result": f"Echo: {m}"}

    (row,) = gateway.audit_rows_for("modern", "echo", m, settled=True)
    assert (row["decision"], row["rule"], row["outcome"]) == ("allowed", "tools.echo", "ok"), row.raw


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_denied_call_is_error_and_never_runs(world, gateway, route):
    m = marker()
    before = world.modern_log.read_text() if world.modern_log.exists() else ""

    async def body():
        async with open_client(route, "modern", world.spec("modern"), gateway) as c:
            denied = await c.call_tool("delete_everything", {"marker": m})
            after = await c.call_tool("echo", {"message": m})
            return c.protocol_version, denied, after

    version, denied, after = run(body)
    assert version == MODERN
    assert_denial(denied, "tools.delete_everything", "nothing gets deleted by agents")
    assert first_text(after) == f"Echo: {m}"
    log = world.modern_log.read_text()[len(before):] if world.modern_log.exists() else ""
    assert "delete_everything" not in log, "a denied call must never reach the modern server"

    (row,) = gateway.audit_rows_for("modern", "delete_everything", m)
    assert (row["decision"], row["rule"], row["reason"]) == (
        "denied", "tools.delete_everything", "nothing gets deleted by agents"), row.raw
    assert row["outcome"] is None


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_mrtr_elicitation_round_trip(world, gateway, route):
    """greet answers the first tools/call with input_required + requestState; the client retries under a
    new id with inputResponses. The gateway must pass both rounds through untouched."""
    m = marker()
    asked_direct, asked = Elicitations(), Elicitations()
    spec = world.spec("modern")

    async def body():
        async with open_client("direct", "modern", spec, elicitation_callback=asked_direct) as c:
            direct = await c.call_tool("greet", {"marker": m})
        async with open_client(route, "modern", spec, gateway, elicitation_callback=asked) as c:
            return direct, c.protocol_version, await c.call_tool("greet", {"marker": m})

    direct, version, via = run(body)
    assert version == MODERN
    assert len(asked.asked) == 1, "the input request must reach the client once"
    assert m in asked.asked[0].message
    assert result_view(via) == result_view(direct)
    assert first_text(via) == f"Hello, {ELICIT_NAME} ({m})"

    rows = gateway.audit_rows_for("modern", "greet", m, settled=True)
    assert all(r["decision"] == "allowed" for r in rows), [r.raw for r in rows]
    assert rows[-1]["outcome"] == "ok", rows[-1].raw


@pytest.mark.gateway
def test_modern_hidden_tool_is_refused(world, gateway):
    m = marker()

    async def body():
        async with open_client("http", "modern", world.spec("modern"), gateway) as c:
            return await c.call_tool("internal_debug", {"marker": m})

    assert_denial(run(body), "hidden")
    (row,) = gateway.audit_rows_for("modern", "internal_debug", m)
    assert row["decision"] == "hidden" and row["outcome"] is None, row.raw


@pytest.mark.gateway
def test_modern_header_body_mismatch_is_refused(world, gateway):
    """Mcp-Name says echo, the body calls delete_everything: refused (400 / -32020), never forwarded."""
    m = marker()
    before = world.modern_log.read_text() if world.modern_log.exists() else ""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    headers = dict(gateway.auth_headers(), **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                                              "Mcp-Name": "echo"})
    body = {"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": "delete_everything", "arguments": {"marker": m}, "_meta": meta}}
    reply = harness.http_post(gateway.mcp_url("modern"), body, headers=headers)
    assert reply.status == 400, f"a header/body mismatch must be refused with 400: {reply.status} {reply.text()}"
    (msg,) = harness.sse_json_messages(reply.body)
    assert msg["error"]["code"] == -32020, msg
    log = world.modern_log.read_text()[len(before):] if world.modern_log.exists() else ""
    assert "delete_everything" not in log, "the mismatched call must never reach the server"
