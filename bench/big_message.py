"""Peak gateway memory for one large call (issue 14 point 7, issue 31 point 6): a `tools/call` whose
argument is 15 MiB and a call whose result is 15 MiB, against tests/e2e/peers/hostile_server.py
(`echo` answers its argument back, `big` answers N MiB). Two case sets, both run by default:

  keeper   the keeper (`portcullis serve`) measured, the call over its local socket in the old relay
           protocol (`connect` before issue 31; still served for upgrades);
  connect  the `portcullis connect` process measured: the path clients take since issue 31.

Keeper cases: each runs twice, on a connection that never sends `initialize` (the gateway's shared
stateless upstream, which gives requests ids of its own), and on one that does, as `portcullis
connect` relayed a client's before issue 31 (a session with its own server child, ids passed through).

For each case: the gateway's VmRSS after a warm-up call is the baseline; its peak (VmHWM) is reset to
the current RSS (`/proc/PID/clear_refs` 5) just before the call; the figure is VmHWM after the answer
minus the baseline, in MiB and as a multiple of the message size, read once the call's outcome is in
the audit (the call's last write, after its answer). The echo case moves the message
twice (in as the argument, out as the result), so its multiple counts both directions' buffers.

The `connect` cases (issue 31 point 6; the path clients take since issue 31, where `portcullis
connect SERVER` is the gate in its own process and starts the server as its child): a keeper
(`portcullis serve`) is started first, as in bench/connect_cpu.py, so that `connect` finds it and
starts none of its own; then `portcullis connect hostile --config CONFIG --data-dir DATA` is
launched with its stdin and stdout as pipes and spoken to in newline JSON-RPC (`initialize`,
`notifications/initialized`, a warm-up `echo`, then the 15 MiB call). Measured as above, on the
`connect` process's own pid (the Popen's, not its server child's); the server child's peak (a
Python process, not ours) and the keeper's are reset and read beside it, for context (the keeper
does nothing for an allowed call; it holds the connect's keeper link, opened at `initialize` to
announce the session, and its audit follower reads the new rows' heads).

    tests/.peers/venv1/bin/python bench/big_message.py --bin target/release/portcullis \
        [--cases keeper,connect] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import Proc, start_gateway, status_kb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests/e2e/peers/hostile_server.py"
MIB = 1024 * 1024
SIZE_MIB = 15
TARGET_X = 3  # issue 14 point 7: a 15 MiB call and result peak at ≤ 3x the message in gateway memory


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def rpc(sock: socket.socket, reader, rid: int, tool: str, arguments: dict) -> dict:
    sock.sendall(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                             "params": {"name": tool, "arguments": arguments}}).encode() + b"\n")
    while True:
        line = reader.readline()
        if not line:
            sys.exit("the gateway closed the connection")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return msg


def wait_for_outcome(db: Path, calls: int) -> None:
    """Until the audit holds `calls` outcomes (bounded): the call's last write, after its answer."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            if conn.execute("SELECT count(outcome) FROM calls").fetchone()[0] >= calls:
                return
        finally:
            conn.close()
        time.sleep(0.05)
    sys.exit(f"no outcome recorded for call {calls} within 30 s")


def measure(pid: int, db: Path, sock, reader, rid: int, tool: str, arguments: dict, check) -> dict:
    rpc(sock, reader, rid, "echo", {"message": "warm"})
    wait_for_outcome(db, 1)
    base = status_kb(pid, "VmRSS")
    reset_peak(pid)
    started = time.perf_counter()
    answer = rpc(sock, reader, rid + 1, tool, arguments)
    elapsed = time.perf_counter() - started
    # The peak covers the call's whole life: its outcome is written after the answer.
    wait_for_outcome(db, 2)
    peak = status_kb(pid, "VmHWM")
    check(answer)
    added = (peak - base) / 1024
    return {"baseline_mib": round(base / 1024, 1), "peak_mib": round(peak / 1024, 1),
            "added_mib": round(added, 1), "x_message": round(added / SIZE_MIB, 2), "seconds": round(elapsed, 3),
            "rss_after_mib": round(status_kb(pid, "VmRSS") / 1024, 1)}


def open_connection(info: dict, initialize: bool):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(120)
    sock.connect(info["socket"])
    reader = sock.makefile("rb", buffering=1 << 20)
    sock.sendall(json.dumps({"portcullis": 1, "server": "hostile", "token": info["token"]}).encode() + b"\n")
    assert json.loads(reader.readline()).get("ok") is True
    if initialize:
        sock.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "big-message", "version": "1"}}}).encode() + b"\n")
        assert "result" in json.loads(reader.readline())
        sock.sendall(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
    return sock, reader


def one_gateway(bin_path: Path, kind: str, case: str) -> dict:
    """One case on one connection of `kind`, in a gateway of its own: the buffers an earlier case
    freed, which glibc keeps, would otherwise be this one's baseline and hide its copies."""
    payload = "q" * (SIZE_MIB * MIB)

    def echoed(a):
        assert a["result"]["content"][0]["text"] == "Echo: " + payload, "echoed intact"

    def big(a):
        assert len(a["result"]["content"][0]["text"]) == SIZE_MIB * MIB, "15 MiB result"

    with tempfile.TemporaryDirectory(prefix="portcullis-big-") as tmp:
        servers = {"hostile": {"command": sys.executable, "args": [str(HOSTILE)], "env": {}}}
        gw, info = start_gateway(bin_path, Path(tmp), servers, {"hostile": {"version": "1", "default": "allow"}})
        try:
            sock, reader = open_connection(info, initialize=kind == "session")
            db = Path(tmp) / "data/audit.db"
            if case == "argument_15mib_echoed":
                figures = {f"{case}_{kind}": measure(gw.pid, db, sock, reader, 10, "echo", {"message": payload}, echoed)}
            else:
                figures = {f"{case}_{kind}": measure(gw.pid, db, sock, reader, 20, "big", {"mib": SIZE_MIB}, big)}
            sock.close()
        finally:
            gw.stop()
    return figures


# ------------------------------------------------------------------------------------------------
# `portcullis connect` (issue 31 point 6): the data plane in a process of its own, stdio in and out


def children(pid: int) -> list[int]:
    """The direct children of `pid` (every thread's list)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def comm(pid: int) -> str:
    return Path(f"/proc/{pid}/comm").read_text().strip()


def stdio_ask(proc: subprocess.Popen, rid: int, method: str, params: dict) -> dict:
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"connect closed its output (exit status {proc.poll()})")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return msg


def one_connect(bin_path: Path, case: str) -> dict:
    """One case through `portcullis connect hostile`, a fresh connect (and keeper) for each case."""
    payload = "q" * (SIZE_MIB * MIB)
    with tempfile.TemporaryDirectory(prefix="portcullis-big-connect-") as tmp_s:
        tmp = Path(tmp_s)
        servers = {"hostile": {"command": sys.executable, "args": [str(HOSTILE)], "env": {}}}
        keeper, _ = start_gateway(bin_path, tmp, servers, {"hostile": {"version": "1", "default": "allow"}})
        err = open(tmp / "connect.log", "w")
        connect = Proc([str(bin_path), "connect", "hostile", "--config", str(tmp / "portcullis.json"),
                        "--data-dir", str(tmp / "data")],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                       env={**os.environ, "PORTCULLIS_LOG": "warn"})
        proc = connect.p
        try:
            init = {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "big-message", "version": "1"}}
            assert "result" in stdio_ask(proc, 1, "initialize", init), "initialized"
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            proc.stdin.flush()
            db = tmp / "data/audit.db"
            warm = stdio_ask(proc, 2, "tools/call", {"name": "echo", "arguments": {"message": "warm"}})
            assert warm["result"]["content"][0]["text"] == "Echo: warm", warm
            wait_for_outcome(db, 1)
            # The right pids: connect is the Popen's own; its server is its one Python child.
            kids = [c for c in children(proc.pid) if comm(c).startswith("python")]
            assert comm(proc.pid) == bin_path.name[:15] and len(kids) == 1, (comm(proc.pid), kids)
            server = kids[0]
            base = status_kb(proc.pid, "VmRSS")
            server_base, keeper_base = status_kb(server, "VmRSS"), status_kb(keeper.pid, "VmRSS")
            for pid in (proc.pid, server, keeper.pid):
                reset_peak(pid)
            if case == "argument_15mib_echoed":
                started = time.perf_counter()
                answer = stdio_ask(proc, 10, "tools/call", {"name": "echo", "arguments": {"message": payload}})
                elapsed = time.perf_counter() - started
                assert answer["result"]["content"][0]["text"] == "Echo: " + payload, "echoed intact"
            else:
                started = time.perf_counter()
                answer = stdio_ask(proc, 20, "tools/call", {"name": "big", "arguments": {"mib": SIZE_MIB}})
                elapsed = time.perf_counter() - started
                assert len(answer["result"]["content"][0]["text"]) == SIZE_MIB * MIB, "15 MiB result"
            del answer
            # The peak covers the call's whole life: its outcome is written after the answer.
            wait_for_outcome(db, 2)
            peak = status_kb(proc.pid, "VmHWM")
            server_peak, keeper_peak = status_kb(server, "VmHWM"), status_kb(keeper.pid, "VmHWM")
            added = (peak - base) / 1024
            figures = {
                "baseline_mib": round(base / 1024, 1), "peak_mib": round(peak / 1024, 1),
                "added_mib": round(added, 1), "x_message": round(added / SIZE_MIB, 2),
                "seconds": round(elapsed, 3), "rss_after_mib": round(status_kb(proc.pid, "VmRSS") / 1024, 1),
                "threads": status_kb(proc.pid, "Threads"),
                "server_child": {"comm": comm(server), "baseline_mib": round(server_base / 1024, 1),
                                 "added_mib": round((server_peak - server_base) / 1024, 1)},
                "keeper": {"baseline_mib": round(keeper_base / 1024, 1),
                           "added_mib": round((keeper_peak - keeper_base) / 1024, 1)},
            }
            proc.stdin.close()
            proc.wait(timeout=30)
        finally:
            connect.stop()
            err.close()
            keeper.stop()
    return {f"{case}_connect": figures}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cases", default="keeper,connect",
                    help="keeper (the old relay protocol on the keeper's socket), connect (the stdio data plane)")
    args = ap.parse_args()
    sets = set(args.cases.split(","))
    figures = {}
    if "keeper" in sets:
        for kind in ("stateless", "session"):
            for case in ("argument_15mib_echoed", "result_15mib"):
                figures.update(one_gateway(args.bin, kind, case))
    if "connect" in sets:
        for case in ("argument_15mib_echoed", "result_15mib"):
            figures.update(one_connect(args.bin, case))
    for case, f in figures.items():
        verdict = "MET" if f["x_message"] <= TARGET_X else "MISS"
        where = "the connect process" if case.endswith("_connect") else "the keeper (local socket relay)"
        print(f"big message {case} [{where}]: peak +{f['added_mib']} MiB over {f['baseline_mib']} MiB "
              f"({f['x_message']}x the {SIZE_MIB} MiB message, {verdict} ≤ {TARGET_X}x), {f['seconds']} s, "
              f"RSS after {f['rss_after_mib']} MiB")
        if "server_child" in f:
            print(f"    beside it: the server child (Python) +{f['server_child']['added_mib']} MiB over "
                  f"{f['server_child']['baseline_mib']} MiB; the keeper +{f['keeper']['added_mib']} MiB over "
                  f"{f['keeper']['baseline_mib']} MiB")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
