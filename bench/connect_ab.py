"""The `portcullis connect` path only, several builds side by side: direct stdio, the naive line
relay, and `connect` through each gateway given, in one run, alternating the order every round —
for measuring a change to the path on a shared, noisy machine, where only figures taken in the
same minutes compare.

    tests/.peers/venv1/bin/python bench/connect_ab.py --loadgen PATH \
        --gateway before=/tmp/portcullis-before --gateway after=target/release/portcullis \
        [--gateway one-worker=target/release/portcullis:TOKIO_WORKER_THREADS=1] [--rounds 6] [--json OUT] \
        [--byte-relay PATH]

Each `--gateway NAME=BIN[:KEY=VALUE,...]` runs its own `portcullis serve` (with that environment)
and its own `connect`, with the policy of `bench/e2e.py`; every path calls `echo` on
server-everything, from the Python mcp 1.x client and from loadgen (raw newline JSON-RPC). Per
path: p50 and p99 over the pooled samples, calls/s, and for the gateway paths the gateway's CPU
per call (utime + stime of its process) and its context switches per call (voluntary +
involuntary, summed over its threads from /proc/PID/task/*/status) — the thread hops a call
costs. The same binary may be given twice (an A/A run shows the noise). `--clients http` adds
each gateway's Streamable HTTP endpoint driven by loadgen, sequential and 8 calls in flight, as a
regression check of the other front door (no direct baseline there).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402  (start_gateway, loadgen, mcp_stdio, Path_, pct, cpu_seconds)


def context_switches(pid: int) -> int:
    """Voluntary + involuntary context switches of every thread of `pid` still alive."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        for line in text.splitlines():
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                total += int(line.split()[1])
    return total


class Measured(e2e.Path_):
    """A path's samples, plus the gateway's context switches over its runs."""

    def __init__(self, name: str):
        super().__init__(name)
        self.switches = 0

    def row(self) -> dict:
        row = super().row()
        row["switches_per_call"] = self.switches / self.calls if self.switches else None
        return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gateway", action="append", required=True, metavar="NAME=BIN[:KEY=VALUE,...]")
    ap.add_argument("--loadgen", type=Path, required=True)
    ap.add_argument("--byte-relay", type=Path,
                    help="crates/gate/benches/byte_relay.rs built (cargo bench --no-run): adds the Rust byte "
                         "relay, the floor of a compiled proxy process, beside the Python line relay")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--mcp-calls", type=int, default=150, help="Python mcp client calls per round and path")
    ap.add_argument("--raw-calls", type=int, default=1000, help="loadgen calls per round and path")
    ap.add_argument("--clients", default="python,raw", help="comma-separated: python, raw, http")
    ap.add_argument("--http-calls", type=int, default=1000,
                    help="loadgen calls per round and path over HTTP (sequential; ×4 with 8 in flight)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    info = e2e.machine()
    print(f"machine: {info['nproc']} cores, load {' '.join(info['loadavg_start'])}; {args.rounds} rounds, alternating")
    builds = {}
    for spec in args.gateway:
        name, rest = spec.split("=", 1)
        bin_path, _, env = rest.partition(":")
        builds[name] = (Path(bin_path), dict(kv.split("=", 1) for kv in env.split(",") if kv))
        print(f"  {name} = {bin_path} {builds[name][1] or ''}")
    everything = [str(e2e.EVERYTHING), "stdio"]
    naive = [sys.executable, str(e2e.ROOT / "bench/naive_relay.py"), "node", *everything]
    policy = {"version": "1", "default": "deny", "tools": {"echo": {}, "get-sum": {"action": "require_approval"}}}
    with tempfile.TemporaryDirectory(prefix="portcullis-ab-") as tmp_name:
        tmp = Path(tmp_name)
        gateways = {}
        try:
            for label, (bin_path, env) in builds.items():
                gw, gwf = e2e.start_gateway(bin_path, tmp / label, {"everything": {"command": "node", "args": everything}},
                                          {"everything": policy}, env)
                connect = [str(bin_path), "connect", "everything", "--data-dir", str(tmp / label / "data")]
                gateways[label] = (gw, connect, gwf)
            paths: dict[str, Measured] = {}
            steps = {}

            def add(name, fn):
                paths[name] = Measured(name)
                steps[name] = fn

            def gateway_step(name, label, run):
                gw = gateways[label][0]

                def step():
                    c0, s0 = e2e.cpu_seconds(gw.pid), context_switches(gw.pid)
                    result = run()
                    cpu, switches = e2e.cpu_seconds(gw.pid) - c0, context_switches(gw.pid) - s0
                    if isinstance(result, dict):
                        paths[name].add(result, cpu)
                    else:
                        paths[name].add_samples(result)
                        paths[name].cpu_s += cpu
                    paths[name].switches += switches
                return step

            add("python: direct", lambda: paths["python: direct"].add_samples(
                asyncio.run(e2e.mcp_stdio("node", everything, args.mcp_calls))))
            add("python: naive relay", lambda: paths["python: naive relay"].add_samples(
                asyncio.run(e2e.mcp_stdio(naive[0], naive[1:], args.mcp_calls))))
            if args.byte_relay:
                add("python: byte relay (Rust)", lambda: paths["python: byte relay (Rust)"].add_samples(
                    asyncio.run(e2e.mcp_stdio(str(args.byte_relay), ["--", "node", *everything], args.mcp_calls))))
            for label in builds:
                connect = gateways[label][1]
                name = f"python: connect {label}"
                add(name, gateway_step(name, label, lambda c=connect: asyncio.run(e2e.mcp_stdio(c[0], c[1:], args.mcp_calls))))
            add("raw: direct", lambda: paths["raw: direct"].add(
                e2e.loadgen(args.loadgen, "stdio", "--calls", str(args.raw_calls), "--", "node", *everything)))
            add("raw: naive relay", lambda: paths["raw: naive relay"].add(
                e2e.loadgen(args.loadgen, "stdio", "--calls", str(args.raw_calls), "--", *naive)))
            if args.byte_relay:
                add("raw: byte relay (Rust)", lambda: paths["raw: byte relay (Rust)"].add(
                    e2e.loadgen(args.loadgen, "stdio", "--calls", str(args.raw_calls), "--", str(args.byte_relay),
                                "--", "node", *everything)))
            for label in builds:
                connect = gateways[label][1]
                name = f"raw: connect {label}"
                add(name, gateway_step(name, label, lambda c=connect: e2e.loadgen(
                    args.loadgen, "stdio", "--calls", str(args.raw_calls), "--", *c)))

            # The gateway's other front door, as a regression check: loadgen over Streamable HTTP,
            # one session, sequential and 8 calls in flight (no direct or relay baseline there).
            for label in builds:
                gwf = gateways[label][2]
                http = [gwf["url"] + "/mcp/everything", "--token", gwf["token"]]
                for name, extra in ((f"http: seq {label}", ["--calls", str(args.http_calls)]),
                                    (f"http: 8 in flight {label}", ["--calls", str(args.http_calls * 4),
                                                                    "--concurrency", "8"])):
                    add(name, gateway_step(name, label, lambda h=http, x=extra: e2e.loadgen(
                        args.loadgen, "http", *h, *x)))

            clients = args.clients.split(",")
            chosen = [name for name in steps if name.split(":")[0] in clients]
            for r, order in enumerate(e2e.alternate(args.rounds, chosen)):
                t = time.monotonic()
                for name in order:
                    steps[name]()
                print(f"  round {r + 1}/{args.rounds} done in {time.monotonic() - t:.1f} s", file=sys.stderr)
        finally:
            for gw, _, _ in gateways.values():
                gw.stop()

    results = {"machine": {**info, "loadavg_end": Path("/proc/loadavg").read_text().split()[:3]},
               "rounds": args.rounds, "gateways": {k: [str(b), e] for k, (b, e) in builds.items()},
               "paths": {name: p.row() for name, p in paths.items() if p.calls}}
    for client in clients:
        base = paths[f"{client}: direct"].row() if f"{client}: direct" in paths else None
        print(f"\n{client} client, echo, sequential")
        print(f"  {'path':<28} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>8} {'CPU µs/call':>11} "
              f"{'cs/call':>7}  vs direct p50")
        for name, p in paths.items():
            if not name.startswith(client):
                continue
            row = p.row()
            cpu = f"{row['cpu_us_per_call']:.0f}" if row["cpu_us_per_call"] else "-"
            cs = f"{row['switches_per_call']:.1f}" if row["switches_per_call"] else "-"
            ratio = (f"{row['p50_us'] / base['p50_us']:.2f}x (+{(row['p50_us'] - base['p50_us']) / 1e3:.3f} ms)"
                     if base else "-")
            print(f"  {name:<28} {row['calls']:>6} {row['p50_us'] / 1e3:8.3f} {row['p99_us'] / 1e3:8.3f} "
                  f"{row['calls_per_s']:8.0f} {cpu:>11} {cs:>7}  {ratio}")
    print(f"\nload at the end: {' '.join(results['machine']['loadavg_end'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
