"""A minimal stdio MCP server on the PyPI `json-rpc` library (1.15.0): JSONRPCResponseManager with a
Dispatcher holding `initialize`, `notifications/initialized`, `ping`, `tools/list` and `tools/call`.

The library reads the line with `json.loads` (last duplicate wins), takes a message without
`jsonrpc` as JSON-RPC 1.0, passes `params` as keyword arguments (object) or positional ones (array),
runs requests with `"id": null`, and runs a message without `id` as a notification (executed, not
answered). Whatever it dispatches to `tools/call` is executed and logged (difftools.py).
"""

from __future__ import annotations

from jsonrpc import Dispatcher, JSONRPCResponseManager
from jsonrpc.exceptions import JSONRPCDispatchException

import difftools

STACK = "json-rpc"
current_line = ""
dispatcher = Dispatcher()


def initialize(**params):
    return difftools.initialize_result(params, STACK)


def initialized(**_params):
    return None


def ping(**_params):
    return {}


def tools_list(**_params):
    return {"tools": difftools.TOOLS}


def tools_call(name=None, arguments=None, *_rest, **_extra):
    if name not in difftools.TOOL_NAMES:
        raise JSONRPCDispatchException(code=-32602, message=f"unknown tool {name!r}")
    return difftools.execute(STACK, name, arguments, current_line)


dispatcher.add_method(initialize, name="initialize")
dispatcher.add_method(initialized, name="notifications/initialized")
dispatcher.add_method(initialized, name="notifications/cancelled")
dispatcher.add_method(ping, name="ping")
dispatcher.add_method(tools_list, name="tools/list")
dispatcher.add_method(tools_call, name="tools/call")


def main() -> None:
    global current_line
    for line in difftools.lines():
        current_line = line.decode("utf-8", "replace")
        try:
            response = JSONRPCResponseManager.handle(line, dispatcher)
        except Exception as e:  # keep serving
            difftools.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": repr(e)}})
            continue
        if response is not None:
            print(response.json, flush=True)


if __name__ == "__main__":
    main()
