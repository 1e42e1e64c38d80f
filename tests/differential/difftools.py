"""The tools every differential server offers, and the stdio plumbing of the hand-written Python
servers: the two Python stacks here (tests/differential) and the doors server
(tests/e2e/peers/doors_py_server.py, which puts this folder on sys.path to import it).

`execute(stack, tool, arguments, request)` appends one JSON line to $DIFF_EXEC_LOG saying what the
stack is about to do, flushed and fsynced before the answer goes out, then returns the tool result.
Nothing here touches the file system beyond the logs: `read_file` and `wipe` only say what they would do.
`request(text)` is how a hand-written server reads a line (`json.loads`, dict semantics) and answers
it; `serve(handle)` feeds it the lines of stdin and keeps serving past a crash of one message.
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
    append_synced(os.environ.get("DIFF_EXEC_LOG"), json.dumps(record, ensure_ascii=False))
    return {"content": [{"type": "text", "text": text}]}


def append_synced(path: str | None, line: str) -> None:
    """Append `line` to the log at `path` (none: nothing), on disk before the caller answers: the test
    reads the logs once the answers are in, so an entry must not lag behind its answer."""
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


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


def request(text: str):
    """A line as a hand-written server reads it: `json.loads` (the last duplicate key wins), a parse
    error answered at once. Gives (message, answer) for a dict with a `method`, whatever its `jsonrpc`
    or `id`; None for responses and junk (nothing to do). `answer(result)` or `answer(error=...)`
    sends only when the message has an `id` member (any value, null too)."""
    try:
        msg = json.loads(text)
    except ValueError as e:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(e)}})
        return None
    if not isinstance(msg, dict) or "method" not in msg:
        return None

    def answer(result: Any = None, error: Any = None) -> None:
        if "id" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"], **({"error": error} if error else {"result": result})})

    return msg, answer


def serve(handle) -> None:
    """handle(line) for each line of stdin (lines()); a message that crashes the handler is answered
    with an internal error and serving goes on, since a dead server would hide later executions."""
    for line in lines():
        try:
            handle(line)
        except Exception as e:  # noqa: BLE001 - see above
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": repr(e)}})
