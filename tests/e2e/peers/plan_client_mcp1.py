"""A Python mcp 1.x stdio client that runs a plan, as tests/e2e/ts/client.mjs does for the TypeScript
SDK, so a test in another venv can drive an mcp 1.x client as a process of its own.

Usage: tests/.peers/venv1/bin/python plan_client_mcp1.py '<json plan>'
  plan = {"stdio": {"command": "...", "args": [...]},
          "calls": [{"name": "count", "arguments": {...}} | {"signal": "label"} | {"await": true}]}
Prints {"signal": label} lines, then one JSON object: {"results": [CallToolResult as JSON | {"thrown": msg}]}.
Exits 0 when the plan ran (tool errors are results), 1 when connecting failed, 3 after 45 s.
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client


async def run(plan: dict) -> dict:
    params = StdioServerParameters(command=plan["stdio"]["command"], args=plan["stdio"].get("args", []),
                                   env=get_default_environment())
    results: list[dict] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for step in plan.get("calls", []):
            if "signal" in step:
                print(json.dumps({"signal": step["signal"]}), flush=True)
            elif step.get("await"):
                await anyio.to_thread.run_sync(sys.stdin.readline)
            else:
                try:
                    result = await session.call_tool(step["name"], step.get("arguments", {}))
                    results.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                except Exception as e:  # what the client saw, reported rather than raised
                    results.append({"thrown": str(e)})
    return {"results": results}


async def bounded(plan: dict) -> dict:
    with anyio.fail_after(45):
        return await run(plan)


def main() -> int:
    plan = json.loads(sys.argv[1])
    try:
        out = anyio.run(bounded, plan)
    except TimeoutError:
        print("plan_client_mcp1.py: gave up after 45 s", file=sys.stderr)
        return 3
    except Exception as e:
        print(f"plan_client_mcp1.py: {e!r}", file=sys.stderr)
        return 1
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
