#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (run from anywhere; rewrites every seed but
the crash-* files, the inputs of bugs fuzzing found, kept as regression seeds).

Seeds are small, meaningful inputs: real MCP messages of both eras, SSE streams as servers send
them, the shipped policies, conditions with every operator. The stream targets read a header
first (see fuzz/src/lib.rs): [limit, number of cuts, cuts as u16 LE..., payload].
"""
import json
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": {"name": "seed", "version": "1"},
          "io.modelcontextprotocol/clientCapabilities": {}}


def j(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


MESSAGES = [
    # Legacy era: handshake, listing, calls, notifications, server requests.
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}}, "clientInfo": {"name": "claude-code", "version": "2.0.1"}}},
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "everything", "version": "1.0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "echo", "description": "Echoes", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}], "nextCursor": "abc"}},
    {"jsonrpc": "2.0", "id": "call-7", "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "/etc/hosts", "limit": 10}, "_meta": {"progressToken": 7}}},
    {"jsonrpc": "2.0", "id": "call-7", "result": {"content": [{"type": "text", "text": "[portcullis] denied by rule tools.read_file: no"}], "isError": True}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 0.5, "total": 1}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "call-7", "reason": "user"}},
    {"jsonrpc": "2.0", "id": 3, "method": "roots/list"},
    {"jsonrpc": "2.0", "id": 3, "result": {"roots": [{"uri": "file:///home/a", "name": "a"}]}},
    {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    {"jsonrpc": "2.0", "id": 4, "result": {}},
    {"jsonrpc": "2.0", "id": 5, "result": None},
    {"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "Method not found"}},
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
    # Modern era: stateless, _meta on every request, resultType, MRTR.
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "vm_delete", "arguments": {"node": "pve", "vmid": 101, "purge": True}, "_meta": MODERN}},
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "input_required", "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "Sure?"}}}, "requestState": "b64:AAAA"}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "vm_delete", "arguments": {"node": "pve", "vmid": 101}, "inputResponses": {"confirm": {"action": "accept"}}, "requestState": "b64:AAAA", "_meta": MODERN}},
    {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete", "content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1.5e3}}},
]

ODD_MESSAGES = [
    b'{"id":1,"method":"m","params":{"t":"a\xe2\x80\xa8b"}}',   # raw U+2028
    b'{"id":-1.5e3,"method":"tools/call","params":{"name":"x","arguments":{"b":[1,{"z":null,"a":"\\u00e9"}],"a":1.0}}}',
    b'{"id":"\\u0031","method":"x"}',
    b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    b'42',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"x"}',
    b'{"jsonrpc":"2.0","id":1}',
    b'{"id":1,"id":2,"method":"x"}',
    b'{"jsonrpc":"2.0","id":1,"result":{},"error":null}',
    b'{"id":1e400,"method":"x"}',
    b'  {"method" : "tools/call" , "id" : 9 }\r',
    b'',
]


def header(limit=0, cuts=()):
    return bytes([limit, len(cuts)]) + b"".join(struct.pack("<H", c) for c in cuts)


def write(target, name, data):
    path = HERE / "corpus" / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def messages():
    for i, msg in enumerate(MESSAGES):
        write("jsonrpc_message", f"mcp-{i:02}", j(msg).encode())
    for i, raw in enumerate(ODD_MESSAGES):
        write("jsonrpc_message", f"odd-{i:02}", raw)
    write("jsonrpc_message", "pretty", json.dumps(MESSAGES[5], indent=2).encode())


def lines():
    stream = "".join(j(m) + "\n" for m in MESSAGES[:8]).encode()
    write("line_codec", "session", header() + stream)
    write("line_codec", "session-cut", header(0, (5, 40, 41, 200)) + stream)
    write("line_codec", "crlf-blank", header(0, (3,)) + b'{"a":1}\r\n\r\n  \n{"b":2}\n{"c"')
    write("line_codec", "oversized", header(16, (10, 20)) + b'{"big":"' + b"x" * 40 + b'"}\n{"ok":1}\n')
    write("line_codec", "limit-edge", header(8, (8,)) + b"12345678\r\n123456789\n1234567\r\r\n")
    write("line_codec", "u2028", header() + ODD_MESSAGES[0] + b"\n")
    write("line_codec", "pretty", header() + json.dumps(MESSAGES[3], indent=2).encode())


SSE = [
    b"id: 0\ndata:\n\n",                                       # priming event
    b": keep-alive\n\n",
    b"event: message\ndata: " + j(MESSAGES[6]).encode() + b"\n\n",
    b"event: endpoint\ndata: /messages?sessionId=abc\n\n",
    b'data: {"a":\r\ndata: 1}\r\rid: 7\r\nretry: 1000\r\n\r\n',
    b"data:no-space\nunknown: x\nevent\n\n",
]


def sse():
    stream = b"".join(SSE)
    write("sse_decoder", "server-stream", header() + stream)
    write("sse_decoder", "server-stream-cut", header(0, (1, 14, 15, 60, 61)) + stream)
    for i, chunk in enumerate(SSE):
        write("sse_decoder", f"event-{i}", header(0, (len(chunk) // 2,)) + chunk)
    write("sse_decoder", "oversized", header(12, (6,)) + b"data: 0123456789abcdef\n\ndata: ok\n\n")
    write("sse_decoder", "oversized-multiline", header(10, ()) + b"data: 12345\ndata: 67890\n\ndata: x\n\n")
    write("sse_decoder", "cr-in-json", header() + b'{"a":1,\r"b":[2,\r\n3]}')
    write("sse_decoder", "pretty", header() + json.dumps(MESSAGES[1], indent=1).encode())


OPERATORS = {
    "eq": "x", "ne": None, "in": [1, "a", None], "not_in": [[1], {"a": 1}], "regex": "^/etc/",
    "contains": "secret", "gt": 3, "gte": 1.5, "lt": -2, "lte": 18446744073709551615, "exists": False,
}


def policies():
    sources = sorted((ROOT / "policies").glob("*.json"))
    sources += sorted(pathlib.Path("/work/shared/seeds").glob("*/policy.json"))
    for path in sources:
        if path.name == "policy.schema.json":
            continue
        write("policy_load", path.stem, path.read_bytes())
    every = {"version": "1", "default": "deny", "hide": ["*_secret", "[!a]?x"], "approval_timeout": 60,
             "redact": ["X-Api-Key"],
             "tools": {"read_*": {"class": "read", "risk": "low"},
                       "vm_delete": {"action": "require_approval", "approval_timeout": 30, "reason": "destroys",
                                     "rules": [{"when": {f"arguments.p{i}": {op: val}}, "action": "deny", "reason": op}
                                               for i, (op, val) in enumerate(OPERATORS.items())]},
                       "exec": {"rate_limit": {"max": 3, "window": 60},
                                "rules": [{"when": {"arguments.cmd.0": {"in": ["rm", "dd"]}, "arguments.cmd": {"contains": "-rf"}},
                                           "action": "deny"}]}}}
    write("policy_load", "every-operator", json.dumps(every, indent=2).encode())
    write("policy_load", "minimal", b'{"version":"1"}')
    write("policy_load", "mistakes", json.dumps({
        "version": 1, "default": "maybe", "hide": ["a[b", 3], "tools": {
            "": {}, "x": {"rules": [{"when": {"args.a": {}, "arguments.b": {"regex": "("}}}],
                         "rate_limit": {"max": 0}, "bogus": 1}}}).encode())
    write("policy_load", "duplicate-key", b'{"version":"1","tools":{"a":{},"a":{"action":"deny"}}}')


def strict_reader():
    """strict_reader: byte 0 = 0 means "the rest is the message"; the messages of the differential
    corpus (tests/differential/corpus.py) with fixed markers, and a few generator seeds."""
    sys.path.insert(0, str(ROOT / "tests" / "differential"))
    import corpus  # noqa: E402 (the project's own hostile-message corpus)

    for case in corpus.CASES:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in case.name)
        write("strict_reader", f"msg-{safe}", b"\x00" + case.render("m0", 7))
    for m in MESSAGES:
        write("strict_reader", f"mcp-{MESSAGES.index(m):02d}", b"\x00" + j(m).encode())
    for i, seed in enumerate([b"\x01" * 64, b"\x02" + bytes(range(256)), b"\x03\x07\x01\x02" * 40]):
        write("strict_reader", f"gen-{i}", seed)


def main():
    # Inputs that once crashed a target (crash-*) are kept: they are regression seeds.
    for path in (HERE / "corpus").glob("*/*"):
        if not path.name.startswith("crash-"):
            path.unlink()
    messages()
    lines()
    sse()
    policies()
    strict_reader()
    # policy_eval takes structured (`arbitrary`) input: a few byte patterns to start from.
    for i, seed in enumerate([b"\x00" * 64, bytes(range(256)), b"\x01\x02\x03\x04" * 40, b"\xff\x10" * 100]):
        write("policy_eval", f"bytes-{i}", seed)


if __name__ == "__main__":
    main()
