"""Interop matrix, the dual-era and Node client rows (cells: tests/e2e/matrix.py): Python mcp 2.3 in
legacy mode and pinned to 2026-07-28, `@modelcontextprotocol/client` 2.4 (tests/e2e/ts/client.mjs) in
legacy and auto mode, the TS SDK 1.x (tests/e2e/ts/client1.mjs), the inspector CLI
(tests/e2e/matrix_inspector.py) and rmcp 3.x, the Rust SDK, in auto mode (tests/e2e/rmcp_client.py).

Per cell the same scripted session runs direct and through Portcullis (entry `connect` or the HTTP
entry) and every observation must match after masking. The Python script covers initialize/discover,
every tools/list page, the server's calls (an MRTR elicitation round trip for the mrtr server),
2026 subscriptions/listen events from the mrtr server, resources (list, templates, read), prompts,
completion, logging and ping; the TS 2.x plan covers the negotiated era, tools/list and the calls; the
TS 1.x plan adds every page, resources, prompts and ping; the rmcp session covers the negotiated
era and server, every tools/list page and the calls. The direct baseline of a cell's server/transport and client
is run once and shared by both entries.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import pytest
from mcp import types
from v2client import ELICIT_NAME, Elicitations, open_client, run

import harness
import matrix
import matrix_inspector
import rmcp_client

pytestmark = pytest.mark.gateway

IMPLEMENTED = {"mcp2-legacy", "mcp2-2026", "ts2-legacy", "ts2-auto", "ts1", "inspector", "rmcp"}
MODES = {"mcp2-legacy": "legacy", "mcp2-2026": "2026-07-28"}
_baselines: dict[tuple[str, str], dict[str, Any]] = {}


@pytest.fixture(scope="module")
def world(e2e_tmp, everything_http, everything_sse):
    w = matrix.start_world(e2e_tmp, everything_http, everything_sse)
    yield w
    w.stop()


def dump(value: Any) -> Any:
    return None if value is None else value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def attempt(coro) -> Any:
    """The result, or the error the client raised for the server's answer (also an observation)."""
    try:
        return dump(await coro)
    except Exception as e:  # noqa: BLE001 - any SDK error is an observation to compare
        return {"raised": type(e).__name__, "message": str(e)}


async def all_pages(fetch, field: str) -> list[Any]:
    items, cursor = [], None
    for _ in range(100):
        page = await fetch(cursor=cursor)
        items += dump(page)[field]
        cursor = page.next_cursor
        if not cursor:
            return items
    raise AssertionError(f"{field}: more than 100 pages")


async def script(client, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    caps = client.server_capabilities
    obs: dict[str, Any] = {
        "era": {"protocolVersion": client.protocol_version, "serverInfo": dump(client.server_info),
                "capabilities": dump(caps), "instructions": client.instructions},
    }
    tools = await all_pages(client.list_tools, "tools")
    obs["tools/list"] = tools
    names = {t["name"] for t in tools}
    calls = matrix.CALLS.get(cell.server, []) + ([("greet", {"marker": "matrix"})] if cell.server == "mrtr" else [])
    for i, (name, args) in enumerate(calls):
        if name in names:
            obs[f"call {i} {name}"] = await attempt(client.call_tool(name, world.arguments(args)))
    if "announce" in names and client.protocol_version == "2026-07-28":
        obs["subscriptions/listen"] = await listen(client)
    if caps.resources:
        resources = await all_pages(client.list_resources, "resources")
        obs["resources/list"] = resources
        obs["resources/templates/list"] = await all_pages(client.list_resource_templates, "resourceTemplates")
        if resources:
            obs["resources/read"] = await attempt(client.read_resource(resources[0]["uri"]))
    if caps.prompts:
        obs["prompts/list"] = await all_pages(client.list_prompts, "prompts")
        if cell.server in matrix.PROMPTS:
            name, args = matrix.PROMPTS[cell.server]
            obs["prompts/get"] = await attempt(client.get_prompt(name, args))
    if caps.completions and cell.server in matrix.COMPLETIONS:
        prompt, argument, value = matrix.COMPLETIONS[cell.server]
        obs["completion/complete"] = await attempt(client.complete(
            types.PromptReference(type="ref/prompt", name=prompt), {"name": argument, "value": value}))
    if caps.logging:
        obs["logging/setLevel"] = await attempt(client.set_logging_level("error"))
    obs["ping"] = await attempt(client.send_ping())
    return obs


async def listen(client) -> dict[str, Any]:
    """2026 `subscriptions/listen`: the events the MRTR peer's `announce` publishes reach the stream."""
    async with client.listen(tools_list_changed=True, resource_subscriptions=["note://matrix"]) as sub:
        answer = await attempt(client.call_tool("announce", {}))
        events = []
        with anyio.fail_after(10):
            async for event in sub:
                events.append(repr(event))
                if len(events) == 2:
                    break
    return {"honored": dump(sub.honored), "announce": answer, "events": events}


async def observe_py(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    gateway = None if route == "direct" else world.gateway
    async with open_client(route, cell.gateway_server, world.spec(cell), gateway, mode=MODES[cell.client],
                           elicitation_callback=Elicitations()) as client:
        return await script(client, cell, world)


def node_plan(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    """Where a TS client connects: the server itself (direct) or one of Portcullis's entries."""
    spec = world.spec(cell)
    if route == "direct":
        if "command" in spec:
            return {"stdio": spec}
        return {"url": spec["url"], "sse": spec.get("type") == "sse"}
    if route == "http":
        return {"url": world.gateway.mcp_url(cell.gateway_server), "token": world.gateway.token}
    argv = world.gateway.connect_argv(cell.gateway_server)
    return {"stdio": {"command": argv[0], "args": argv[1:]}}


def run_node(script: str, plan: dict[str, Any]) -> dict[str, Any]:
    r = subprocess.run([harness.node_bin(), str(harness.TS_DIR / script), json.dumps(plan)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"{script} exited {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(r.stdout)


def observe_ts(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    plan: dict[str, Any] = {"mode": "legacy" if cell.client == "ts2-legacy" else "auto",
                            "calls": [{"name": n, "arguments": world.arguments(a)}
                                      for n, a in matrix.CALLS.get(cell.server, [])]}
    plan.update(node_plan(route, cell, world))
    out = run_node("client.mjs", plan)
    tools = {t["name"] for t in out["tools"]}
    # Only the calls the server lists were meant; the rest answer "unknown tool" either way.
    out["results"] = [res for call, res in zip(plan["calls"], out["results"]) if call["name"] in tools]
    return out


def observe_ts1(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    """TS SDK 1.x (ts/client1.mjs): discover, every tools/list page, the calls, resources, prompts, ping."""
    plan = {"calls": [{"name": n, "arguments": world.arguments(a)} for n, a in matrix.CALLS.get(cell.server, [])]}
    plan.update(node_plan(route, cell, world))
    return run_node("client1.mjs", plan)


def observe_rmcp(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    """rmcp 3.x (auto: `server/discover`, falling back to `initialize`) over stdio: the server's
    command directly, or `portcullis connect` (the only routes the matrix gives it)."""
    spec = world.spec(cell)
    command = rmcp_client.argv_of(spec) if route == "direct" else world.gateway.connect_argv(cell.gateway_server)
    with rmcp_client.RmcpClient(command, env=spec.get("env") if route == "direct" else None) as client:
        tools = client.tools()
        listed = {t["name"] for t in tools}
        calls = [client.call(n, world.arguments(a)) for n, a in matrix.CALLS.get(cell.server, []) if n in listed]
        return {"ready": client.ready, "tools": tools, "calls": calls}


def observe(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    if cell.client == "rmcp":
        return observe_rmcp(route, cell, world)
    if cell.client.startswith("ts2"):
        return observe_ts(route, cell, world)
    if cell.client == "ts1":
        return observe_ts1(route, cell, world)
    if cell.client == "inspector":
        return matrix_inspector.observe(route, cell, world)
    return run(lambda: observe_py(route, cell, world), timeout=90)


def check(cell: matrix.Cell, world: matrix.World) -> None:
    key = (cell.client, cell.gateway_server)
    if key not in _baselines:
        _baselines[key] = observe("direct", cell, world)
    via = observe("stdio" if cell.entry == "connect" else "http", cell, world)
    matrix.assert_same(cell, _baselines[key], via)
    if cell.server == "mrtr" and cell.client.startswith("mcp2"):
        # The MRTR round trip (2026: input_required, retried under a new id) reached the end.
        assert f"Hello, {ELICIT_NAME} (matrix)" in json.dumps(via), via
    if cell.server == "mrtr" and cell.client == "mcp2-2026" and cell.transport != "stdio":
        assert len(via["subscriptions/listen"]["events"]) == 2, via["subscriptions/listen"]


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "mcp2"))
def test_python_cell(world, cell: matrix.Cell):
    check(cell, world)


def test_listen_via_stdio_upstream(world):
    """Regression: through a stdio upstream (ids remapped on the shared pipe), a 2026 listen stream
    never saw its acknowledgement — its frames name the listen request by the gateway's wire id
    and went to the newest request instead. Direct and through `connect`, both events arrive."""
    cell = matrix.Cell("mcp2-2026", "mrtr", "connect", "stdio")

    async def events(route: str) -> Any:
        outcome: Any = "timed out"
        try:
            async with open_client(route, cell.gateway_server, world.spec(cell),
                                   None if route == "direct" else world.gateway, mode=MODES[cell.client]) as client:
                with anyio.fail_after(5):
                    outcome = len((await listen(client))["events"])
        except* TimeoutError:
            pass
        return outcome

    got = {route: run(lambda: events(route), timeout=30) for route in ("direct", "stdio")}
    assert got == {"direct": 2, "stdio": 2}, got


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "ts2"))
def test_ts_cell(world, cell: matrix.Cell):
    check(cell, world)


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "ts1"))
def test_ts1_cell(world, cell: matrix.Cell):
    check(cell, world)


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "inspector"))
def test_inspector_cell(world, cell: matrix.Cell):
    check(cell, world)


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "rmcp"))
def test_rmcp_cell(world, cell: matrix.Cell):
    check(cell, world)
