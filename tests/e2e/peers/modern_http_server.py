"""modern_server.py's MCPServer (Python mcp 2.3.0, dual-era) served over Streamable HTTP on loopback.

Used by tests/e2e/mcp2/test_modern_http_upstream_mcp2.py as an `http` upstream of Portcullis. It binds
127.0.0.1 port 0 itself (no race for a free port) and prints `listening on port N` to stderr once the
socket is bound. Endpoint: http://127.0.0.1:N/mcp. Same tools as modern_server.py (echo, greet with
elicitation / MRTR, delete_everything, internal_debug; MODERN_SERVER_LOG records invocations), plus:
  slow_echo(message, seconds) -> sleeps, then "Echo: <message>" (logs its start and its cancellation)

SSE framing the upstream produces (what a proxy must parse without choking):
  * legacy era (initialize handshake, protocol >= 2025-11-25): an in-memory event store makes every
    POST's SSE stream open with a priming event (`id: ...` and an empty `data:`) plus `retry:`;
  * modern era (2026-07-28): a response that is still running after MODERN_HTTP_PING_SECS (default
    0.2 s here, 15 s in the SDK) switches to `text/event-stream` and sends `: ping` comment lines until
    the result comes.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import sys
from pathlib import Path

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp.server._streamable_http_modern as modern_http  # noqa: E402
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId  # noqa: E402

from modern_server import server  # noqa: E402

modern_http._SSE_PING_INTERVAL = float(os.environ.get("MODERN_HTTP_PING_SECS", "0.2"))


@server.tool()
async def slow_echo(message: str, seconds: float = 1.0) -> str:
    """Echo the message back after `seconds` (long enough for SSE keepalive comments). Appends
    `slow_echo started <message>` to MODERN_SERVER_LOG when it begins and `slow_echo cancelled <message>`
    when it is cancelled."""
    _log_line(f"slow_echo started {message}")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _log_line(f"slow_echo cancelled {message}")
        raise
    return f"Echo: {message}"


def _log_line(line: str) -> None:
    path = os.environ.get("MODERN_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


class MemoryEventStore(EventStore):
    """Just enough of an event store for the transport to send priming events (and replay on resume)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._events: list[tuple[str, StreamId, object]] = []

    async def store_event(self, stream_id: StreamId, message) -> EventId:
        event_id = str(next(self._ids))
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        index = next((i for i, (eid, _, _) in enumerate(self._events) if eid == last_event_id), None)
        if index is None:
            return None
        stream_id = self._events[index][1]
        for eid, sid, message in self._events[index + 1:]:
            if sid == stream_id and message is not None:
                await send_callback(EventMessage(message, eid))
        return stream_id


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from here on, before uvicorn starts serving
    port = sock.getsockname()[1]
    app = server.streamable_http_app(event_store=MemoryEventStore(), retry_interval=1000, host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(config)
    print(f"modern_http_server: listening on port {port}", file=sys.stderr, flush=True)
    await uv.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
