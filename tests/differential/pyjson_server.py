"""A minimal stdio MCP server on plain Python `json.loads` (dict semantics: the last duplicate key wins).

Reads the way a hand-written Python server does: `msg.get("method")`, `msg.get("params")`,
`params.get("name")`, `params.get("arguments")`; a message with a `method` is handled whatever its
`jsonrpc` or `id`, and answered when it has an `id` member (any value). A tools/call is executed
whether or not it carries an id. See difftools.py for the execution log.
"""

from __future__ import annotations

import json

import difftools

STACK = "python-json"


def handle(line: bytes) -> None:
    text = line.decode("utf-8", "surrogatepass")
    try:
        msg = json.loads(text)
    except ValueError as e:
        difftools.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(e)}})
        return
    if not isinstance(msg, dict) or "method" not in msg:
        return  # responses and junk: nothing to execute
    has_id = "id" in msg
    rid = msg.get("id")
    method = msg.get("method")
    params = msg.get("params")

    def answer(result=None, error=None):
        if has_id:
            out = {"jsonrpc": "2.0", "id": rid}
            out.update({"error": error} if error else {"result": result})
            difftools.send(out)

    if method == "initialize":
        answer(difftools.initialize_result(params, STACK))
    elif method == "ping":
        answer({})
    elif method == "tools/list":
        answer({"tools": difftools.TOOLS})
    elif method == "tools/call":
        if not isinstance(params, dict):
            answer(error={"code": -32602, "message": "params must be an object"})
            return
        name = params.get("name")
        if name not in difftools.TOOL_NAMES:
            answer(error={"code": -32602, "message": f"unknown tool {name!r}"})
            return
        answer(difftools.execute(STACK, name, params.get("arguments"), text))
    elif isinstance(method, str) and method.startswith("notifications/"):
        pass
    else:
        answer(error={"code": -32601, "message": f"method not found: {method!r}"})


def main() -> None:
    for line in difftools.lines():
        try:
            handle(line)
        except Exception as e:  # keep serving; a crash would hide later executions
            difftools.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": repr(e)}})


if __name__ == "__main__":
    main()
