"""Interop matrix, Python mcp 1.x client row (cells: tests/e2e/matrix.py).

Per cell the same scripted session runs direct and through Portcullis (entry `connect` or the HTTP
entry) and every observation must match after masking: initialize, every tools/list page, the server's
calls (text, structured, image, audio, links, embedded resources, isError, bad arguments), sampling,
elicitation and roots through server-everything's trigger tools, progress, resources (list, templates,
read, subscribe), prompts, completion, logging, ping, and a task the server creates (2025-11-25).
Notifications where the server offers them: resources/updated after subscribe (server-everything's
toggle-subscriber-updates), URL-mode elicitation (trigger-url-elicitation), and from the FastMCP peer log
messages after logging/setLevel, tools/resources list_changed, and a slow call cancelled by
notifications/cancelled (the server reports that it saw the cancel). The direct baseline of a
server/transport is run once and shared by both entries.
"""

from __future__ import annotations

import uuid
import warnings
from typing import Any

import anyio

import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from v1client import Callbacks, open_session, run

import harness
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


class Notes:
    """The server's notifications of one session, in arrival order (mcp 1.x message_handler)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and message.root.method != "notifications/progress":
            self.seen.append(dump(message.root))
            self.changed.set()
            self.changed = anyio.Event()

    def of(self, method: str) -> list[dict[str, Any]]:
        return [n for n in self.seen if n["method"] == method]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 5.0) -> list[dict[str, Any]]:
        """The notifications of `method`, waiting (bounded) for `count` of them: a notification the
        server sent during a call may reach the client after the call's answer (over another stream)."""
        with anyio.move_on_after(timeout):
            while len(self.of(method)) < count:
                await self.changed.wait()
        return self.of(method)


async def script(session, init: types.InitializeResult, cell: matrix.Cell, world: matrix.World,
                 callbacks: Callbacks, notes: Notes) -> dict[str, Any]:
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
        if "trigger-url-elicitation" in names:
            obs["url elicitation"] = await attempt(session.call_tool(
                "trigger-url-elicitation", {"url": "https://example.com/matrix", "elicitationId": "matrix-url"}))
        obs["client saw"] = {"sampling": len(callbacks.sampling), "elicitation": len(callbacks.elicitation),
                             "url elicitation": sum(1 for p in callbacks.elicitation if getattr(p, "mode", None) == "url"),
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
                if "toggle-subscriber-updates" in names:
                    obs["resources/updated after subscribe"] = await subscriber_updates(session, notes, first)
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
    if "chatty" in names:
        obs.update(await fastmcp_notifications(session, notes))
    if "slow" in names:
        obs["cancellation"] = await cancellation(session)
    obs["ping"] = await attempt(session.send_ping())
    return obs


async def subscriber_updates(session, notes: Notes, uri: str) -> list[str]:
    """server-everything's toggle-subscriber-updates sends one resources/updated per subscription at once."""
    await session.call_tool("toggle-subscriber-updates", {})
    updated = await notes.wait_for("notifications/resources/updated")
    await session.call_tool("toggle-subscriber-updates", {})
    return sorted({n["params"]["uri"] for n in updated})


ANNOUNCED = ("notifications/resources/list_changed", "notifications/resources/updated",
             "notifications/tools/list_changed")


async def fastmcp_notifications(session, notes: Notes) -> dict[str, Any]:
    """Log messages after logging/setLevel, and list_changed / resources/updated sent during a call."""
    obs = {"logging/setLevel debug": await attempt(session.set_logging_level("debug")),
           "call chatty": await attempt(session.call_tool("chatty", {"marker": "matrix"}))}
    obs["log messages"] = await notes.wait_for("notifications/message", count=3)
    obs["call announce"] = await attempt(session.call_tool("announce", {}))
    for method in ANNOUNCED:
        await notes.wait_for(method)
    obs["announced"] = sorted((n for n in notes.seen if n["method"] in ANNOUNCED), key=lambda n: n["method"])
    return obs


async def cancellation(session) -> dict[str, Any]:
    """A slow call cancelled with notifications/cancelled once it reported progress; then the server
    says whether the cancel reached it, and the session still answers."""
    marker = uuid.uuid4().hex
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: session.call_tool("slow", {"marker": marker}, progress_callback=on_progress))
        with anyio.fail_after(10):
            await started.wait()
        # mcp 1.x has no cancel API: the call in flight is its only open response stream.
        (request_id,) = session._response_streams
        await session.send_notification(types.ClientNotification(types.CancelledNotification(
            params=types.CancelledNotificationParams(requestId=request_id, reason="matrix"))))
        tg.cancel_scope.cancel()
    return {"server saw the cancel": await attempt(session.call_tool("was_cancelled", {"marker": marker}))}


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
    callbacks, notes = Callbacks(), Notes()
    gateway = None if route == "direct" else world.gateway
    async with open_session(route, cell.gateway_server, world.spec(cell), gateway, callbacks=callbacks,
                            message_handler=notes) as (s, init):
        return await script(s, init, cell, world, callbacks, notes)


@pytest.mark.parametrize("cell", matrix.params(IMPLEMENTED, "mcp1"))
def test_cell(world, cell: matrix.Cell):
    key = cell.gateway_server
    if key not in _baselines:
        _baselines[key] = run(lambda: observe("direct", cell, world), timeout=90)
    route = "stdio" if cell.entry == "connect" else "http"
    via = run(lambda: observe(route, cell, world), timeout=90)
    matrix.assert_same(cell, _baselines[key], via)
    assert_covered(cell, via)


def assert_covered(cell: matrix.Cell, obs: dict[str, Any]) -> None:
    """The notification observations are not empty on both sides: each saw what it was meant to."""
    if cell.server == "fastmcp":
        assert [n["params"]["data"] for n in obs["log messages"]] == ["debug matrix", "info matrix", "warning matrix"], obs
        assert [n["method"] for n in obs["announced"]] == list(ANNOUNCED), obs["announced"]
        assert obs["cancellation"]["server saw the cancel"]["structuredContent"] == {"result": True}, obs["cancellation"]
    if cell.server == "everything":
        assert obs["resources/updated after subscribe"], obs
        assert obs["client saw"]["url elicitation"] == 1, obs["client saw"]


def test_the_interop_page_shows_the_matrix():
    """tests/e2e/INTEROP.md's table is `matrix.table()`: every real cell, and every N/A
    combination with the reason it does not exist (N/A cells are not collected as tests)."""
    readme = (harness.REPO / "tests/e2e/INTEROP.md").read_text(encoding="utf-8")
    assert matrix.table() in readme, "tests/e2e/INTEROP.md is out of date: paste `python3 tests/e2e/matrix.py`"
