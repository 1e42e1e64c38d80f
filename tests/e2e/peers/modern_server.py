"""A modern-era (2026-07-28 capable) MCP server on stdio, built with Python mcp 2.3.0's MCPServer.

Used as a Portcullis upstream by tests/e2e/mcp2. Tools:
  echo(message)          -> "Echo: <message>"
  greet(marker)          -> asks the client for a name (elicitation: on 2026-07-28 an MRTR round trip,
                            `input_required` + `requestState`, retried by the client under a new id),
                            then answers "Hello, <name> (<marker>)"
  delete_everything()    -> would be destructive; the test policy denies it, so it must never run.
  internal_debug()       -> the test policy hides it: absent from tools/list, refused if called.
With MODERN_SERVER_MATRIX=1 (the interop matrix, tests/e2e/matrix.py) one more tool, kept out of other
tests' tool lists:
  announce()             -> publishes tools list_changed and resources/updated for note://matrix to
                            `subscriptions/listen` streams (2026-07-28), then answers "announced"
If the env var MODERN_SERVER_LOG names a file, every tool invocation appends its name there, so a test
can prove that a denied call never reached the server.
"""

import os
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

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


class Name(BaseModel):
    name: str


def ask_name(marker: str) -> Elicit[Name]:
    return Elicit(f"What is your name? ({marker})", Name)


@server.tool()
def greet(marker: str, who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet the user by the name the client provides through elicitation."""
    _record("greet")
    return f"Hello, {who.name} ({marker})"


@server.tool()
def delete_everything() -> str:
    """Pretend to delete everything (policy must keep this from running)."""
    _record("delete_everything")
    return "deleted everything"


@server.tool()
def internal_debug() -> str:
    """Dump internals (policy hides this tool)."""
    _record("internal_debug")
    return "internals"


async def announce(ctx: Context) -> str:
    """Tell `subscriptions/listen` streams that the tools and note://matrix changed."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("note://matrix")
    return "announced"


if os.environ.get("MODERN_SERVER_MATRIX") == "1":
    server.tool()(announce)


if __name__ == "__main__":
    print("modern_server: starting on stdio", file=sys.stderr, flush=True)
    server.run("stdio")
