"""Peak gateway memory for one large call (issue 14 point 7): a `tools/call` whose argument is 15 MiB
and a call whose result is 15 MiB, through the local socket `portcullis connect` uses, against
tests/e2e/peers/hostile_server.py (`echo` answers its argument back, `big` answers N MiB).

For each case: the gateway's VmRSS after a warm-up call is the baseline; its peak (VmHWM) is reset to
the current RSS (`/proc/PID/clear_refs` 5) just before the call; the figure is VmHWM after the answer
minus the baseline, in MiB and as a multiple of the message size. The echo case moves the message
twice (in as the argument, out as the result), so its multiple counts both directions' buffers.

    tests/.peers/venv1/bin/python bench/big_message.py --bin target/release/portcullis [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import start_gateway, status_kb  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests/e2e/peers/hostile_server.py"
MIB = 1024 * 1024
SIZE_MIB = 15


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


def measure(pid: int, sock, reader, rid: int, tool: str, arguments: dict, check) -> dict:
    rpc(sock, reader, rid, "echo", {"message": "warm"})
    base = status_kb(pid, "VmRSS")
    reset_peak(pid)
    started = time.perf_counter()
    answer = rpc(sock, reader, rid + 1, tool, arguments)
    elapsed = time.perf_counter() - started
    peak = status_kb(pid, "VmHWM")
    check(answer)
    added = (peak - base) / 1024
    return {"baseline_mib": round(base / 1024, 1), "peak_mib": round(peak / 1024, 1),
            "added_mib": round(added, 1), "x_message": round(added / SIZE_MIB, 2), "seconds": round(elapsed, 3),
            "rss_after_mib": round(status_kb(pid, "VmRSS") / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="portcullis-big-") as tmp:
        servers = {"hostile": {"command": sys.executable, "args": [str(HOSTILE)], "env": {}}}
        gw, info = start_gateway(args.bin, Path(tmp), servers, {"hostile": {"version": "1", "default": "allow"}})
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(120)
            sock.connect(info["socket"])
            reader = sock.makefile("rb", buffering=1 << 20)
            sock.sendall(json.dumps({"portcullis": 1, "server": "hostile", "token": info["token"]}).encode() + b"\n")
            assert json.loads(reader.readline()).get("ok") is True
            payload = "q" * (SIZE_MIB * MIB)

            def echoed(a):
                assert a["result"]["content"][0]["text"] == "Echo: " + payload, "echoed intact"

            def big(a):
                assert len(a["result"]["content"][0]["text"]) == SIZE_MIB * MIB, "15 MiB result"

            figures = {
                "argument_15mib_echoed": measure(gw.pid, sock, reader, 10, "echo", {"message": payload}, echoed),
                "result_15mib": measure(gw.pid, sock, reader, 20, "big", {"mib": SIZE_MIB}, big),
            }
            sock.close()
        finally:
            gw.stop()
    for case, f in figures.items():
        print(f"big message {case}: peak +{f['added_mib']} MiB over {f['baseline_mib']} MiB "
              f"({f['x_message']}x the {SIZE_MIB} MiB message), {f['seconds']} s, RSS after {f['rss_after_mib']} MiB")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
