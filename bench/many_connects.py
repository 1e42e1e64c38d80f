"""Many data planes, one keeper, one audit (issue 31 point 4): N `portcullis connect` processes at
once, each the gate for its own client and the starter of its own server (the Rust rmcp server,
tests/rmcp-peer), all committing to one `audit.db`, against one keeper (`portcullis serve`).

    tests/.peers/venv1/bin/python bench/many_connects.py --bin target/ci/portcullis \
        --server-bin target/ci/rmcp-peer [--processes 200] [--calls 20] [--json OUT]

Each client (a thread here, raw newline JSON-RPC) initializes, then calls `echo` CALLS times back
to back; all start together. Reported: errors (any answer that is not the echo), p50/p99 of the
calls, the audit rows found against the calls made, each `connect`'s memory once its calls are done
and it idles (VmRSS, its private part RssAnon, and PSS, which shares the binary's pages out among
the processes that map them), and the keeper's VmRSS.

Then, with every client still connected: the sessions the keeper lists (`GET /control/sessions`,
what the app's Servers view shows: one per `connect`), and how long a policy change takes to reach
every data plane — the policy file is rewritten to deny `echo`, and each client calls `echo` back
to back until it is refused; the time from the write to each client's first refusal (its p50 and
max; the target is 1 s for all of them).

Audit write waits: every `connect` of the measured round runs with PORTCULLIS_AUDIT_WAITS naming
one file, so its audit writer appends a JSON line of its figures (`AuditWriter::write_waits`:
records committed, commit wait from `record` to committed p50/p99/max, waits for another
process's write lock) when it stops (`"final": true`) and whenever it goes idle (`"final": false`).
Per process the last final line counts, else its last idle line (a process that exits without
dropping its writer leaves only those). Reported across processes: how many reported and how many
with a final line, the median and max of their commit p50 and p99, the max of their max, and the
lock waits (total, processes with one, longest).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402  (start_gateway)

POLICY = {"version": "1", "default": "deny", "tools": {"echo": {}}}
DENY_ECHO = {"version": "1", "default": "deny", "tools": {"echo": {"action": "deny", "reason": "bench: the new policy"}}}


def memory(pid: int) -> dict[str, int]:
    """VmRSS and RssAnon (status) and Pss (smaps_rollup) of `pid`, in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon"):
            out[key] = int(line.split()[1])
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            out["Pss"] = int(line.split()[1])
    return out


class Client:
    def __init__(self, argv: list[str], calls: int, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.calls = calls
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.done = threading.Event()
        self.reached_s: float | None = None

    def ask(self, rid: int, method: str, params: dict) -> dict:
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("connect closed its output")
        return json.loads(line)

    def until_refused(self, changed_at: float, rid: int) -> None:
        """Calls `echo` until the gate refuses it: the new policy reached this data plane."""
        try:
            while time.monotonic() - changed_at < 30:
                rid += 1
                answer = self.ask(rid, "tools/call", {"name": "echo", "arguments": {"message": "after"}})
                if (answer.get("result") or {}).get("isError"):
                    self.reached_s = time.monotonic() - changed_at
                    return
            self.errors.append("the policy change did not reach it within 30 s")
        except Exception as e:  # noqa: BLE001
            self.errors.append(repr(e))

    def run(self, go: threading.Event) -> None:
        try:
            go.wait()
            init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "many", "version": "1"}}
            if "result" not in self.ask(0, "initialize", init):
                self.errors.append("initialize failed")
                return
            self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            for i in range(self.calls):
                t = time.perf_counter()
                answer = self.ask(i + 1, "tools/call", {"name": "echo", "arguments": {"message": f"m{i}"}})
                self.latencies.append(time.perf_counter() - t)
                result = answer.get("result") or {}
                if result.get("isError") or "error" in answer:
                    self.errors.append(json.dumps(answer)[:300])
        except Exception as e:  # noqa: BLE001 — every failure is a counted error
            self.errors.append(repr(e))
        finally:
            self.done.set()


def listed_sessions(info: dict) -> int:
    """How many `connect` sessions the keeper lists (GET /control/sessions)."""
    req = urllib.request.Request(f"{info['url']}/control/sessions",
                                 headers={"Authorization": f"Bearer {info['token']}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return sum(1 for s in json.load(resp) if s.get("via") == "connect")


def reach_figures(reached: list[float | None]) -> list[float | None]:
    """[p50, max] seconds from the policy write to each client's first refusal; None if one never saw it."""
    if not reached or any(r is None for r in reached):
        return [None, None]
    ordered = sorted(r for r in reached if r is not None)
    return [round(ordered[len(ordered) // 2], 3), round(ordered[-1], 3)]


def run_round(argv: list[str], processes: int, calls: int, waits: Path | None = None) -> list[Client]:
    """Starts `processes` clients together and waits (bounded) for their calls. With `waits`, each
    connect's audit writer appends its write waits there (PORTCULLIS_AUDIT_WAITS)."""
    env = None if waits is None else {**os.environ, "PORTCULLIS_AUDIT_WAITS": str(waits)}
    clients = [Client(argv, calls, env) for _ in range(processes)]
    go = threading.Event()
    for c in clients:
        threading.Thread(target=c.run, args=(go,), daemon=True).start()
    go.set()
    for c in clients:
        c.done.wait(timeout=300)
    return clients


def close(clients: list[Client]) -> None:
    for c in clients:
        c.proc.stdin.close()
    for c in clients:
        try:
            c.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            c.proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", type=Path, required=True)
    ap.add_argument("--server-bin", type=Path, required=True)
    ap.add_argument("--processes", type=int, default=200)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds of PROCESSES connects against one keeper; its VmRSS is read after each")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="many-connects-") as tmp_s:
        tmp = Path(tmp_s)
        servers = {"tables": {"command": str(args.server_bin), "args": ["server"], "env": {}}}
        keeper, info = e2e.start_gateway(args.bin, tmp, servers, {"tables": POLICY})
        argv = [str(args.bin), "connect", "tables", "--config", str(tmp / "portcullis.json"), "--data-dir", str(tmp / "data")]
        keeper_after = [round(memory(keeper.p.pid)["VmRSS"] / 1024, 1)]
        for _ in range(args.rounds - 1):
            close(run_round(argv, args.processes, args.calls))
            keeper_after.append(round(after_links_closed(keeper, info) / 1024, 1))
        started = time.monotonic()
        waits_file = tmp / "audit-waits.jsonl"
        clients = run_round(argv, args.processes, args.calls, waits_file)
        took = time.monotonic() - started
        time.sleep(1.0)  # idle: every connect waits on its client
        mems = []
        for c in clients:
            try:
                mems.append(memory(c.proc.pid))
            except OSError:
                pass
        keeper_rss = memory(keeper.p.pid)["VmRSS"]
        sessions = listed_sessions(info)
        db = sqlite3.connect(f"file:{tmp / 'data' / 'audit.db'}?mode=ro", uri=True)
        rows = db.execute("SELECT count(*) FROM decisions WHERE tool = 'echo'").fetchone()[0]
        db.close()
        changed_at = time.monotonic()
        (tmp / "policies" / "tables.json").write_text(json.dumps(DENY_ECHO))
        reach = [threading.Thread(target=c.until_refused, args=(changed_at, args.calls), daemon=True) for c in clients]
        for t in reach:
            t.start()
        for t in reach:
            t.join(timeout=60)
        close(clients)
        waits = write_waits(waits_file, [c.proc.pid for c in clients])
        keeper_after.append(round(after_links_closed(keeper, info) / 1024, 1))
        keeper.stop()
    lat = sorted(x for c in clients for x in c.latencies)
    errors = [e for c in clients for e in c.errors]
    made = sum(len(c.latencies) for c in clients)

    def kib(key: str) -> tuple[float, float]:
        values = [m[key] for m in mems if key in m]
        return statistics.median(values) / 1024, max(values) / 1024

    figures = {
        "processes": args.processes, "calls_each": args.calls, "calls_made": made, "errors": len(errors),
        "audit_rows": rows - (args.rounds - 1) * args.processes * args.calls, "seconds": round(took, 2),
        "p50_ms": round(lat[len(lat) // 2] * 1e3, 3), "p99_ms": round(lat[int(len(lat) * 0.99)] * 1e3, 3),
        "connect_vmrss_mib_median_max": [round(x, 1) for x in kib("VmRSS")],
        "connect_rssanon_mib_median_max": [round(x, 1) for x in kib("RssAnon")],
        "connect_pss_mib_median_max": [round(x, 1) for x in kib("Pss")],
        "keeper_vmrss_mib": round(keeper_rss / 1024, 1),
        "keeper_vmrss_mib_before_and_after_each_round": keeper_after,
        "sessions_listed_by_keeper": sessions,
        "policy_reached_s_p50_max": reach_figures([c.reached_s for c in clients]),
        "audit_write_waits": waits,
    }
    print(json.dumps(figures, indent=2))
    for e in errors[:5]:
        print("error:", e, file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def write_waits(path: Path, pids: list[int]) -> dict:
    """The connects' audit write waits (PORTCULLIS_AUDIT_WAITS lines), across processes."""
    last: dict[int, dict] = {}
    final: set[int] = set()
    try:
        lines = path.read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        w = json.loads(line)
        pid = w["pid"]
        if pid not in pids or (pid in final and not w["final"]):
            continue
        last[pid] = w
        if w["final"]:
            final.add(pid)
    got = list(last.values())
    if not got:
        return {"processes": len(pids), "reported": 0, "with_final_line": 0}

    def across(key: str) -> list[int]:
        values = sorted(w[key] for w in got if w["rows"])
        return [values[len(values) // 2], values[-1]] if values else [0, 0]

    return {
        "processes": len(pids),
        "reported": len(got),
        "with_final_line": len(final),
        "rows": sum(w["rows"] for w in got),
        "commit_p50_us_median_max": across("commit_p50_us"),
        "commit_p99_us_median_max": across("commit_p99_us"),
        "commit_max_us_median_max": across("commit_max_us"),
        "lock_waits": sum(w["lock_waits"] for w in got),
        "processes_with_a_lock_wait": sum(1 for w in got if w["lock_waits"]),
        "lock_wait_max_us": max(w["lock_wait_max_us"] for w in got),
        "lock_wait_total_ms": round(sum(w["lock_wait_total_us"] for w in got) / 1e3, 1),
    }


def after_links_closed(keeper, info: dict) -> int:
    """The keeper's VmRSS (KiB) once it lists no connect session (every link closed), bounded."""
    deadline = time.monotonic() + 30
    while listed_sessions(info) and time.monotonic() < deadline:
        time.sleep(0.05)
    return memory(keeper.p.pid)["VmRSS"]


if __name__ == "__main__":
    main()
