"""A minimal stdio MCP server on plain Python `json.loads` (dict semantics: the last duplicate key wins).

Reads the way a hand-written Python server does: `msg.get("method")`, `msg.get("params")`,
`params.get("name")`, `params.get("arguments")`; a message with a `method` is handled whatever its
`jsonrpc` or `id`, and answered when it has an `id` member (any value). A tools/call is executed
whether or not it carries an id. See difftools.py for the line reading (`request`) and the execution log.
"""

from __future__ import annotations

import difftools

STACK = "python-json"


def handle(line: bytes) -> None:
    text = line.decode("utf-8", "surrogatepass")
    read = difftools.request(text)
    if read is None:
        return  # a parse error (answered) or a response or junk: nothing to execute
    msg, answer = read
    method = msg.get("method")
    params = msg.get("params")
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


if __name__ == "__main__":
    difftools.serve(handle)
