"""A minimal stdio MCP server that reads resources/read, resources/subscribe and prompts/get the way a
hand-written Python server does: `json.loads` (the last duplicate key wins), `params["uri"]` /
`params["name"]`, and `urllib.parse.urlsplit` + `unquote` for the path it would open. Every such
request is appended (and fsynced) to $DOORS_LOG as {"stack","method","uri","name","path","host",
"user","parse_error","request"} before the answer. tools/call echo is answered too (the barrier).
Standard library only: it runs under either venv's Python."""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import unquote, urlsplit

LOG = os.environ.get("DOORS_LOG")


def send(msg: dict) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def log(entry: dict) -> None:
    if not LOG:
        return
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())


def handle(text: str) -> None:
    try:
        msg = json.loads(text)
    except ValueError as e:
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(e)}})
        return
    if not isinstance(msg, dict) or "method" not in msg:
        return
    has_id = "id" in msg

    def answer(result=None, error=None) -> None:
        if has_id:
            send({"jsonrpc": "2.0", "id": msg["id"], **({"error": error} if error else {"result": result})})

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


def main() -> None:
    for raw in sys.stdin.buffer:  # split on b"\n" only
        line = raw.rstrip(b"\n").rstrip(b"\r")
        if line.strip():
            handle(line.decode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    main()
