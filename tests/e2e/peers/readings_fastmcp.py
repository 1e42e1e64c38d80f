"""FastMCP (mcp 1.x; MCPServer under mcp 2.x) stdio server that logs what each tool received after the
SDK's conversions.

Used by tests/e2e/mcp1/test_readings_mcp1.py (the semantic layer of tests/differential, see its
README). The tools take typed parameters, so FastMCP pre-parses JSON held in strings and pydantic
converts leniently (the string "500" becomes the int 500, "yes" the bool True); each tool appends
one JSON line with the typed values it runs with to $READINGS_LOG (fsynced before answering), so the
test reads what ran, not what was sent.

Usage: readings_fastmcp.py ROOT   (relative paths resolve against ROOT, as a filesystem server's
allowed directory; `~` expands against $HOME)
"""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x (venv2)
    STACK = "mcpserver2"
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1.x (venv1)
    STACK = "fastmcp"

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
LOG = Path(os.environ["READINGS_LOG"])
mcp = Server("readings-fastmcp")


class Opts(BaseModel):
    force: bool = False
    count: int = 0


def record(tool: str, marker: str, value: dict[str, Any]) -> str:
    line = json.dumps({"stack": STACK, "tool": tool, "marker": marker, "value": value})
    with LOG.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    return line


@mcp.tool()
def spend(count: int, marker: str = "") -> str:
    """Spend `count` credits."""
    return record("spend", marker, {"count": count})


@mcp.tool()
def cap(count: int, marker: str = "") -> str:
    """Spend `count` credits (allowed only up to a cap)."""
    return record("cap", marker, {"count": count})


@mcp.tool()
def spend_float(count: float, marker: str = "") -> str:
    """Spend `count` credits (fractions allowed)."""
    return record("spend_float", marker, {"count": count})


@mcp.tool()
def spend_decimal(count: Decimal, marker: str = "") -> str:
    """Spend `count` credits, counted exactly."""
    return record("spend_decimal", marker, {"count": float(count)})


@mcp.tool()
def spend_held(count: int, marker: str = "") -> str:
    """Spend `count` credits (a person approves large amounts)."""
    return record("spend_held", marker, {"count": count})


@mcp.tool()
def toggle(force: bool, marker: str = "") -> str:
    """Run, forcibly when `force`."""
    return record("toggle", marker, {"force": force})


@mcp.tool()
def configure(opts: Opts, marker: str = "") -> str:
    """Apply options."""
    return record("configure", marker, {"opts": opts.model_dump()})


@mcp.tool()
def vm(vm: int, marker: str = "") -> str:
    """Act on virtual machine `vm`."""
    return record("vm", marker, {"vm": vm})


@mcp.tool()
def open_path(path: str, marker: str = "") -> str:
    """Read a file; relative paths are under the server's root."""
    target = Path(os.path.expanduser(path))
    if not target.is_absolute():
        target = ROOT / target
    content = target.read_text(encoding="utf-8")  # raises (an isError result) when it cannot
    record("open_path", marker, {"opened": os.path.realpath(target)})
    return content


if __name__ == "__main__":
    mcp.run("stdio")
