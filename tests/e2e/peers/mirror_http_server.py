"""A dual-era MCPServer (Python mcp 2.3.0) over Streamable HTTP on loopback whose tool mirrors
arguments into `Mcp-Param-*` headers, and which records the headers each call arrived with.

Used by tests/e2e/mcp2/test_mirror_headers_mcp2.py as an `http` upstream of Portcullis. It binds
127.0.0.1 port 0 itself and prints `listening on port N` to stderr once bound. Endpoint:
http://127.0.0.1:N/mcp. Tools:
  route(region, count=0, note="")    -> "routed <region> <count> <note>"; `region` is declared with
                                         `x-mcp-header: Region`, `count` with `x-mcp-header: Count`
  echo(message)                       -> "Echo: <message>"
MIRROR_HEADER_LOG names a file that gets one JSON object a line for every tools/call POST: the
`mcp-*` headers as received (`headers`) and the call's arguments as the body gave them
(`arguments`). The SDK checks modern-era headers against the body itself; the log shows what came,
whatever it then did, in either era.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from typing import Annotated

import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import Field

server = MCPServer(name="mirror-headers", version="1.0.0")


@server.tool()
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
          count: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Count"})] = 0,
          note: str = "") -> str:
    """Route a request to a region (the region and count travel in headers too)."""
    return f"routed {region} {count} {note}"


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


class HeaderLog:
    """ASGI middleware: records the `mcp-*` headers and the arguments of every tools/call POST, then
    hands the request on unchanged."""

    def __init__(self, app, path: str | None) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.path:
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message)
            more = message.get("type") == "http.request" and message.get("more_body", False)
        self._record(scope, b"".join(m.get("body", b"") for m in chunks))
        replay = iter(chunks)

        async def replayed():
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)

    def _record(self, scope, body: bytes) -> None:
        try:
            msg = json.loads(body)
        except ValueError:
            return
        if not isinstance(msg, dict) or msg.get("method") != "tools/call":
            return
        headers: dict[str, list[str]] = {}
        for name, value in scope["headers"]:
            name = name.decode("latin-1").lower()
            if name.startswith("mcp-"):
                headers.setdefault(name, []).append(value.decode("latin-1"))
        entry = {"headers": headers, "arguments": (msg.get("params") or {}).get("arguments")}
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = HeaderLog(server.streamable_http_app(host="127.0.0.1"), os.environ.get("MIRROR_HEADER_LOG"))
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    print(f"mirror_http_server: listening on port {port}", file=sys.stderr, flush=True)
    await uv.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
