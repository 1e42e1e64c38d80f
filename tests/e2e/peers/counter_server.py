"""A stdio MCP server that keeps state: `count` adds one to a counter held in the process and says
its value and the process id. A restart of the server (a new process) starts again from zero, so a
test reads whether its server lived through something.

Tools: `count` (allowed by the tests' policies), `ask` (held for a person by them).
Works under mcp 1.x (FastMCP) and mcp 2.x (MCPServer).
"""

from __future__ import annotations

import os

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x (venv2)
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1.x (venv1)

mcp = Server("counter")
calls = 0


@mcp.tool()
def count() -> str:
    """Adds one to the counter; returns `n=<value> pid=<process id>`."""
    global calls
    calls += 1
    return f"n={calls} pid={os.getpid()}"


@mcp.tool()
def ask(marker: str) -> str:
    """A call the tests' policies hold for a person."""
    return f"asked {marker} pid={os.getpid()}"


if __name__ == "__main__":
    mcp.run()
