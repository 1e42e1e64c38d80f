"""Allowed `echo` calls: direct vs through Portcullis, in one run, alternating.

Measures sequential call latency with the Python `mcp` 1.x client against server-everything:
  direct-stdio      client launches the server itself
  portcullis-stdio  client launches `portcullis connect everything` (relay → gateway → child)
  portcullis-http   client speaks Streamable HTTP to the gateway

Usage (after scripts/test-peers.sh and cargo build):
  tests/.peers/venv1/bin/python bench/echo_latency.py [--calls 500] [--rounds 4]
Prints p50 / p99 / calls per second per path and the ratios to direct.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
BIN = Path(os.environ.get("PORTCULLIS_BIN", ROOT / "target/debug/portcullis"))


def start_gateway(tmp: Path):
    (tmp / "policies").mkdir()
    (tmp / "policies/everything.json").write_text(json.dumps({"version": "1", "default": "deny", "tools": {"echo": {}}}))
    config = {"listen": "127.0.0.1:0", "mcpServers": {"everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]}}}
    (tmp / "portcullis.json").write_text(json.dumps(config))
    proc = subprocess.Popen(
        [str(BIN), "serve", "--config", str(tmp / "portcullis.json"), "--data-dir", str(tmp / "data")],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PORTCULLIS_LOG": "warn"},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "ready" in line:
            break
        if not line and proc.poll() is not None:
            sys.exit("gateway exited before it was ready")
    else:
        sys.exit("gateway not ready within 30 s")
    return proc, json.loads((tmp / "data/gateway.json").read_text())


async def timed_calls(session: ClientSession, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        result = await session.call_tool("echo", {"message": f"m{i}"})
        out.append(time.perf_counter() - t0)
        assert not result.isError, result
    return out


async def run_stdio(params: StdioServerParameters, n: int) -> list[float]:
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        await timed_calls(s, 20)  # warm-up
        return await timed_calls(s, n)


async def run_http(url: str, token: str, n: int) -> list[float]:
    async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (r, w, _), ClientSession(r, w) as s:
        await s.initialize()
        await timed_calls(s, 20)
        return await timed_calls(s, n)


def summary(samples: list[float]) -> dict:
    samples = sorted(samples)
    p = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    return {"p50_ms": p(0.5) * 1e3, "p99_ms": p(0.99) * 1e3, "calls_per_s": len(samples) / sum(samples)}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        proc, gw = start_gateway(tmp)
        try:
            paths = {
                "direct-stdio": lambda: run_stdio(StdioServerParameters(command="node", args=[str(EVERYTHING), "stdio"]), args.calls),
                "portcullis-stdio": lambda: run_stdio(
                    StdioServerParameters(command=str(BIN), args=["connect", "everything", "--data-dir", str(tmp / "data")]), args.calls),
                "portcullis-http": lambda: run_http(gw["url"] + "/mcp/everything", gw["token"], args.calls),
            }
            samples = {name: [] for name in paths}
            for _ in range(args.rounds):  # alternate so drift hits every path alike
                for name, run in paths.items():
                    samples[name] += await run()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    base = summary(samples["direct-stdio"])
    print(f"{'path':<18} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>9} {'p50 ratio':>10}")
    for name, s in samples.items():
        row = summary(s)
        print(f"{name:<18} {row['p50_ms']:8.3f} {row['p99_ms']:8.3f} {row['calls_per_s']:9.0f} {row['p50_ms'] / base['p50_ms']:9.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
