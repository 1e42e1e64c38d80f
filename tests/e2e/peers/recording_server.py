"""A FastMCP (Python mcp 1.x) stdio server that remembers every call it received, durably.

Used by the crash-safety test (tests/e2e/mcp1/test_audit_faults_mcp1.py): the gateway is killed with
SIGKILL while calls flow, and every call this server saw must have its decision row in the audit.
"Saw" must survive the kill too, so each call's marker is appended to the file named by
RECORDING_SERVER_LOG and fsynced *before* the answer is sent. Several copies (one per session) may
append to the same file: each line is one small O_APPEND write, which the kernel does not interleave.

Tools:
  record(marker) -> "recorded <marker>"
"""

import os

from mcp.server.fastmcp import FastMCP

mcp = FastMCP("recording-server")

_fd = os.open(os.environ["RECORDING_SERVER_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


@mcp.tool()
def record(marker: str) -> str:
    """Remember the marker durably, then answer."""
    os.write(_fd, (marker + "\n").encode())
    os.fsync(_fd)
    return f"recorded {marker}"


if __name__ == "__main__":
    mcp.run()
