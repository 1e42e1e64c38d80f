"""A tiny MCP stdio server (Python mcp 1.x FastMCP) whose slow tool reports whether it was cancelled.

Used by tests/e2e/mcp1 to prove that a client's `notifications/cancelled` reaches the upstream server.
The env var SLOW_SERVER_LOG names a file that gets one line per event:
  started <marker>      the tool began running
  cancelled <marker>    the tool's task was cancelled (the server received notifications/cancelled)
  finished <marker>     the tool ran to completion (nobody cancelled it)
"""

import os

import anyio
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("slow-server")


def _log(line: str) -> None:
    path = os.environ.get("SLOW_SERVER_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()


@mcp.tool()
async def slow(marker: str, seconds: float = 20.0) -> str:
    """Sleep for `seconds`, recording start, cancellation or completion under `marker`."""
    _log(f"started {marker}")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _log(f"cancelled {marker}")
        raise
    _log(f"finished {marker}")
    return f"slept {seconds}s for {marker}"


@mcp.tool()
def ping_tool(marker: str) -> str:
    """Answer at once (a quick allowed call)."""
    return f"pong {marker}"


if __name__ == "__main__":
    mcp.run("stdio")
