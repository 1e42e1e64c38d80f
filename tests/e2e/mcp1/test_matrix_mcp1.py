"""Interop matrix, Python mcp 1.x client row (cells: tests/e2e/matrix.py).

Per cell the same scripted session runs direct and through Portcullis (entry `connect` or the HTTP
entry) and every observation must match after masking: initialize, every tools/list page, the server's
calls (text, structured, image, audio, links, embedded resources, isError, bad arguments), sampling,
elicitation and roots through server-everything's trigger tools, progress, resources (list, templates,
read, subscribe), prompts, completion, logging, ping, and a task the server creates (2025-11-25). The direct baseline of a server/transport is
run once and shared by both entries.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from v1client import Callbacks, open_session, run

import matrix

pytestmark = [pytest.mark.gateway,
              pytest.mark.filterwarnings("ignore:The experimental tasks API is deprecated:DeprecationWarning")]

IMPLEMENTED = {"mcp1"}
_baselines: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def world(e2e_tmp, everything_http, everything_sse):
    w = matrix.start_world(e2e_tmp, everything_http, everything_sse)
    yield w
    w.stop()


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def attempt(coro) -> Any:
    """The result, or the JSON-RPC error the server answered with (also an observation)."""
    try:
        return dump(await coro)
    except McpError as e:
        return {"error": {"code": e.error.code, "message": e.error.message}}


async def all_pages(fetch, field: str) -> list[Any]:
    items, cursor = [], None
    for _ in range(100):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            page = await fetch(cursor=cursor) if cursor else await fetch()
        items += dump(page)[field]
        cursor = page.nextCursor
        if not cursor:
            return items
    raise AssertionError(f"{field}: more than 100 pages")


async def script(session, init: types.InitializeResult, cell: matrix.Cell, world: matrix.World,
                 callbacks: Callbacks) -> dict[str, Any]:
    caps = init.capabilities
    obs: dict[str, Any] = {"initialize": dump(init)}
    tools = await all_pages(session.list_tools, "tools")
    obs["tools/list"] = tools
    names = {t["name"] for t in tools}
    for i, (name, args) in enumerate(matrix.CALLS.get(cell.server, [])):
        if name in names:
            obs[f"call {i} {name}"] = await attempt(session.call_tool(name, world.arguments(args)))
    if cell.server == "everything":
        progress: list[Any] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total))

        obs["progress call"] = await attempt(session.call_tool(
            "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress))
        obs["progress"] = progress
        obs["sampling"] = await attempt(session.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}))
        obs["elicitation"] = await attempt(session.call_tool("trigger-elicitation-request", {}))
        obs["roots"] = await attempt(session.call_tool("get-roots-list", {}))
        if "simulate-research-query" in names:
            obs["task"] = await upstream_task(session)
        obs["client saw"] = {"sampling": len(callbacks.sampling), "elicitation": len(callbacks.elicitation),
                             "roots": callbacks.roots > 0}
    if caps.resources:
        resources = await all_pages(session.list_resources, "resources")
        obs["resources/list"] = resources
        obs["resources/templates/list"] = await all_pages(session.list_resource_templates, "resourceTemplates")
        if resources:
            first = resources[0]["uri"]
            obs["resources/read"] = await attempt(session.read_resource(first))
            if caps.resources.subscribe:
                obs["resources/subscribe"] = await attempt(session.subscribe_resource(first))
                obs["resources/unsubscribe"] = await attempt(session.unsubscribe_resource(first))
    if caps.prompts:
        obs["prompts/list"] = await all_pages(session.list_prompts, "prompts")
        if cell.server in matrix.PROMPTS:
            name, args = matrix.PROMPTS[cell.server]
            obs["prompts/get"] = await attempt(session.get_prompt(name, args))
    if caps.completions and cell.server in matrix.COMPLETIONS:
        prompt, argument, value = matrix.COMPLETIONS[cell.server]
        obs["completion/complete"] = await attempt(session.complete(
            types.PromptReference(type="ref/prompt", name=prompt), {"name": argument, "value": value}))
    if caps.logging:
        obs["logging/setLevel"] = await attempt(session.set_logging_level("error"))
    obs["ping"] = await attempt(session.send_ping())
    return obs


async def upstream_task(session) -> dict[str, Any]:
    """A 2025-11-25 task the server creates (its task-only tool), polled to the end and read."""
    created = await session.experimental.call_tool_as_task("simulate-research-query", {"topic": "matrix"}, ttl=60_000)
    last = None
    async for status in session.experimental.poll_task(created.task.taskId):
        last = status.status
    result = await attempt(session.experimental.get_task_result(created.task.taskId, types.CallToolResult))
    assert last == "completed" and "matrix" in str(result), (last, result)
    return {"created": created.task.status, "final": last, "result": result}


async def observe(route: str, cell: matrix.Cell, world: matrix.World) -> dict[str, Any]:
    callbacks = Callbacks()
    gateway = None if route == "direct" else world.gateway
    async with open_session(route, cell.gateway_server, world.spec(cell), gateway, callbacks=callbacks) as (s, init):
        return await script(s, init, cell, world, callbacks)


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "mcp1"))
def test_cell(world, cell: matrix.Cell):
    key = cell.gateway_server
    if key not in _baselines:
        _baselines[key] = run(lambda: observe("direct", cell, world), timeout=90)
    route = "stdio" if cell.entry == "connect" else "http"
    via = run(lambda: observe(route, cell, world), timeout=90)
    matrix.assert_same(cell, _baselines[key], via)
