"""Python mcp 2.3.0 (dual-era) client helpers.

`open_client(route, server, spec, gateway)` yields an entered `mcp.Client` in mode "auto": it probes
`server/discover` and falls back to the `initialize` handshake, so the protocol version it ends up with
tells which era the far end speaks. Routes are as in the mcp1 suite: "direct", "http", "stdio".
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

import harness

MODERN = "2026-07-28"
CLIENT_INFO = types.Implementation(name="portcullis-e2e-mcp2", version="2.0.0")
ELICIT_NAME = "Grace Hopper"


def run(fn: Callable[[], Awaitable[Any]], timeout: float = 60.0) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(timeout):
            return await fn()

    return anyio.run(bounded)


class Elicitations:
    """Answers every elicitation with ELICIT_NAME and records what was asked."""

    def __init__(self) -> None:
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"name": ELICIT_NAME})


@asynccontextmanager
async def _server_arg(route: str, server: str, spec: dict[str, Any],
                      gateway: harness.Gateway | None) -> AsyncIterator[Any]:
    """What `Client(...)` connects to for this route; owns (and closes) any HTTP client it makes."""
    if route == "stdio":
        assert gateway is not None, "route stdio needs the gateway"
        argv = gateway.connect_argv(server)
        yield StdioServerParameters(command=argv[0], args=argv[1:])
        return
    if route == "direct" and "command" in spec:
        yield StdioServerParameters(command=spec["command"], args=list(spec.get("args", [])),
                                    env=dict(spec.get("env") or {}))
        return
    if route == "direct" and spec.get("type") == "sse":
        yield sse_client(spec["url"], headers=dict(spec.get("headers") or {}))
        return
    if route == "direct":
        url, headers = spec["url"], dict(spec.get("headers") or {})
    elif route == "http":
        assert gateway is not None, "route http needs the gateway"
        url, headers = gateway.mcp_url(server), gateway.auth_headers()
    else:
        raise ValueError(f"unknown route {route!r}")
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        yield streamable_http_client(url, http_client=http)


@asynccontextmanager
async def open_client(route: str, server: str, spec: dict[str, Any], gateway: harness.Gateway | None = None,
                      **kwargs: Any) -> AsyncIterator[Client]:
    kwargs.setdefault("client_info", CLIENT_INFO)
    kwargs.setdefault("mode", "auto")
    kwargs.setdefault("cache", None)  # every list/call must reach the server, never a client-side cache
    async with _server_arg(route, server, spec, gateway) as target:
        async with Client(target, **kwargs) as client:
            yield client


def result_view(result: types.CallToolResult) -> dict[str, Any]:
    d = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    d.pop("_meta", None)
    d.setdefault("isError", False)
    return d


def first_text(result: types.CallToolResult) -> str:
    return harness.denial_text(result.content)


def assert_denial(result: types.CallToolResult, *needles: str) -> str:
    text = first_text(result)
    assert result.is_error is True, f"a refused call must be isError=true, got {result_view(result)}"
    assert text.startswith(harness.DENIAL_PREFIX), f"refusal text must start {harness.DENIAL_PREFIX!r}: {text!r}"
    for needle in needles:
        assert needle.lower() in text.lower(), f"refusal text must mention {needle!r}: {text!r}"
    return text
