"""A minimal stdio MCP server that reads resources/read, resources/subscribe and prompts/get the way a
hand-written Python server does: `json.loads` (the last duplicate key wins), `params["uri"]` /
`params["name"]`, and `urllib.parse.urlsplit` + `unquote` for the path it would open. Every such
request is appended (and fsynced) to $DOORS_LOG as {"stack","method","uri","name","path","host",
"user","parse_error","request"} before the answer. tools/call echo is answered too (the barrier).
Standard library only: it runs under either venv's Python. The line reading, answering and the
synced log append are the differential servers' own (tests/differential/difftools.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Launched as a script from anywhere: difftools lives with the differential servers.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "differential"))

import difftools  # noqa: E402

LOG = os.environ.get("DOORS_LOG")


def log(entry: dict) -> None:
    # ASCII-escaped JSON: a path decoded with surrogateescape still writes as UTF-8.
    difftools.append_synced(LOG, json.dumps(entry))


def handle(line: bytes) -> None:
    text = line.decode("utf-8", "surrogateescape")
    read = difftools.request(text)
    if read is None:
        return
    msg, answer = read
    method = msg["method"]
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    if method == "initialize":
        answer({"protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}, "resources": {"subscribe": True}, "prompts": {}},
                "serverInfo": {"name": "doors-python", "version": "1"}})
    elif method == "ping":
        answer({})
    elif method == "tools/list":
        answer({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        answer({"content": [{"type": "text", "text": "Echo"}]})
    elif method == "prompts/get":
        log({"stack": "python", "method": method, "name": params.get("name"), "request": text})
        answer({"messages": [{"role": "user", "content": {"type": "text", "text": f"prompt {params.get('name')}"}}]})
    elif method in ("resources/read", "resources/subscribe"):
        uri = params.get("uri")
        entry = {"stack": "python", "method": method, "uri": uri, "request": text}
        try:
            parts = urlsplit(uri)
            entry.update(path=unquote(parts.path), host=parts.hostname or "", user=parts.username)
        except Exception as e:  # noqa: BLE001 - what a server does with a URI it cannot read
            entry["parse_error"] = f"{type(e).__name__}: {e}"
        log(entry)
        if method == "resources/subscribe":
            answer({})
        else:
            answer({"contents": [{"uri": uri, "text": f"read {entry.get('path')}"}]})
    elif not str(method).startswith("notifications/"):
        answer(error={"code": -32601, "message": f"method not found: {method}"})


if __name__ == "__main__":
    difftools.serve(handle)
