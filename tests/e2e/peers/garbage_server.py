"""A FastMCP (Python mcp 1.x) stdio server that writes lines that are not JSON-RPC to stdout.

Used by tests/e2e/mcp1/test_upstream_faults_mcp1.py: a misbehaving server (a stray print, a library
writing a banner) must not break calls through Portcullis, which should ignore and log such lines.
Before it starts serving, and inside every tool call (so before each tool answer), it writes straight
to the stdout byte stream:
  b"garbage line\n"            plain text
  b"\xff\xfe\n"                invalid UTF-8
  b"{not json\n"               looks like the start of JSON
Tools: echo(message) -> "Echo: <message>"; add(a, b) -> a + b (structured result).
"""

import sys

from mcp.server.fastmcp import FastMCP

GARBAGE = (b"garbage line\n", b"\xff\xfe\n", b"{not json\n")

mcp = FastMCP("garbage-server")


def _garbage() -> None:
    # The SDK's writer flushes after every message, so between messages this cannot split a line of
    # protocol output; the garbage lines go out whole and ahead of the tool's answer.
    for line in GARBAGE:
        sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back (after writing garbage to stdout)."""
    _garbage()
    return f"Echo: {message}"


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers (after writing garbage to stdout)."""
    _garbage()
    return a + b


if __name__ == "__main__":
    _garbage()
    mcp.run("stdio")
