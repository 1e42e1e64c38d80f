"""A minimal legacy-era MCP server on stdio (standard library only) that records when calls arrive.

Used by the approval tests (tests/e2e/mcp1/test_approvals_mcp1.py) to measure the time from a
person's approve POST to the upstream receiving the call, and to prove that a withdrawn or denied
call never arrived. No SDK in between, so the receipt time is taken as soon as the line is read.

Tools:
  probe(marker)     -> text: JSON {"marker", "received_ns" (time.time_ns() at receipt), "pid"}
  probe_b(marker)   -> the same, under another name (tests that need a second tool)
If PROBE_SERVER_LOG names a file, every tools/call appends "<received_ns> <tool> <marker>\\n" to it.
"""

import json
import os
import sys
import time

TOOLS = [
    {
        "name": name,
        "description": "Report when this call reached the server.",
        "inputSchema": {"type": "object", "properties": {"marker": {"type": "string"}}, "required": ["marker"]},
        "annotations": {"readOnlyHint": True},
    }
    for name in ("probe", "probe_b")
]
VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def handle(msg: dict, received_ns: int) -> None:
    method, rid = msg.get("method"), msg.get("id")
    if rid is None or method is None:
        return  # notifications (initialized, cancelled) and stray responses
    params = msg.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": asked if asked in VERSIONS else "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "approval-probe", "version": "1.0.0"},
        }})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = params.get("name")
        marker = str((params.get("arguments") or {}).get("marker", ""))
        path = os.environ.get("PROBE_SERVER_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{received_ns} {name} {marker}\n")
        if name not in ("probe", "probe_b"):
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"unknown tool {name}"}})
            return
        text = json.dumps({"marker": marker, "received_ns": received_ns, "pid": os.getpid()})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method not found: {method}"}})


def main() -> None:
    for line in sys.stdin.buffer:
        received_ns = time.time_ns()
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            handle(msg, received_ns)


if __name__ == "__main__":
    main()
