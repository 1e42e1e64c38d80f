"""A small stdio MCP server (standard library only) for the gateway's Rust tests.

It answers both eras (initialize, server/discover) and records what it receives to the file named by
SCRIPTED_LOG, one line per event, flushed at once, so a test can wait for "the server got it":
  call <wire id> <tool> <marker>   a tools/call arrived (under the id the gateway gave it)
  cancelled <requestId>        a notifications/cancelled arrived

Tools:
  slow     never answers on its own; a cancel ends it (recorded as above). With a progressToken it
           first sends one notifications/progress
  chatty   first sends notifications/message (data: "chatty <marker>") and
           notifications/tools/list_changed, neither naming the request, then answers "chatty done"
  echo     answers "echo <marker>" at once
"""

import json
import os
import sys

LOG = os.environ.get("SCRIPTED_LOG")


def record(line):
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(id_, value):
    send({"jsonrpc": "2.0", "id": id_, "result": value})


def text(id_, body):
    result(id_, {"content": [{"type": "text", "text": body}], "resultType": "complete"})


TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("slow", "chatty", "echo")]

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, id_, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method == "initialize":
        result(id_, {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                     "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                     "serverInfo": {"name": "scripted", "version": "1"}})
    elif method == "server/discover":
        result(id_, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
                     "serverInfo": {"name": "scripted", "version": "1"}, "resultType": "complete"})
    elif method == "tools/list":
        result(id_, {"tools": TOOLS})
    elif method == "ping":
        result(id_, {})
    elif method == "notifications/cancelled":
        record(f"cancelled {json.dumps(params.get('requestId'))}")
    elif method == "tools/call":
        tool = params.get("name")
        marker = (params.get("arguments") or {}).get("marker", "")
        record(f"call {json.dumps(id_)} {tool} {marker}")
        if tool == "chatty":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": f"chatty {marker}"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text(id_, "chatty done")
        elif tool == "echo":
            text(id_, f"echo {marker}")
        elif tool == "slow" and "progressToken" in (params.get("_meta") or {}):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": params["_meta"]["progressToken"], "progress": 1}})
        # slow: no answer
    elif id_ is not None:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no such method"}})
