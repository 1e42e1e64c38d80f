"""Where the gateway's CPU goes per allowed `echo` call: `perf record` (cpu-clock, DWARF call
graphs) on `portcullis serve` while loadgen drives it, then every sample of a gateway thread is
put in one bucket by its stack (first rule that matches, see BUCKETS) and the buckets are printed
as µs of CPU per call. Also the hottest leaf functions.

Hardware counters are not available in this VM (`perf stat -e instructions` says "not
supported"), so the software cpu-clock event samples at 999 Hz; a 6 s window holds a few
thousand samples, enough for buckets of a few percent. `--no-inherit` keeps the server-everything
children out; `perf script --no-inline` because resolving inlined frames takes minutes.

Usage (scripts/bench.sh --profile runs it):
  tests/.peers/venv1/bin/python bench/profile.py --loadgen PATH [--bin target/release/portcullis] [--out DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402  (start_gateway, EVERYTHING, loadgen)

# (bucket, predicate over (comm, frames leaf-first)). First match wins.
BUCKETS = [
    ("audit writer thread: SQLite write + WAL (incl. kernel write/fsync)", lambda c, f: c.startswith("portcullis-aud")),
    ("tokio idle/park: epoll_wait, futex, timers", lambda c, f: any("park_internal" in x or "park_timeout" in x for x in f)
     and not any("poll" in x and "portcullis" in x for x in f)),
    ("upstream child stdio: read/parse lines, write requests", lambda c, f: any("upstream::child_process" in x or "correlator" in x for x in f)),
    ("gate: policy, rate limit, digest, audit row + await commit", lambda c, f: any("portcullis_gate::gate::" in x for x in f)),
    ("session routing, reply (JSON/SSE), response parse", lambda c, f: any("portcullis_gate::session" in x or "portcullis_wire" in x for x in f)),
    ("local socket connection: read, dispatch, write", lambda c, f: any("portcullis_gate::local_conn" in x for x in f)),
    ("HTTP server: hyper parse/encode, socket read/write", lambda c, f: any("hyper::" in x or "axum::" in x for x in f)),
    ("tokio scheduler, wakeups, task spawn", lambda c, f: any("tokio::runtime" in x for x in f)),
    ("other", lambda c, f: True),
]


def parse_script(text: str):
    """Yields (comm, frames leaf-first) per sample of `perf script -F comm,ip,sym` output."""
    for block in text.split("\n\n"):
        lines = [l.strip() for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        comm = lines[0].split()[0]
        frames = [l.split(None, 1)[1] if " " in l else l for l in lines[1:]]
        yield comm, frames


def profile(bin_path: Path, loadgen: Path, out: Path, mode: str, calls: int, seconds: float) -> dict:
    """`mode`: "sequential" or "8-in-flight" over HTTP, or "socket" (sequential through
    `portcullis connect` and the local socket, loadgen speaking stdio to it)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="portcullis-prof-") as tmp_name:
        tmp = Path(tmp_name)
        policy = {"version": "1", "default": "deny", "tools": {"echo": {}}}
        gw, gwf = e2e.start_gateway(bin_path, tmp, {"everything": {"command": "node", "args": [str(e2e.EVERYTHING), "stdio"]}},
                                    {"everything": policy})
        try:
            url = gwf["url"] + "/mcp/everything"
            connect = [str(bin_path), "connect", "everything", "--data-dir", str(tmp / "data")]
            e2e.loadgen(loadgen, "http", url, "--token", gwf["token"], "--calls", "500")  # warm
            data = out / f"perf-{mode}.data"
            rec = subprocess.Popen(["perf", "record", "-F", "999", "-e", "cpu-clock", "--call-graph", "dwarf,16384",
                                    "--no-inherit", "-p", str(gw.pid), "-o", str(data), "--", "sleep", str(seconds)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            if mode == "socket":
                r = e2e.loadgen(loadgen, "stdio", "--calls", str(calls), "--", *connect)
            elif mode == "sequential":
                r = e2e.loadgen(loadgen, "http", url, "--token", gwf["token"], "--calls", str(calls))
            else:
                r = e2e.loadgen(loadgen, "http", url, "--token", gwf["token"], "--calls", str(calls), "--concurrency", "8")
            rec.wait(timeout=seconds + 60)
        finally:
            gw.stop()
    script = subprocess.run(["perf", "script", "--no-inline", "-i", str(data), "-F", "comm,ip,sym"],
                            capture_output=True, text=True).stdout
    buckets = collections.Counter()
    leaves = collections.Counter()
    total = gateway = 0
    for comm, frames in parse_script(script):
        total += 1
        if comm in ("node",) or not frames:
            continue
        gateway += 1
        for name, pred in BUCKETS:
            if pred(comm, frames):
                buckets[name] += 1
                break
        leaves[frames[0]] += 1
    # Samples at 999 Hz: each is ~1 ms of CPU; the calls ran inside the window.
    per_sample_us = 1e6 / 999
    calls_done = r["calls"]
    result = {
        "mode": mode, "calls": calls_done, "calls_per_s": r["calls_per_s"], "p50_us": r["p50_us"],
        "samples_total": total, "samples_gateway": gateway,
        "gateway_cpu_us_per_call": gateway * per_sample_us / calls_done,
        "buckets_us_per_call": {k: v * per_sample_us / calls_done for k, v in buckets.most_common()},
        "buckets_share": {k: v / gateway for k, v in buckets.most_common()},
        "top_leaf_functions": [(f[:120], n / gateway) for f, n in leaves.most_common(15)],
    }
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", type=Path, default=e2e.ROOT / "target/release/portcullis")
    ap.add_argument("--loadgen", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=e2e.ROOT / "target/bench/profile")
    ap.add_argument("--modes", default="sequential,8-in-flight,socket",
                    help="comma-separated: sequential, 8-in-flight (HTTP), socket (portcullis connect)")
    args = ap.parse_args()
    probe = subprocess.run(["perf", "record", "-e", "cpu-clock", "-o", "/dev/null", "true"], capture_output=True)
    if probe.returncode != 0:
        sys.exit("perf record does not work here; install linux-perf (apt-get install linux-perf)")
    results = []
    calls_for = {"sequential": 4000, "8-in-flight": 12000, "socket": 4000}
    for mode in args.modes.split(","):
        res = profile(args.bin, args.loadgen, args.out, mode, calls_for[mode], seconds=6)
        results.append(res)
        transport = "local socket via portcullis connect" if mode == "socket" else "HTTP"
        print(f"\ngateway CPU per allowed echo call, {mode} ({transport}, one session; {res['calls']} calls, "
              f"{res['calls_per_s']:.0f} calls/s, {res['samples_gateway']} gateway samples)")
        print(f"  total {res['gateway_cpu_us_per_call']:.0f} µs/call")
        for name, us in res["buckets_us_per_call"].items():
            print(f"  {us:7.1f} µs  {res['buckets_share'][name] * 100:5.1f}%  {name}")
        print("  hottest leaf functions (share of gateway samples):")
        for f, share in res["top_leaf_functions"][:10]:
            print(f"    {share * 100:5.1f}%  {f}")
    (args.out / "profile.json").write_text(json.dumps(results, indent=2))
    print(f"\nperf data and profile.json in {args.out}")


if __name__ == "__main__":
    main()
