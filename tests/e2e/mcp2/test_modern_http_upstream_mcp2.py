"""A dual-era MCPServer (mcp 2.3.0) over Streamable HTTP as a Portcullis `http` upstream.

peers/modern_http_server.py serves modern_server.py's tools on http://127.0.0.1:PORT/mcp. The mcp 2.3.0
`Client` (mode "auto": `server/discover`, so 2026-07-28 end to end; mode "legacy": `initialize`) goes
through the gateway's HTTP endpoint and through `portcullis connect`, and every result is compared with
the same client connected to the server directly.

The upstream's SSE framing is deliberately awkward (see the peer's docstring): legacy-era POST streams
open with a priming event (`id:` + empty `data:` + `retry:`, CRLF line ends) and slow modern-era
responses carry `: ping` comment lines before the result. The direct baselines prove the server really
sends those, so the gateway tests show the gateway parses them.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from v2client import ELICIT_NAME, MODERN, Elicitations, assert_denial, first_text, open_client, result_view, run

import harness

ROUTES = ["http", "stdio"]
SERVER = "modern_http"
QUIET = "modern_http_quiet"  # the same server without early keepalives (see quiet_spec)
LEGACY_WITH_PRIMING = "2025-11-25"  # the SDK sends priming events to clients at this version or later
POLICY = {
    "version": "1",
    "default": "allow",
    "hide": ["internal_*"],
    "tools": {
        "echo": {},
        "greet": {},
        "delete_everything": {"action": "deny", "reason": "nothing gets deleted by agents"},
    },
}


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


def tool_dump(tools) -> dict[str, dict]:
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools}


def modern_meta() -> dict:
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def server_log(e2e_tmp: Path) -> Path:
    return e2e_tmp / f"modern-http-{uuid.uuid4().hex[:8]}.log"


@pytest.fixture(scope="module")
def spec(server_log: Path):
    with harness.python_http_peer("modern_http_server", "modern_http_server.py", {"MODERN_SERVER_LOG": str(server_log), "MODERN_HTTP_PING_SECS": "0.2"}) as spec:
        yield spec


@pytest.fixture(scope="module")
def quiet_spec(server_log: Path):
    """The same server with the SDK's own keepalive (15 s): a slow 2026 answer sends no headers before
    its result, as most servers do."""
    with harness.python_http_peer("modern_http_server_quiet", "modern_http_server.py", {"MODERN_SERVER_LOG": str(server_log), "MODERN_HTTP_PING_SECS": "15"}) as spec:
        yield spec


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path, spec, quiet_spec):
    root = e2e_tmp / f"modern-http-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root, {SERVER: {"type": "http", **spec}, QUIET: {"type": "http", **quiet_spec}},
                                  {SERVER: POLICY, QUIET: POLICY})
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (modern http upstream) exited with {gateway.stop()}")


def log_text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


# ---- direct baselines ---------------------------------------------------------------------------------


def test_direct_modern_http_server(spec, server_log):
    m = marker()
    asked = Elicitations()

    async def body():
        async with open_client("direct", SERVER, spec, elicitation_callback=asked) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            return (c.protocol_version, tools, await c.call_tool("echo", {"message": m}),
                    await c.call_tool("greet", {"marker": m}), await c.call_tool("delete_everything", {}))

    version, tools, echo, greet, deleted = run(body)
    assert version == MODERN, f"the server speaks {MODERN} over HTTP: {version}"
    assert tools == {"echo", "greet", "delete_everything", "internal_debug", "slow_echo"}
    assert first_text(echo) == f"Echo: {m}"
    assert first_text(greet) == f"Hello, {ELICIT_NAME} ({m})" and len(asked.asked) == 1
    assert deleted.is_error is not True and "delete_everything" in log_text(server_log), \
        "baseline: made directly, delete_everything runs (so the gateway test's check can fail)"


def test_direct_upstream_sse_has_priming_events_and_comments(spec):
    """What the gateway has to parse: a legacy POST stream opening with a priming event, and a slow modern
    response with `: ping` comments before its result."""
    url = spec["url"]
    init = dict(harness.INITIALIZE_BODY, params=dict(harness.INITIALIZE_BODY["params"],
                                                     protocolVersion=LEGACY_WITH_PRIMING))
    reply = harness.http_post(url, init)
    assert reply.status == 200, reply.text()
    sid = {k.lower(): v for k, v in reply.headers.items()}["mcp-session-id"]
    headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY_WITH_PRIMING}
    assert harness.http_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers).status == 202
    legacy = harness.http_post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": "echo", "arguments": {"message": "p"}}}, headers)
    assert legacy.text().startswith("id: ") and "\r\ndata: \r\nretry: 1000\r\n\r\n" in legacy.text(), legacy.text()
    assert harness.sse_json_messages(legacy.body)[-1]["result"]["content"][0]["text"] == "Echo: p"

    modern = harness.http_post(
        url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "slow_echo", "arguments": {"message": "c", "seconds": 0.6}, "_meta": modern_meta()}},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "slow_echo"})
    assert modern.text().startswith(": ping\r\n\r\n"), modern.text()
    (msg,) = harness.sse_json_messages(modern.body)
    assert msg["result"]["content"][0]["text"] == "Echo: c" and msg["result"]["resultType"] == "complete", msg


# ---- through the gateway ------------------------------------------------------------------------------


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_http_upstream_matches_direct(spec, gw, route):
    m = marker()

    async def body():
        async with open_client("direct", SERVER, spec) as c:
            direct = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}))
        async with open_client(route, SERVER, spec, gw) as c:
            via = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}))
        return direct, via

    (d_version, d_tools, d_echo), (version, tools, echo) = run(body)
    assert d_version == MODERN
    assert version == MODERN, f"server/discover must reach the HTTP upstream so the client speaks {MODERN}"
    expected = {k: v for k, v in tool_dump(d_tools).items() if k != "internal_debug"}
    assert "internal_debug" in tool_dump(d_tools)
    assert tool_dump(tools) == expected, "tools/list minus the hidden tool, every definition untouched"
    assert result_view(echo) == result_view(d_echo)
    assert echo.structured_content == {"result": f"Echo: {m}"}

    (row,) = gw.audit_rows_for(SERVER, "echo", m, settled=True)
    assert (row["decision"], row["rule"], row["outcome"]) == ("allowed", "tools.echo", "ok"), row.raw


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_http_denied_call_never_reaches_server(spec, gw, server_log, route):
    m = marker()
    before = log_text(server_log)

    async def body():
        async with open_client(route, SERVER, spec, gw) as c:
            return (c.protocol_version, await c.call_tool("delete_everything", {"marker": m}),
                    await c.call_tool("internal_debug", {"marker": m}), await c.call_tool("echo", {"message": m}))

    version, denied, hidden, after = run(body)
    assert version == MODERN
    assert_denial(denied, "tools.delete_everything", "nothing gets deleted by agents")
    assert_denial(hidden, "hidden")
    assert first_text(after) == f"Echo: {m}"
    new = log_text(server_log)[len(before):]
    assert "echo" in new, "the allowed call did reach the server (so this log is the right one)"
    assert "delete_everything" not in new and "internal_debug" not in new, f"refused calls ran: {new!r}"

    (row,) = gw.audit_rows_for(SERVER, "delete_everything", m)
    assert (row["decision"], row["outcome"]) == ("denied", None), row.raw


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_http_mrtr_elicitation_round_trip(spec, gw, route):
    """greet answers input_required + requestState; the client retries under a new id with inputResponses.
    Both rounds are separate POSTs to the upstream; the gateway passes them through untouched."""
    m = marker()
    asked_direct, asked = Elicitations(), Elicitations()

    async def body():
        async with open_client("direct", SERVER, spec, elicitation_callback=asked_direct) as c:
            direct = await c.call_tool("greet", {"marker": m})
        async with open_client(route, SERVER, spec, gw, elicitation_callback=asked) as c:
            return direct, c.protocol_version, await c.call_tool("greet", {"marker": m})

    direct, version, via = run(body)
    assert version == MODERN
    assert len(asked.asked) == 1 and m in asked.asked[0].message, asked.asked
    assert result_view(via) == result_view(direct)
    assert first_text(via) == f"Hello, {ELICIT_NAME} ({m})"

    rows = gw.audit_rows_for(SERVER, "greet", m, settled=True)
    assert all(r["decision"] == "allowed" for r in rows), [r.raw for r in rows]
    assert rows[-1]["outcome"] == "ok", rows[-1].raw


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_modern_http_sse_comments_pass(spec, gw, route):
    """slow_echo's upstream response is an SSE stream with `: ping` comments before the result."""
    m = marker()

    async def body():
        async with open_client("direct", SERVER, spec) as c:
            direct = await c.call_tool("slow_echo", {"message": m, "seconds": 0.6})
        async with open_client(route, SERVER, spec, gw) as c:
            return direct, c.protocol_version, await c.call_tool("slow_echo", {"message": m, "seconds": 0.6})

    direct, version, via = run(body)
    assert version == MODERN
    assert first_text(via) == f"Echo: {m}"
    assert result_view(via) == result_view(direct)
    (row,) = gw.audit_rows_for(SERVER, "slow_echo", m, settled=True)
    assert (row["decision"], row["outcome"]) == ("allowed", "ok"), row.raw


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
def test_legacy_client_through_priming_events(spec, gw, server_log, route):
    """mode="legacy": initialize handshake with the HTTP upstream, whose every POST stream opens with a
    priming event; calls, the server→client elicitation request and a denial all work through the gateway."""
    m = marker()
    asked_direct, asked = Elicitations(), Elicitations()
    before = log_text(server_log)

    async def body():
        async with open_client("direct", SERVER, spec, mode="legacy", elicitation_callback=asked_direct) as c:
            direct = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}),
                      await c.call_tool("greet", {"marker": m}))
        async with open_client(route, SERVER, spec, gw, mode="legacy", elicitation_callback=asked) as c:
            via = (c.protocol_version, (await c.list_tools()).tools, await c.call_tool("echo", {"message": m}),
                   await c.call_tool("greet", {"marker": m}),
                   await c.call_tool("delete_everything", {"marker": m}))
        return direct, via

    (d_version, d_tools, d_echo, d_greet), (version, tools, echo, greet, denied) = run(body)
    assert d_version >= LEGACY_WITH_PRIMING and d_version != MODERN, d_version
    assert version == d_version, f"the handshake must pass through: {version} vs {d_version}"
    assert tool_dump(tools) == {k: v for k, v in tool_dump(d_tools).items() if k != "internal_debug"}
    assert result_view(echo) == result_view(d_echo)
    assert first_text(d_greet) == first_text(greet) == f"Hello, {ELICIT_NAME} ({m})"
    assert len(asked.asked) == 1, "elicitation/create must reach the client through the gateway once"
    assert_denial(denied, "tools.delete_everything")
    assert "delete_everything" not in log_text(server_log)[len(before):]

    (row,) = gw.audit_rows_for(SERVER, "echo", m, settled=True)
    assert (row["decision"], row["outcome"]) == ("allowed", "ok"), row.raw


async def wait_logged(path: Path, needle: str, timeout: float = 10.0) -> None:
    import anyio
    with anyio.fail_after(timeout):
        while needle not in log_text(path):
            await anyio.sleep(0.05)


@pytest.mark.gateway
def test_connect_serves_modern_http_calls_concurrently_and_cancels_them(quiet_spec, gw, server_log):
    """`portcullis connect` in the 2026 era in front of the HTTP upstream: an echo sent while a 3 s call
    runs is answered at once (it used to wait for the slow call: the relay waits for each POST's headers,
    and the gateway gave them only after the upstream's), and cancelling a call (the client's cancel scope:
    notifications/cancelled through the relay) stops it on the upstream."""
    import anyio
    m = marker()

    async def body():
        async with open_client("stdio", QUIET, quiet_spec, gw) as c:
            assert c.protocol_version == MODERN
            slow_done = anyio.Event()

            async def slow():
                await c.call_tool("slow_echo", {"message": f"{m}-slow", "seconds": 3})
                slow_done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await wait_logged(server_log, f"slow_echo started {m}-slow")
                echo = await c.call_tool("echo", {"message": m})
                overlapped = not slow_done.is_set()
            async with anyio.create_task_group() as tg:
                async def doomed():
                    await c.call_tool("slow_echo", {"message": f"{m}-doomed", "seconds": 30})
                tg.start_soon(doomed)
                await wait_logged(server_log, f"slow_echo started {m}-doomed")
                tg.cancel_scope.cancel()
            await wait_logged(server_log, f"slow_echo cancelled {m}-doomed")
            after = await c.call_tool("echo", {"message": f"{m}-after"})
            return echo, overlapped, after

    echo, overlapped, after = run(body)
    assert first_text(echo) == f"Echo: {m}"
    assert overlapped, "the echo must be answered while the 3 s call still runs"
    assert first_text(after) == f"Echo: {m}-after", "the connection still works after the cancel"
