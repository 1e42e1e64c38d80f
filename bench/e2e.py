"""End-to-end benchmark of Portcullis: direct vs through Portcullis vs through sparfenyuk mcp-proxy and
eqtylab mcp-guardian-proxy, all in one run, alternating.

Run it through `scripts/bench.sh` (which builds, installs the peers and mcp-proxy, and builds the
load client). By hand:

    tests/.peers/venv1/bin/python bench/e2e.py --bin target/release/portcullis \
        --loadgen PATH_TO_LOADGEN --mcp-proxy tests/.peers/mcp-proxy/bin/mcp-proxy \
        --byte-relay PATH_TO_BYTE_RELAY [--mcp-guardian PATH_TO_MCP_GUARDIAN_PROXY] [--smoke] [--json OUT]

Clients:
  * `loadgen` (crates/gate/benches/loadgen.rs): a one-thread Rust client — raw newline JSON-RPC
    over stdio, or HTTP/1.1 keep-alive with JSON or SSE answers. It is what measures throughput:
    the Python `mcp` client tops out at a few hundred calls/s by itself.
  * the Python `mcp` 1.x client (tests/.peers/venv1), the client of the issue's stdio target.

What is measured (every path against the same server-everything `echo` tool, allowed by policy):
  stdio latency     direct (client launches node) vs `portcullis connect everything`, p50 ratio;
                    with the Python mcp client and with loadgen; beside them the floor any proxy
                    process pays: a Python line relay (bench/naive_relay.py) and the cheapest
                    compiled one (crates/gate/benches/byte_relay.rs: copies bytes, nothing else);
                    and a peer, mcp-guardian-proxy (eqtylab, Rust: a one-hop stdio proxy that logs
                    every message; built from source by scripts/bench.sh) with its `log-only` guard
                    profile, the built-in one that lets every message through and logs it (its default,
                    `mcp-guardian.default`, is not a profile it ships: it exits "Guard profile not
                    found"), HOME pointed at a temp dir (it writes ~/.mcp-guardian/logs/).
  HTTP latency      Portcullis `/mcp/everything` vs mcp-proxy `/mcp`, one session, sequential calls.
  HTTP throughput   same two, one session, K calls in flight (loadgen); calls/s ratio.
  concurrency       50 sessions x 1,000 calls through Portcullis (each session its own child).
  approval          held call sent -> `ApprovalRequested` on GET /control/events (loadgen).
  memory            VmRSS of a fresh `portcullis serve` with 3 upstreams (everything, filesystem,
                    git), idle after one session to each was opened, used and closed.
IPIs per call (stdio rows): rescheduling and function-call interrupts over the timed calls (Python) or
the loadgen run, machine-wide, from /proc/interrupts: how many wake-ups crossed CPUs, each of which
costs ~20 µs of CPU on some VMs (BENCHMARKS.md, "What a wake-up costs on this VM").
Rounds alternate the order of the paths (A B, B A, ...) so drift on a shared machine hits all alike.
CPU per call is the proxy's own (never the server's), over the timed calls: the gateway (or mcp-proxy)
for HTTP; for stdio the process the client started (`connect`, plus the keeper; the relays; mcp-guardian),
read from /proc (sampled every 10 ms for loadgen's child, which is gone once loadgen reaps it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "tests/peers/node_modules/@modelcontextprotocol"
EVERYTHING = NODE_MODULES / "server-everything/dist/index.js"
FILESYSTEM = NODE_MODULES / "server-filesystem/dist/index.js"
MCP_SERVER_GIT = ROOT / "tests/.peers/venv1/bin/mcp-server-git"
TICK = os.sysconf("SC_CLK_TCK")

TARGETS = {
    "stdio_p50_ratio": 1.15,
    "http_calls_ratio": 4.0,
    "approval_p50_ms": 20.0,
    "idle_rss_mb": 20.0,
    "connect_over_relay_ms": 0.10,  # issue 31: connect's added p50 at most the byte relay's + 0.10 ms
}
GUARD_PROFILE = "mcp-guardian.log-only"


# ------------------------------------------------------------------------------------------------
# processes


class Proc:
    """A process we started; stopped by pid (SIGTERM, bounded wait, SIGKILL)."""

    def __init__(self, args, **kw):
        self.p = subprocess.Popen(args, **kw)

    @property
    def pid(self):
        return self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ipis() -> int:
    """Rescheduling and function-call interrupts so far, all CPUs: how this kernel wakes a task on
    another CPU, one per wake-up that crosses CPUs (machine-wide: anything else running counts too)."""
    total = 0
    for line in Path("/proc/interrupts").read_text().splitlines():
        parts = line.split()
        if parts and parts[0] in ("RES:", "CAL:"):
            total += sum(int(x) for x in parts[1:] if x.isdigit())
    return total


def children(pid: int) -> set[int]:
    """Pids of the live children of `pid` (by their parent pid: this kernel has no /proc/PID/task/*/children)."""
    out: set[int] = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.add(int(d.name))
            except (OSError, IndexError, ValueError):
                pass
    return out


class CpuProbe:
    """utime + stime over the timed calls (not the session's start) of `pids`, and with `child` also of
    the one process the Python client started for this session (the stdio proxy)."""

    def __init__(self, pids: tuple[int, ...] = (), child: bool = False):
        self.pids = list(pids)
        self.before = children(os.getpid()) if child else None
        self.cpu_s = 0.0
        self.ipis: int | None = None

    def start(self):
        if self.before is not None:
            new = children(os.getpid()) - self.before
            if len(new) != 1:
                raise RuntimeError(f"expected one new child (the proxy), found {sorted(new)}")
            self.pids.append(new.pop())
        self.c0 = sum(cpu_seconds(pid) for pid in self.pids)
        self.i0 = ipis()

    def stop(self):
        self.cpu_s = sum(cpu_seconds(pid) for pid in self.pids) - self.c0
        self.ipis = ipis() - self.i0


def loadgen_child_cpu(exe: Path, *args: str, timeout: float = 600) -> tuple[dict, float]:
    """`loadgen(...)` for stdio, plus the CPU its child (the proxy) spent over loadgen's timed calls.
    loadgen reaps its child as it exits, after which its CPU cannot be read: so the child's CPU is
    sampled every 10 ms (the kernel's CPU tick here is 10 ms anyway), and the calls' share is the last
    sample minus the one taken `elapsed_s` (loadgen's own figure for its calls) before it, which leaves
    out the child's start and `initialize`."""
    import threading
    proc = subprocess.Popen([str(exe), args[0], "--samples", *args[1:]], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def watch():
        pid = None
        while not done.is_set():
            try:
                if pid is None:
                    kids = children(proc.pid)
                    pid = min(kids) if kids else None
                if pid is not None:
                    samples.append((time.monotonic(), cpu_seconds(pid)))
            except (OSError, IndexError, ValueError):
                if pid is not None:
                    return  # the child is gone
            done.wait(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        done.set()
        watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(f"loadgen {' '.join(args[:2])} failed: {err.strip()}")
    r = json.loads(out.strip().splitlines()[-1])
    if not samples:
        return r, 0.0
    t_end, c_end = samples[-1]
    c_start = next((c for t, c in reversed(samples) if t <= t_end - r["elapsed_s"]), samples[0][1])
    return r, c_end - c_start


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def start_gateway(bin_path: Path, tmp: Path, servers: dict, policies: dict, env: dict | None = None) -> tuple[Proc, dict]:
    (tmp / "policies").mkdir(parents=True, exist_ok=True)
    for name, policy in policies.items():
        (tmp / "policies" / f"{name}.json").write_text(json.dumps(policy))
    config = {"listen": "127.0.0.1:0", "policies": "policies", "approval": {"timeout_secs": 30}, "mcpServers": servers}
    (tmp / "portcullis.json").write_text(json.dumps(config))
    log = open(tmp / "serve.log", "w")
    proc = Proc([str(bin_path), "serve", "--config", str(tmp / "portcullis.json"), "--data-dir", str(tmp / "data")],
                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                env={**os.environ, "PORTCULLIS_LOG": "warn", **(env or {})})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.p.stderr.readline()
        log.write(line)
        if "ready" in line:
            break
        if not line and proc.p.poll() is not None:
            sys.exit(f"gateway exited before it was ready (see {tmp}/serve.log)")
    else:
        proc.stop()
        sys.exit("gateway not ready within 30 s")
    # Keep draining stderr so the gateway never blocks on a full pipe.
    import threading

    def drain():
        for line in proc.p.stderr:
            log.write(line)
        log.close()

    threading.Thread(target=drain, daemon=True).start()
    return proc, json.loads((tmp / "data/gateway.json").read_text())


def start_mcp_proxy(mcp_proxy: Path, port: int) -> Proc:
    proc = Proc([str(mcp_proxy), "--port", str(port), "--host", "127.0.0.1", "--log-level", "WARNING",
                 "--", "node", str(EVERYTHING), "stdio"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.1)
    proc.stop()
    sys.exit("mcp-proxy did not listen within 30 s")


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------------
# clients


def loadgen(exe: Path, *args: str, timeout: float = 600) -> dict:
    out = subprocess.run([str(exe), args[0], "--samples", *args[1:]], capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"loadgen {' '.join(args[:2])} failed: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


async def mcp_stdio(command: str, args: list[str], n: int, probe: CpuProbe | None = None) -> list[float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=command, args=args)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await _timed_calls(s, n, probe)


async def mcp_http(url: str, headers: dict, n: int, probe: CpuProbe | None = None) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client
    async with streamablehttp_client(url, headers=headers) as (r, w, _), ClientSession(r, w) as s:
        await s.initialize()
        return await _timed_calls(s, n, probe)


async def _timed_calls(session, n: int, probe: CpuProbe | None = None) -> list[float]:
    for i in range(20):  # warm-up
        await session.call_tool("echo", {"message": f"w{i}"})
    if probe:
        probe.start()
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        result = await session.call_tool("echo", {"message": f"m{i}"})
        out.append((time.perf_counter() - t0) * 1e6)
        if result.isError:
            raise RuntimeError(f"echo failed: {result}")
    if probe:
        probe.stop()
    return out


# ------------------------------------------------------------------------------------------------
# statistics


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


class Path_:
    """Samples of one path, pooled over rounds."""

    def __init__(self, name: str):
        self.name = name
        self.lat_us: list[float] = []
        self.calls = 0
        self.elapsed = 0.0
        self.errors = 0
        self.cpu_s = 0.0
        self.round_rates: list[float] = []
        self.ipis: int | None = None  # over the calls counted in ipi_calls
        self.ipi_calls = 0

    def add_ipis(self, n: int | None, calls: int):
        if n is not None:
            self.ipis = (self.ipis or 0) + n
            self.ipi_calls += calls

    def add(self, r: dict, cpu_s: float = 0.0):
        self.lat_us += r["lat_us"]
        self.calls += r["calls"]
        self.elapsed += r["elapsed_s"]
        self.errors += r["errors"]
        self.cpu_s += cpu_s
        self.round_rates.append(r["calls_per_s"])
        if r["errors"]:
            print(f"  ! {self.name}: {r['errors']} errors, first: {r.get('first_error')}", file=sys.stderr)

    def add_samples(self, lat_us: list[float], cpu_s: float = 0.0):
        self.lat_us += lat_us
        self.cpu_s += cpu_s
        self.calls += len(lat_us)
        self.elapsed += sum(lat_us) / 1e6
        self.round_rates.append(len(lat_us) / (sum(lat_us) / 1e6))

    def row(self) -> dict:
        return {
            "calls": self.calls,
            "errors": self.errors,
            "p50_us": pct(self.lat_us, 0.5),
            "p99_us": pct(self.lat_us, 0.99),
            "calls_per_s": self.calls / self.elapsed if self.elapsed else float("nan"),
            "cpu_us_per_call": (self.cpu_s / self.calls * 1e6) if self.cpu_s else None,
            "ipis_per_call": (self.ipis / self.ipi_calls) if self.ipis is not None and self.ipi_calls else None,
        }


def print_table(title: str, paths: list[Path_], base: Path_, ratio: str):
    print(f"\n{title}")
    print(f"  {'path':<34} {'calls':>7} {'p50 ms':>8} {'p99 ms':>8} {'calls/s':>9} {'CPU µs/call':>11} "
          f"{'IPIs/call':>9}  ratio")
    b = base.row()
    for p in paths:
        r = p.row()
        if ratio == "p50":
            rat = (f"{r['p50_us'] / b['p50_us']:.2f}x p50, added p50 {(r['p50_us'] - b['p50_us']) / 1e3:+.3f} ms, "
                   f"p99 {(r['p99_us'] - b['p99_us']) / 1e3:+.3f} ms")
        else:
            rat = f"{r['calls_per_s'] / b['calls_per_s']:.2f}x calls/s"
        cpu = f"{r['cpu_us_per_call']:.0f}" if r["cpu_us_per_call"] else "-"
        ipi = f"{r['ipis_per_call']:.2f}" if r["ipis_per_call"] is not None else "-"
        print(f"  {p.name:<34} {r['calls']:>7} {r['p50_us'] / 1e3:8.3f} {r['p99_us'] / 1e3:8.3f} "
              f"{r['calls_per_s']:9.0f} {cpu:>11} {ipi:>9}  {rat}")


def alternate(rounds: int, items: list) -> list:
    """Round r runs the items forward when r is even, backward when odd."""
    order = []
    for r in range(rounds):
        order.append(items if r % 2 == 0 else list(reversed(items)))
    return order


# ------------------------------------------------------------------------------------------------
# main


def machine() -> dict:
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), "?")
    return {"nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "loadavg_start": Path("/proc/loadavg").read_text().split()[:3]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", type=Path, default=ROOT / "target/release/portcullis")
    ap.add_argument("--loadgen", type=Path, required=True)
    ap.add_argument("--mcp-proxy", type=Path, required=True)
    ap.add_argument("--byte-relay", type=Path, required=True,
                    help="crates/gate/benches/byte_relay.rs built: the cheapest compiled stdio proxy, the floor")
    ap.add_argument("--mcp-guardian", type=Path,
                    help="eqtylab mcp-guardian-proxy built (scripts/bench.sh builds it from source): the stdio peer "
                         "of `portcullis connect`; without it its rows are left out")
    ap.add_argument("--smoke", action="store_true", help="tiny run (seconds), for CI")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args()

    smoke = args.smoke
    rounds = args.rounds or (2 if smoke else 4)
    n_mcp = 30 if smoke else 300          # Python mcp client calls per round and path
    n_raw = 200 if smoke else 2000        # loadgen sequential calls per round and path
    n_tp_pc = 500 if smoke else 8000      # throughput calls per round, Portcullis
    n_tp_mp = 200 if smoke else 2000      # throughput calls per round, mcp-proxy (slower)
    in_flight = 8
    sessions, per_session = (5, 50) if smoke else (50, 1000)
    n_approvals = 5 if smoke else 100

    info = machine()
    print(f"machine: {info['nproc']} cores, {info['cpu']}, kernel {info['kernel']}, load {' '.join(info['loadavg_start'])}")
    print(f"mode: {'smoke' if smoke else 'full'}, {rounds} rounds, alternating")
    results: dict = {"machine": info, "mode": "smoke" if smoke else "full", "rounds": rounds}
    lg = args.loadgen
    guardian = args.mcp_guardian
    if guardian is None:
        print("mcp-guardian: rows left out (no --mcp-guardian PATH given; scripts/bench.sh builds it from "
              "MCP_GUARDIAN_SRC)")
    elif not os.access(guardian, os.X_OK):
        sys.exit(f"--mcp-guardian {guardian}: not an executable file")
    else:
        print(f"mcp-guardian: {guardian}, guard profile {GUARD_PROFILE}")

    with tempfile.TemporaryDirectory(prefix="portcullis-bench-") as tmp_name:
        tmp = Path(tmp_name)
        policy = {"version": "1", "default": "deny",
                  "tools": {"echo": {}, "get-sum": {"action": "require_approval"}}}
        gw, gwf = start_gateway(args.bin, tmp / "gw", {"everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]}},
                                {"everything": policy})
        mp_port = free_port()
        mp = start_mcp_proxy(args.mcp_proxy, mp_port)
        url_pc = gwf["url"] + "/mcp/everything"
        url_mp = f"http://127.0.0.1:{mp_port}/mcp"
        token = gwf["token"]
        connect = [str(args.bin), "connect", "everything", "--data-dir", str(tmp / "gw/data")]
        naive = [sys.executable, str(ROOT / "bench/naive_relay.py"), "node", str(EVERYTHING), "stdio"]
        relay = [str(args.byte_relay), "--", "node", str(EVERYTHING), "stdio"]
        # mcp-guardian writes $HOME/.mcp-guardian/logs/mcp-guardian-proxy.<name>.log (recreated at each
        # start) and creates the rest of $HOME/.mcp-guardian: a HOME of its own, through env (which execs,
        # so the client's child is mcp-guardian itself).
        mg_home = tmp / "mcp-guardian-home"
        mg_log = mg_home / ".mcp-guardian/logs/mcp-guardian-proxy.everything.log"
        mg_env = [f"HOME={mg_home}", f"XDG_CONFIG_HOME={mg_home}/.config", f"XDG_DATA_HOME={mg_home}/.local/share",
                  f"XDG_CACHE_HOME={mg_home}/.cache", f"XDG_STATE_HOME={mg_home}/.local/state"]
        mg = ["env", *mg_env, str(guardian), "--name", "everything", "--guard-profile", GUARD_PROFILE,
              "--", "node", str(EVERYTHING), "stdio"] if guardian else []
        mg_logs: list[dict] = []

        def mg_log_check(calls: int) -> None:
            """The log of the run that just ended: its size, and any line saying something failed (but the
            one it always ends with: on the end of its stdin it stops with "Error starting MCP server:
            Exited MCP Guardian Early.", exit status 0)."""
            text = mg_log.read_text(errors="replace") if mg_log.exists() else ""
            bad = [line for line in text.splitlines() if ("Error" in line or "Failed" in line)
                   and not line.endswith("Error starting MCP server: Exited MCP Guardian Early.")]
            mg_logs.append({"calls": calls, "bytes": len(text.encode()), "lines": text.count("\n"), "problems": len(bad)})
            if bad:
                print(f"  ! mcp-guardian logged {len(bad)} problem line(s), first: {bad[0][:300]}", file=sys.stderr)
        try:
            # -------- stdio and HTTP, alternating ------------------------------------------------
            p = {name: Path_(name) for name in [
                "stdio direct (python mcp)", "stdio portcullis (python mcp)",
                "stdio direct (loadgen)", "stdio portcullis (loadgen)",
                "stdio naive relay (python mcp)", "stdio naive relay (loadgen)",
                "stdio byte relay (python mcp)", "stdio byte relay (loadgen)",
                *(["stdio mcp-guardian (python mcp)", "stdio mcp-guardian (loadgen)"] if guardian else []),
                "http portcullis seq (loadgen)", "http mcp-proxy seq (loadgen)",
                f"http portcullis {in_flight} in flight", f"http mcp-proxy {in_flight} in flight",
                "http portcullis (python mcp)", "http mcp-proxy (python mcp)"]}

            def with_cpu(pid, fn):
                c0 = cpu_seconds(pid)
                r = fn()
                return r, cpu_seconds(pid) - c0

            def py_stdio(name: str, cmd: list[str], keeper: bool = False, proxy: bool = True):
                """The Python client through the stdio proxy `cmd`; CPU: that process (and the keeper).
                Without `proxy`, `cmd` is the server itself: no CPU is counted (never the server's)."""
                probe = CpuProbe((gw.pid,) if keeper else (), child=proxy)
                p[name].add_samples(asyncio.run(mcp_stdio(cmd[0], cmd[1:], n_mcp, probe)), probe.cpu_s)
                p[name].add_ipis(probe.ipis, n_mcp)

            def lg_stdio(name: str, cmd: list[str], keeper: bool = False):
                """loadgen through the stdio proxy `cmd`; CPU: that process over the calls (and the keeper's over
                the whole run: it does nothing for an allowed call, since `connect` is the gate)."""
                k0, i0 = cpu_seconds(gw.pid), ipis()
                r, cpu = loadgen_child_cpu(lg, "stdio", "--calls", str(n_raw), "--", *cmd)
                p[name].add(r, cpu + (cpu_seconds(gw.pid) - k0 if keeper else 0.0))
                p[name].add_ipis(ipis() - i0, r["calls"])

            def lg_direct():
                """loadgen launching the server itself: no proxy, so no proxy CPU (the child is the server)."""
                i0 = ipis()
                r = loadgen_child_cpu(lg, "stdio", "--calls", str(n_raw), "--", "node", str(EVERYTHING), "stdio")[0]
                p["stdio direct (loadgen)"].add(r)
                p["stdio direct (loadgen)"].add_ipis(ipis() - i0, r["calls"])

            def py_http(name: str, url: str, headers: dict, pid: int):
                """The Python client over HTTP; CPU: the gateway or mcp-proxy over the timed calls."""
                probe = CpuProbe((pid,))
                p[name].add_samples(asyncio.run(mcp_http(url, headers, n_mcp, probe)), probe.cpu_s)

            def py_guardian():
                py_stdio("stdio mcp-guardian (python mcp)", mg)
                mg_log_check(n_mcp + 20)

            def lg_guardian():
                lg_stdio("stdio mcp-guardian (loadgen)", mg)
                mg_log_check(n_raw)

            steps = {
                "stdio direct (python mcp)": lambda: py_stdio("stdio direct (python mcp)", ["node", str(EVERYTHING), "stdio"],
                                                              proxy=False),
                "stdio portcullis (python mcp)": lambda: py_stdio("stdio portcullis (python mcp)", connect, keeper=True),
                # (watched like the others, so that every loadgen path has the same sampler beside it; the
                # child here is the server, whose CPU is not a proxy's)
                "stdio direct (loadgen)": lambda: lg_direct(),
                "stdio portcullis (loadgen)": lambda: lg_stdio("stdio portcullis (loadgen)", connect, keeper=True),
                "stdio naive relay (python mcp)": lambda: py_stdio("stdio naive relay (python mcp)", naive),
                "stdio naive relay (loadgen)": lambda: lg_stdio("stdio naive relay (loadgen)", naive),
                "stdio byte relay (python mcp)": lambda: py_stdio("stdio byte relay (python mcp)", relay),
                "stdio byte relay (loadgen)": lambda: lg_stdio("stdio byte relay (loadgen)", relay),
                **({"stdio mcp-guardian (python mcp)": py_guardian, "stdio mcp-guardian (loadgen)": lg_guardian}
                   if guardian else {}),
                "http portcullis seq (loadgen)": lambda: p["http portcullis seq (loadgen)"].add(
                    *with_cpu(gw.pid, lambda: loadgen(lg, "http", url_pc, "--token", token, "--calls", str(n_raw)))),
                "http mcp-proxy seq (loadgen)": lambda: p["http mcp-proxy seq (loadgen)"].add(
                    *with_cpu(mp.pid, lambda: loadgen(lg, "http", url_mp, "--calls", str(n_raw // 2)))),
                f"http portcullis {in_flight} in flight": lambda: p[f"http portcullis {in_flight} in flight"].add(
                    *with_cpu(gw.pid, lambda: loadgen(lg, "http", url_pc, "--token", token, "--calls", str(n_tp_pc),
                                                      "--concurrency", str(in_flight)))),
                f"http mcp-proxy {in_flight} in flight": lambda: p[f"http mcp-proxy {in_flight} in flight"].add(
                    *with_cpu(mp.pid, lambda: loadgen(lg, "http", url_mp, "--calls", str(n_tp_mp),
                                                      "--concurrency", str(in_flight)))),
                "http portcullis (python mcp)": lambda: py_http("http portcullis (python mcp)", url_pc,
                                                                {"Authorization": f"Bearer {token}"}, gw.pid),
                "http mcp-proxy (python mcp)": lambda: py_http("http mcp-proxy (python mcp)", url_mp, {}, mp.pid),
            }
            pairs = [list(steps)[i:i + 2] for i in range(0, len(steps), 2)]
            for r, order in enumerate(alternate(rounds, pairs)):
                t = time.monotonic()
                for pair in order:
                    for name in (pair if r % 2 == 0 else reversed(pair)):
                        steps[name]()
                print(f"  round {r + 1}/{rounds} done in {time.monotonic() - t:.1f} s", file=sys.stderr)

            mg_py = [p["stdio mcp-guardian (python mcp)"]] if guardian else []
            mg_lg = [p["stdio mcp-guardian (loadgen)"]] if guardian else []
            print_table("Python mcp client, allowed echo, sequential: every path vs direct stdio",
                        [p["stdio direct (python mcp)"], p["stdio naive relay (python mcp)"],
                         p["stdio byte relay (python mcp)"], *mg_py, p["stdio portcullis (python mcp)"],
                         p["http portcullis (python mcp)"], p["http mcp-proxy (python mcp)"]], p["stdio direct (python mcp)"], "p50")
            print_table("stdio, raw client (loadgen): direct, the two relays, mcp-guardian, `portcullis connect`",
                        [p["stdio direct (loadgen)"], p["stdio naive relay (loadgen)"], p["stdio byte relay (loadgen)"],
                         *mg_lg, p["stdio portcullis (loadgen)"]],
                        p["stdio direct (loadgen)"], "p50")
            print("  (CPU: the proxy process's own over the timed calls — `connect` plus the keeper; mcp-guardian;"
                  " the relays; the gateway or mcp-proxy for HTTP — never the server's)")
            if guardian:
                per_call = [m["bytes"] / m["calls"] for m in mg_logs]
                results["mcp_guardian"] = {"bin": str(guardian), "guard_profile": GUARD_PROFILE, "log_runs": mg_logs}
                print(f"  mcp-guardian's log ({mg_log.name}, recreated at each start): {max(m['bytes'] for m in mg_logs):,} "
                      f"bytes at most after one run, {min(per_call):.0f}-{max(per_call):.0f} bytes per call; "
                      f"{sum(m['problems'] for m in mg_logs)} problem lines")
            print_table("HTTP: Portcullis vs mcp-proxy, one session, sequential (loadgen)",
                        [p["http mcp-proxy seq (loadgen)"], p["http portcullis seq (loadgen)"]], p["http mcp-proxy seq (loadgen)"], "calls")
            print_table(f"HTTP throughput: one session, {in_flight} calls in flight (loadgen)",
                        [p[f"http mcp-proxy {in_flight} in flight"], p[f"http portcullis {in_flight} in flight"]],
                        p[f"http mcp-proxy {in_flight} in flight"], "calls")
            print_table("HTTP with the Python mcp client (sequential; the client is the ceiling)",
                        [p["http mcp-proxy (python mcp)"], p["http portcullis (python mcp)"]], p["http mcp-proxy (python mcp)"], "calls")
            results["paths"] = {name: path.row() for name, path in p.items()}
            results["paths"]["per_round_calls_per_s"] = {name: path.round_rates for name, path in p.items()}

            # -------- 50 sessions x 1000 calls --------------------------------------------------
            c0 = cpu_seconds(gw.pid)
            conc = loadgen(lg, "http", url_pc, "--token", token, "--sessions", str(sessions),
                           "--calls", str(per_session), timeout=900)
            conc_cpu = cpu_seconds(gw.pid) - c0
            rows = {"sessions": sessions, "calls_per_session": per_session, "calls": conc["calls"],
                    "errors": conc["errors"], "first_error": conc["first_error"], "open_s": conc["open_s"],
                    "elapsed_s": conc["elapsed_s"], "calls_per_s": conc["calls_per_s"],
                    "p50_us": conc["p50_us"], "p99_us": conc["p99_us"], "max_us": conc["max_us"],
                    "gateway_cpu_us_per_call": conc_cpu / max(1, conc["calls"]) * 1e6,
                    "gateway_vmhwm_kb": status_kb(gw.pid, "VmHWM"), "gateway_vmrss_after_kb": status_kb(gw.pid, "VmRSS")}
            results["concurrency"] = rows
            print(f"\n{sessions} concurrent sessions x {per_session} calls through Portcullis (HTTP, loadgen; "
                  f"{sessions} server-everything children)")
            print(f"  calls {rows['calls']}, errors {rows['errors']}, {rows['calls_per_s']:.0f} calls/s, "
                  f"p50 {rows['p50_us'] / 1e3:.2f} ms, p99 {rows['p99_us'] / 1e3:.2f} ms, max {rows['max_us'] / 1e3:.1f} ms; "
                  f"sessions opened in {rows['open_s']:.1f} s; gateway CPU {rows['gateway_cpu_us_per_call']:.0f} µs/call, "
                  f"peak RSS {rows['gateway_vmhwm_kb'] / 1024:.1f} MB")
            if rows["errors"]:
                print(f"  first error: {rows['first_error']}")

            # -------- held call -> ApprovalRequested ---------------------------------------------
            ap_r = loadgen(lg, "approval", gwf["url"], "--token", token, "--server", "everything",
                           "--tool", "get-sum", "--calls", str(n_approvals))
            results["approval"] = {k: v for k, v in ap_r.items() if not k.endswith("lat_us")}
            print(f"\nheld call -> ApprovalRequested on GET /control/events ({ap_r['calls']} calls, errors {ap_r['errors']})")
            print(f"  p50 {ap_r['p50_us'] / 1e3:.3f} ms, p99 {ap_r['p99_us'] / 1e3:.3f} ms, max {ap_r['max_us'] / 1e3:.3f} ms; "
                  f"approve -> answer p50 {ap_r['answer_p50_us'] / 1e3:.3f} ms, p99 {ap_r['answer_p99_us'] / 1e3:.3f} ms")
        finally:
            mp.stop()
            gw.stop()

        # -------- idle memory, 3 upstreams -------------------------------------------------------
        repo = tmp / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (tmp / "fsroot").mkdir()
        (tmp / "fsroot/hello.txt").write_text("hello\n")
        servers = {
            "everything": {"command": "node", "args": [str(EVERYTHING), "stdio"]},
            "filesystem": {"command": "node", "args": [str(FILESYSTEM), str(tmp / "fsroot")]},
            "git": {"command": str(MCP_SERVER_GIT), "args": ["--repository", str(repo)]},
        }
        gw2, gwf2 = start_gateway(args.bin, tmp / "gw2", servers, {"everything": policy})
        try:
            rss_start = status_kb(gw2.pid, "VmRSS")
            for name in servers:
                r = loadgen(lg, "http", f"{gwf2['url']}/mcp/{name}", "--token", gwf2["token"], "--calls", "0")
                if r["errors"]:
                    raise RuntimeError(f"session to {name}: {r['first_error']}")
            loadgen(lg, "http", f"{gwf2['url']}/mcp/everything", "--token", gwf2["token"], "--calls", "200")
            time.sleep(2.0)  # children stopped, connections closed
            mem = {"vmrss_kb_at_start": rss_start, "vmrss_kb_idle": status_kb(gw2.pid, "VmRSS"),
                   "vmhwm_kb": status_kb(gw2.pid, "VmHWM"), "threads": status_kb(gw2.pid, "Threads"),
                   "children_left": sum(len(t.joinpath("children").read_text().split())
                                        for t in Path(f"/proc/{gw2.pid}/task").iterdir())}
        finally:
            gw2.stop()
        results["memory"] = mem
        print(f"\nidle `portcullis serve`, 3 upstreams (everything, filesystem, git), after a session to each was "
              f"opened and closed")
        print(f"  VmRSS {mem['vmrss_kb_idle'] / 1024:.1f} MB (at start {mem['vmrss_kb_at_start'] / 1024:.1f} MB, "
              f"peak {mem['vmhwm_kb'] / 1024:.1f} MB), {mem['threads']} threads, {mem['children_left']} children left")

    # -------- verdict ---------------------------------------------------------------------------
    rp = results["paths"]
    stdio_ratio = rp["stdio portcullis (python mcp)"]["p50_us"] / rp["stdio direct (python mcp)"]["p50_us"]
    raw_ratio = rp["stdio portcullis (loadgen)"]["p50_us"] / rp["stdio direct (loadgen)"]["p50_us"]
    http_ratio = rp[f"http portcullis {in_flight} in flight"]["calls_per_s"] / rp[f"http mcp-proxy {in_flight} in flight"]["calls_per_s"]
    verdict = [
        ("stdio p50 ratio, Python mcp client (≤ 1.15x)", f"{stdio_ratio:.2f}x", stdio_ratio <= TARGETS["stdio_p50_ratio"]),
        ("stdio p50 ratio, raw client (same target, informative)", f"{raw_ratio:.2f}x", raw_ratio <= TARGETS["stdio_p50_ratio"]),
        (f"HTTP calls/s vs mcp-proxy, {in_flight} in flight (≥ 4x)", f"{http_ratio:.2f}x", http_ratio >= TARGETS["http_calls_ratio"]),
        (f"{sessions} sessions x {per_session} calls: no errors", f"{results['concurrency']['errors']} errors, "
         f"p99 {results['concurrency']['p99_us'] / 1e3:.2f} ms", results["concurrency"]["errors"] == 0),
        ("held call -> ApprovalRequested p50 (≤ 20 ms)", f"{results['approval']['p50_us'] / 1e3:.3f} ms",
         results["approval"]["p50_us"] / 1e3 <= TARGETS["approval_p50_ms"] and results["approval"]["errors"] == 0),
        ("idle RSS, 3 upstreams (≤ 20 MB)", f"{results['memory']['vmrss_kb_idle'] / 1024:.1f} MB",
         results["memory"]["vmrss_kb_idle"] / 1024 <= TARGETS["idle_rss_mb"]),
    ]
    if "stdio mcp-guardian (loadgen)" in rp:  # issue 31: connect beside mcp-guardian and the byte relay
        def added(name: str, client: str) -> float:
            return (rp[f"stdio {name} ({client})"]["p50_us"] - rp[f"stdio direct ({client})"]["p50_us"]) / 1e3
        for client in ("python mcp", "loadgen"):
            pc, mgd, br = added("portcullis", client), added("mcp-guardian", client), added("byte relay", client)
            pc99, mg99 = rp[f"stdio portcullis ({client})"]["p99_us"] / 1e3, rp[f"stdio mcp-guardian ({client})"]["p99_us"] / 1e3
            verdict += [
                (f"connect p50 added < mcp-guardian's, {client}", f"{pc:+.3f} ms vs {mgd:+.3f} ms", pc < mgd),
                (f"connect p50 added ≤ byte relay's + 0.10 ms, {client}", f"{pc:+.3f} ms vs {br:+.3f} + 0.100 ms",
                 pc <= br + TARGETS["connect_over_relay_ms"]),
                (f"connect p99 ≤ mcp-guardian's, {client}", f"{pc99:.3f} ms vs {mg99:.3f} ms", pc99 <= mg99),
            ]
    results["verdict"] = [{"target": t, "figure": f, "met": m} for t, f, m in verdict]
    results["machine"]["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    print("\ntargets")
    for t, f, m in verdict:
        print(f"  {'MET ' if m else 'MISS'}  {t}: {f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
        print(f"\nfigures written to {args.json}")
    if smoke and (results["concurrency"]["errors"] or results["approval"]["errors"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
