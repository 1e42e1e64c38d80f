"""A FastMCP (Python mcp 1.x) stdio server that can be made to die in the middle of a call.

Used by tests/e2e/mcp1/test_upstream_faults_mcp1.py to check what Portcullis does when its stdio
upstream crashes: pending calls must be answered with an error, and the next session must get a fresh
child. The env var CRASHY_SERVER_LOG names a file that gets one line per event:
  start <pid>                      the process started
  hang <marker> <pid>              `hang` began waiting (it answers only after `seconds`)
  crash <marker> <pid> <unix time>  `crash_soon` is about to exit the process with status 3
Tools:
  echo(message)        -> "Echo: <message>"
  pid(marker)          -> the server's process id, as text
  hang(marker, seconds) -> sleeps, then "woke <marker>" (normally never: the process dies first)
  crash_soon(marker)   -> writes the crash line, then os._exit(3) without answering
"""

import os
import time

import anyio
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("crashy-server")


def _log(line: str) -> None:
    path = os.environ.get("CRASHY_SERVER_LOG")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()


@mcp.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@mcp.tool()
def pid(marker: str) -> str:
    """This server process's id."""
    return str(os.getpid())


@mcp.tool()
async def hang(marker: str, seconds: float = 30.0) -> str:
    """Wait `seconds` before answering (a call that is still pending when the process dies)."""
    _log(f"hang {marker} {os.getpid()}")
    await anyio.sleep(seconds)
    return f"woke {marker}"


@mcp.tool()
def crash_soon(marker: str) -> str:
    """Record the moment, then exit the process at once (status 3) without answering."""
    _log(f"crash {marker} {os.getpid()} {time.time():.6f}")
    os._exit(3)


if __name__ == "__main__":
    _log(f"start {os.getpid()}")
    mcp.run("stdio")
