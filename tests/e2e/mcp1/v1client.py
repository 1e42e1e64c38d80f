"""Python mcp 1.x client helpers: one way to open a ClientSession for every route a test compares.

Routes:
  "direct"  straight to the upstream (stdio command, Streamable HTTP URL or SSE URL) — the baseline;
  "http"    through the gateway's Streamable HTTP entry `{url}/mcp/{server}` with the bearer token;
  "stdio"   through `portcullis connect SERVER --data-dir DATA`, launched as a stdio server.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.sse import sse_client
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.context import RequestContext

import harness

CLIENT_INFO = types.Implementation(name="portcullis-e2e-mcp1", version="1.0.0")

CONDITIONAL_TOOLS = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}
ROOT_URI = "file:///tmp/portcullis-e2e-root"
ROOT_NAME = "e2e root"
ELICIT_NAME = "Ada Lovelace"


def run(fn: Callable[[], Awaitable[Any]], timeout: float = 60.0) -> Any:
    """Run an async test body on asyncio with a hard deadline."""

    async def bounded() -> Any:
        with anyio.fail_after(timeout):
            return await fn()

    return anyio.run(bounded)


@dataclass
class Callbacks:
    """Client-side handlers for server→client requests; each records what it was asked."""

    sampling: list[types.CreateMessageRequestParams] = field(default_factory=list)
    elicitation: list[types.ElicitRequestParams] = field(default_factory=list)
    roots: int = 0

    async def on_sampling(self, context: RequestContext, params: types.CreateMessageRequestParams):
        self.sampling.append(params)
        prompt = params.messages[0].content.text if params.messages else ""
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled reply to: {prompt}"),
            model="e2e-model",
            stopReason="endTurn",
        )

    async def on_elicitation(self, context: RequestContext, params: types.ElicitRequestParams):
        self.elicitation.append(params)
        return types.ElicitResult(action="accept", content={"name": ELICIT_NAME, "check": True, "integer": 7})

    async def on_roots(self, context: RequestContext):
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name=ROOT_NAME)])

    def kwargs(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.on_sampling,
            "elicitation_callback": self.on_elicitation,
            "list_roots_callback": self.on_roots,
        }


def _http_client(headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers=headers or {}, timeout=httpx.Timeout(30.0, read=120.0), follow_redirects=False)


@asynccontextmanager
async def _transport(route: str, server: str, spec: dict[str, Any], gateway: harness.Gateway | None):
    if route == "direct":
        if "command" in spec:
            env = get_default_environment()
            env.update(spec.get("env") or {})
            params = StdioServerParameters(command=spec["command"], args=list(spec.get("args", [])), env=env)
            async with stdio_client(params) as (read, write):
                yield read, write
        elif spec.get("type") == "sse":
            async with sse_client(spec["url"], headers=spec.get("headers")) as (read, write):
                yield read, write
        else:
            async with _http_client(spec.get("headers")) as http:
                async with streamable_http_client(spec["url"], http_client=http) as (read, write, _sid):
                    yield read, write
    elif route == "http":
        assert gateway is not None, "route http needs the gateway"
        async with _http_client(gateway.auth_headers()) as http:
            async with streamable_http_client(gateway.mcp_url(server), http_client=http) as (read, write, _sid):
                yield read, write
    elif route == "stdio":
        assert gateway is not None, "route stdio needs the gateway"
        argv = gateway.connect_argv(server)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=get_default_environment())
        async with stdio_client(params) as (read, write):
            yield read, write
    else:
        raise ValueError(f"unknown route {route!r}")


@asynccontextmanager
async def open_session(
    route: str,
    server: str,
    spec: dict[str, Any],
    gateway: harness.Gateway | None = None,
    callbacks: Callbacks | None = None,
    **session_kwargs: Any,
) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    """An initialized ClientSession to `server` over `route`, plus the initialize result."""
    kwargs: dict[str, Any] = {"client_info": CLIENT_INFO}
    if callbacks is not None:
        kwargs.update(callbacks.kwargs())
    kwargs.update(session_kwargs)
    # mcp 1.x closes the session's read stream on exit while the transport may still deliver a late
    # message (e.g. server-everything's tools/list_changed after a call the gateway answered itself);
    # its stdio reader then dies with BrokenResourceError. A pump in between drops such late messages.
    inner_send, inner_recv = anyio.create_memory_object_stream(16)
    async with anyio.create_task_group() as tg:
        async with _transport(route, server, spec, gateway) as (read, write):
            tg.start_soon(_pump, read, inner_send)
            async with ClientSession(inner_recv, write, **kwargs) as session:
                init = await session.initialize()
                yield session, init


async def _pump(read: Any, inner_send: Any) -> None:
    """Forward transport messages to the session; after the session is gone, drain and drop them."""
    try:
        async with inner_send:
            async for message in read:
                try:
                    await inner_send.send(message)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
    except anyio.ClosedResourceError:
        pass


def result_view(result: types.CallToolResult) -> dict[str, Any]:
    """The parts of a tool result a pass-through must preserve (content, structuredContent, isError)."""
    d = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    d.pop("_meta", None)
    d.setdefault("isError", False)
    return d


def first_text(result: types.CallToolResult) -> str:
    return harness.denial_text(result.content)


def assert_denial(result: types.CallToolResult, *needles: str) -> str:
    """A gateway refusal: isError, first text starts [portcullis] and mentions every needle."""
    text = first_text(result)
    assert result.isError is True, f"a refused call must be isError=true, got {result_view(result)}"
    assert text.startswith(harness.DENIAL_PREFIX), f"refusal text must start {harness.DENIAL_PREFIX!r}: {text!r}"
    for needle in needles:
        assert needle.lower() in text.lower(), f"refusal text must mention {needle!r}: {text!r}"
    return text


def tool_map(tools: types.ListToolsResult) -> dict[str, dict[str, Any]]:
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools}


async def wait_file_contains(path: Path, needle: str, timeout: float) -> str:
    """Poll a file (bounded) until it contains `needle`; return its text."""
    with anyio.fail_after(timeout):
        while True:
            try:
                text = path.read_text()
            except FileNotFoundError:
                text = ""
            if needle in text:
                return text
            await anyio.sleep(0.05)


async def exercise_server_requests(route, upstream, spec, gateway, m):
    """Trigger sampling, elicitation and roots requests from server-everything; return what each side saw."""
    cb = Callbacks()
    async with open_session(route, upstream, spec, gateway, callbacks=cb) as (s, _):
        tools = {t.name for t in (await s.list_tools()).tools}
        sampling = await s.call_tool("trigger-sampling-request", {"prompt": f"prompt {m}", "maxTokens": 20})
        elicitation = await s.call_tool("trigger-elicitation-request", {})
        roots = await s.call_tool("get-roots-list", {})
    return cb, tools, sampling, elicitation, roots


async def cancel_slow_call(route, spec, gateway, log_path, m):
    """Start `slow`, wait until the server runs it, send notifications/cancelled, wait for the server's log."""
    async with open_session(route, "slow", spec, gateway) as (s, _):
        request_id = s._request_id  # the id the next request will get (ClientSession counts up from 0)
        outcome: dict[str, object] = {}

        async def call():
            try:
                outcome["result"] = await s.call_tool("slow", {"marker": m, "seconds": 20})
            except Exception as e:  # the server may answer the cancelled request with an error
                outcome["error"] = e

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await wait_file_contains(log_path, f"started {m}", 15)
            await s.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason="e2e cancel")
                    )
                )
            )
            text = await wait_file_contains(log_path, f"cancelled {m}", 10)
            tg.cancel_scope.cancel()
        after = await s.call_tool("ping_tool", {"marker": m})
    return text, outcome, after
