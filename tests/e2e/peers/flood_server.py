"""A legacy stdio MCP server that can flood its client, for the gateway's resource-bound tests.

Tools:
  echo {text}                         answers at once
  flood {mb, chunk_kb, kind, done}    writes `mb` MiB of notifications (`kind` "message":
                                      notifications/message; "progress": progress on the call's
                                      token) in `chunk_kb` KiB messages, then answers; touches the
                                      file `done` when it has written everything
  stderr_bomb {mb}                    writes `mb` MiB to stderr without a newline, then answers

Standard library only. Cancellations are ignored on purpose: a flood goes on regardless, as a
hostile or broken server's would.
"""

import json
import os
import sys

OUT = sys.stdout.buffer


def send(msg):
    OUT.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
    OUT.flush()


def result(id_, text):
    send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}})


TOOLS = [
    {"name": n, "description": n, "inputSchema": {"type": "object"}}
    for n in ("echo", "flood", "stderr_bomb")
]


def flood(args, meta):
    total = int(args.get("mb", 1)) * 1024 * 1024
    chunk = int(args.get("chunk_kb", 256)) * 1024
    payload = "x" * chunk
    token = meta.get("progressToken")
    if args.get("kind") == "progress" and token is not None:
        head = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token}}
    else:
        head = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
    written, n = 0, 0
    while written < total:
        n += 1
        head["params"]["progress" if "progressToken" in head["params"] else "logger"] = n
        head["params"]["message" if "progressToken" in head["params"] else "data"] = payload
        line = json.dumps(head, separators=(",", ":")).encode() + b"\n"
        try:
            OUT.write(line)
        except BrokenPipeError:
            break
        written += len(line)
    OUT.flush()
    if args.get("done"):
        # Written beside and renamed, so a reader polling for the file never sees it empty.
        part = args["done"] + ".part"
        with open(part, "w") as f:
            f.write(str(written))
        os.replace(part, args["done"])
    return f"flooded {written} bytes in {n} messages"


def stderr_bomb(args):
    chunk = b"e" * (1024 * 1024)
    for _ in range(int(args.get("mb", 1))):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()
    return "bombed"


def handle(msg):
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None or method is None:
        return
    params = msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "flood":
            result(id_, flood(args, params.get("_meta") or {}))
        elif name == "stderr_bomb":
            result(id_, stderr_bomb(args))
        else:
            result(id_, str(args.get("text", "")))
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no such method"}})


def main():
    for line in sys.stdin.buffer:
        line = line.strip()
        if line:
            handle(json.loads(line))


if __name__ == "__main__":
    main()
