"""The tools every differential server offers, shared by the Python stacks (tests/differential).

`execute(stack, tool, arguments, request)` appends one JSON line to $DIFF_EXEC_LOG saying what the
stack is about to do, flushed and fsynced before the answer goes out, then returns the tool result.
Nothing here touches the file system beyond that log: `read_file` and `wipe` only say what they would do.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

TOOLS = [
    {"name": "echo", "description": "Echoes message",
     "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}},
    {"name": "read_file", "description": "Reads path",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "wipe", "description": "Wipes target",
     "inputSchema": {"type": "object", "properties": {"target": {"type": "string"}}}},
]
TOOL_NAMES = {t["name"] for t in TOOLS}


def initialize_result(params: Any, stack: str) -> dict[str, Any]:
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return {"protocolVersion": version or "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": f"differential-{stack}", "version": "1"}}


def execute(stack: str, tool: Any, arguments: Any, request: str) -> dict[str, Any]:
    """Log the execution, then give the tool's result. `tool` must be one of TOOL_NAMES."""
    if tool == "read_file":
        # The tool opens arguments["path"] as this stack's dict reading gives it.
        path = arguments.get("path") if isinstance(arguments, dict) else None
        logged: Any = {"path": path}
        text = f"read {path}"
    else:
        logged = arguments
        text = f"Echo: {arguments.get('message')}" if tool == "echo" and isinstance(arguments, dict) else tool
    record = {"stack": stack, "tool": tool, "arguments": logged, "request": request}
    path = os.environ.get("DIFF_EXEC_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
    return {"content": [{"type": "text", "text": text}]}


def lines():
    """stdin split on b"\\n" only (U+2028 may appear raw), a trailing CR stripped, blank lines skipped."""
    stdin = sys.stdin.buffer
    seen = os.environ.get("DIFF_SEEN_LOG")
    for raw in iter(stdin.readline, b""):
        line = raw.rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        if line.strip():
            if seen:  # every line received, as it came: what the gateway forwarded
                with open(seen, "ab") as f:
                    f.write(line + b"\n")
            yield line


def send(message: Any) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
