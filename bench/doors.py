"""What deciding another door costs (issue 32): `resources/read` and `prompts/get` on
server-everything through `portcullis connect`, beside the same through a direct stdio connection,
with `tools/call echo` in the same rounds for comparison — the Python mcp 1.x client, alternating
the order every round, so only figures taken in the same minutes are compared.

    tests/.peers/venv1/bin/python bench/doors.py [--bin target/release/portcullis] [--rounds 4] [--calls 300]

Each decided read and fetch writes its audit row (committed before it is forwarded), as a tool call
does; the policy allows all three by an explicit entry.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402  (start_gateway, Path_, alternate, EVERYTHING)

URI = "demo://resource/dynamic/text/1"
POLICY = {
    "version": "1",
    "default": "deny",
    "tools": {"echo": {}},
    "resources": {"demo://resource/dynamic/*": {}},
    "prompts": {"simple-prompt": {}},
    "server_requests": {"roots": {}},
}
KINDS = ["tools/call echo", "resources/read", "prompts/get"]


async def timed(command: str, args: list[str], n: int) -> dict[str, list[float]]:
    """`n` of each kind, interleaved, after a warm-up; µs per request."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out: dict[str, list[float]] = {k: [] for k in KINDS}
    requests = {
        "tools/call echo": lambda s, i: s.call_tool("echo", {"message": f"m{i}"}),
        "resources/read": lambda s, i: s.read_resource(URI),
        "prompts/get": lambda s, i: s.get_prompt("simple-prompt"),
    }
    with open(os.devnull, "w") as devnull:
        params = StdioServerParameters(command=command, args=args)
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for i in range(20):
                for kind in KINDS:
                    await requests[kind](s, i)
            for i in range(n):
                for kind in KINDS:
                    t0 = time.perf_counter()
                    await requests[kind](s, i)
                    out[kind].append((time.perf_counter() - t0) * 1e6)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=Path, default=Path("target/release/portcullis"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    everything = {"command": "node", "args": [str(e2e.EVERYTHING), "stdio"]}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        keeper, _ = e2e.start_gateway(args.bin, tmp / "gw", {"everything": everything}, {"everything": POLICY})
        try:
            direct = [everything["command"], everything["args"]]
            connect = [str(args.bin), ["connect", "everything", "--data-dir", str(tmp / "gw/data")]]
            paths = {name: {k: e2e.Path_(f"{name}: {k}") for k in KINDS} for name in ("direct", "connect")}
            for order in e2e.alternate(args.rounds, ["direct", "connect"]):
                for name in order:
                    command, cargs = direct if name == "direct" else connect
                    got = asyncio.run(timed(command, list(cargs), args.calls))
                    for kind, samples in got.items():
                        paths[name][kind].add_samples(samples)
        finally:
            keeper.stop()
    print(f"\n{args.rounds} rounds x {args.calls} of each kind, Python mcp 1.x client, server-everything stdio")
    for kind in KINDS:
        d, c = paths["direct"][kind].row(), paths["connect"][kind].row()
        print(f"  {kind:<18} direct p50 {d['p50_us'] / 1e3:.3f} ms, connect {c['p50_us'] / 1e3:.3f} ms: "
              f"added {(c['p50_us'] - d['p50_us']) / 1e3:+.3f} ms ({c['p50_us'] / d['p50_us']:.2f}x); "
              f"p99 {d['p99_us'] / 1e3:.2f} / {c['p99_us'] / 1e3:.2f} ms")


if __name__ == "__main__":
    main()
