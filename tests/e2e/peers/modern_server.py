"""A modern-era (2026-07-28 capable) MCP server on stdio, built with Python mcp 2.3.0's MCPServer.

Used as a Portcullis upstream by tests/e2e/mcp2. Tools:
  echo(message)          -> "Echo: <message>"
  delete_everything()    -> would be destructive; the test policy denies it, so it must never run.
If the env var MODERN_SERVER_LOG names a file, every tool invocation appends its name there, so a test
can prove that a denied call never reached the server.
"""

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="modern-echo", version="1.0.0")


def _record(tool: str) -> None:
    path = os.environ.get("MODERN_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(tool + "\n")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    _record("echo")
    return f"Echo: {message}"


@server.tool()
def delete_everything() -> str:
    """Pretend to delete everything (policy must keep this from running)."""
    _record("delete_everything")
    return "deleted everything"


if __name__ == "__main__":
    print("modern_server: starting on stdio", file=sys.stderr, flush=True)
    server.run("stdio")
