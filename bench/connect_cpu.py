"""CPU per allowed call on the `portcullis connect` path, by process, for several builds in one run.

    tests/.peers/venv1/bin/python bench/connect_cpu.py --server-bin target/debug/rmcp-peer \
        --gateway before=/tmp/portcullis-before --gateway after=target/ci/portcullis [--calls 5000] [--rounds 3]

A build named `direct=direct` is the baseline: the client launches the server itself (its
"connect µs" is then the server's own CPU). For each other build: a keeper (`portcullis serve`) with the policy of `bench/e2e.py` (echo allowed), and
a raw newline JSON-RPC client that launches `portcullis connect tables` and calls `echo` on the
rmcp server (tests/rmcp-peer, a Rust server that costs little) N times back to back. Measured from
/proc while the client's connection is still open: utime + stime of the `connect` process and of
the keeper, divided by the calls (the server's own CPU is not counted). Before issue 31 a call
crossed `connect` (a relay) and the keeper (the gate); after it, `connect` is the gate and the
keeper does nothing for an allowed call. Rounds alternate the builds' order; the figures are the
median over rounds. Also: p50 and p99 of the client's round trip.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402  (start_gateway, cpu_seconds)

POLICY = {"version": "1", "default": "deny", "tools": {"echo": {}}}


def one_run(bin_path: Path, server_bin: Path, tmp: Path, calls: int) -> dict:
    """`bin_path` "direct": the client launches the server itself (the baseline; no keeper)."""
    direct = str(bin_path) == "direct"
    servers = {"tables": {"command": str(server_bin), "args": ["server"], "env": {}}}
    gw = None if direct else e2e.start_gateway(bin_path, tmp, servers, {"tables": POLICY})[0]
    keeper_pid = gw.p.pid if gw else os.getpid()
    argv = [str(server_bin), "server"] if direct else [
        str(bin_path), "connect", "tables", "--config", str(tmp / "portcullis.json"), "--data-dir", str(tmp / "data")]
    try:
        connect = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PORTCULLIS_LOG": "warn"})

        def ask(rid: int, method: str, params: dict) -> dict:
            connect.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode())
            connect.stdin.flush()
            return json.loads(connect.stdout.readline())

        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cpu-bench", "version": "1"}}
        assert "result" in ask(0, "initialize", init)
        connect.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for i in range(50):  # warm-up: the server started, the audit's files open
            ask(1_000_000 + i, "tools/call", {"name": "echo", "arguments": {"message": "w"}})
        c0, k0 = e2e.cpu_seconds(connect.pid), (e2e.cpu_seconds(keeper_pid) if gw else 0.0)
        lat = []
        for i in range(calls):
            t = time.perf_counter()
            answer = ask(i + 1, "tools/call", {"name": "echo", "arguments": {"message": f"m{i}"}})
            lat.append(time.perf_counter() - t)
            assert "result" in answer and not answer["result"].get("isError"), answer
        c1, k1 = e2e.cpu_seconds(connect.pid), (e2e.cpu_seconds(keeper_pid) if gw else 0.0)
        connect.stdin.close()
        connect.wait(timeout=30)
    finally:
        if gw:
            gw.stop()
    lat.sort()
    return {
        "connect_us": (c1 - c0) / calls * 1e6,
        "keeper_us": (k1 - k0) / calls * 1e6,
        "p50_ms": lat[len(lat) // 2] * 1e3,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateway", action="append", required=True, help="NAME=BIN")
    ap.add_argument("--server-bin", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    builds = [tuple(g.split("=", 1)) for g in args.gateway]
    runs: dict[str, list[dict]] = {name: [] for name, _ in builds}
    with tempfile.TemporaryDirectory(prefix="connect-cpu-") as tmp:
        for rnd in range(args.rounds):
            order = builds if rnd % 2 == 0 else list(reversed(builds))
            for name, path in order:
                runs[name].append(one_run(Path(path), args.server_bin, Path(tmp) / f"{name}-{rnd}", args.calls))
    rows = {}
    print(f"{'build':<10} {'connect µs/call':>16} {'keeper µs/call':>15} {'total':>7} {'p50 ms':>7} {'p99 ms':>7}")
    for name, _ in builds:
        med = {k: statistics.median(r[k] for r in runs[name]) for k in runs[name][0]}
        rows[name] = med
        total = med["connect_us"] + med["keeper_us"]
        print(f"{name:<10} {med['connect_us']:>16.1f} {med['keeper_us']:>15.1f} {total:>7.1f} "
              f"{med['p50_ms']:>7.3f} {med['p99_ms']:>7.3f}")
    if args.json:
        args.json.write_text(json.dumps({"calls": args.calls, "rounds": args.rounds, "builds": rows}, indent=2))


if __name__ == "__main__":
    main()
