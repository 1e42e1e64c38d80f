"""Many clients at once on the keeper's local socket (issue 14 point 6, issue 31 point 6): 200 concurrent
sessions in the relay protocol that `connect` spoke before it became a data plane (the keeper still
serves it, so a `connect` started by an older version keeps working across an upgrade), against one
stdio server, four rounds. Each client speaks the protocol directly (the hello line of
crates/gate/src/local_conn.rs, then one JSON-RPC message per line), so the figures are the keeper's.

Asserted: every call of every client is answered with its own echo; after each round the keeper's open
descriptors come back to where they started (bounded wait: each legacy session's child is stopped when
its connection closes); its RSS reaches a plateau (the last two rounds add under 4 MiB) and its heap
(RssAnon) stays within 3 MiB of round 1's: a leak per session would show as megabytes per round. The
memory a burst uses at once is given back when its last session ends (allocator.rs); its peak is
VmHWM. Latency p50/p99 and calls/s, threads and anonymous memory are logged (`-s`), not asserted;
PORTCULLIS_MANY_ROUNDS runs more rounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest

import harness

pytestmark = pytest.mark.gateway

CLIENTS = 200
CALLS = 20  # per client and round
ROUNDS = int(os.environ.get("PORTCULLIS_MANY_ROUNDS", "4"))  # at least 3: the plateau reads the last two
PLATEAU_MIB = 4.0  # what the last two rounds may add together
ANON_BOUND_MIB = 3.0  # what the heap may add from round 1 to the last (freed memory is given back)
LAZY_FDS = 4  # a second audit.db connection: the database, its -wal and -shm files
MIB = 1024 * 1024
HOSTILE = harness.PEERS_DIR / "hostile_server.py"


def status(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) / 1024
    return out


def threads(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))


def anon_kib(pid: int) -> int:
    """Resident anonymous memory outside [heap] and the stacks, in KiB (where the growth was seen)."""
    total, name = 0, ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and len(parts) >= 5 and ":" not in parts[0]:
            name = parts[5] if len(parts) > 5 else ""
        elif parts[0] == "Anonymous:" and name == "":
            total += int(parts[1])
    return total


def fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def children(pid: int) -> list[str]:
    """The gateway's child processes (its stdio servers), from every thread's list."""
    out: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += (task / "children").read_text().split()
        except OSError:
            continue
    return out


def fd_kinds(pid: int) -> dict[str, int]:
    """Open descriptors by kind (socket, pipe, anon_inode:…, file), for a failure message."""
    kinds: dict[str, int] = {}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        kind = target.split(":[", 1)[0] if ":[" in target else (Path(target).name if target.startswith("/") else target)
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


@pytest.fixture(scope="module")
def many_gw(e2e_tmp: Path):
    root = e2e_tmp / f"many-{uuid.uuid4().hex[:8]}"
    servers = {"echo": harness.python_stdio(Path(sys.executable), HOSTILE)}
    policies = {"echo": {"version": "1", "default": "allow"}}
    # One legacy session (and child) per client: raise the per-server cap (32 by default).
    extra = {"limits": {"max_sessions_per_server": CLIENTS + 16, "max_sessions": CLIENTS + 32}}
    config = harness.write_config(root, servers, policies, extra=extra)
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (many clients) exited with {gateway.stop()}")


def socket_path(gw) -> str:
    info = json.loads((gw.data_dir / "gateway.json").read_text())
    assert info.get("socket"), f"the gateway made no local socket: {info}"
    return info["socket"]


async def one_client(path: str, token: str, n: int, latencies: list[float]) -> None:
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path, limit=1 << 20), 30)

    async def send(msg: dict) -> None:
        writer.write(json.dumps(msg).encode() + b"\n")
        await writer.drain()

    async def answer(rid: int) -> dict:
        while True:
            line = await asyncio.wait_for(reader.readline(), 60)
            assert line, f"client {n}: the gateway closed the connection waiting for id {rid}"
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg

    try:
        writer.write(json.dumps({"portcullis": 1, "server": "echo", "token": token}).encode() + b"\n")
        await writer.drain()
        ack = json.loads(await asyncio.wait_for(reader.readline(), 30))
        assert ack.get("ok") is True, ack
        await send(harness.INITIALIZE_BODY)
        init = await answer(1)
        assert "result" in init, init
        await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i in range(CALLS):
            rid = 100 + i
            text = f"c{n} call {i}"
            started = time.perf_counter()
            await send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "echo", "arguments": {"message": text}}})
            msg = await answer(rid)
            latencies.append(time.perf_counter() - started)
            assert msg["result"]["content"][0]["text"] == f"Echo: {text}", msg
    finally:
        writer.close()
        await writer.wait_closed()


async def round_of(gw, path: str) -> tuple[list[float], float]:
    latencies: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(*(one_client(path, gw.token, n, latencies) for n in range(CLIENTS)))
    return latencies, time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


# Each round starts 200 child servers and makes 4,000 calls from one Python process: beside CI's two
# other lanes on 2 cores six rounds once took over the suite's 90 s. Four rounds keep the plateau check
# (round 1 as the baseline, the last two rounds' growth); the bound is this test's own.
@pytest.mark.timeout(240)
def test_200_concurrent_connect_sessions_end_without_leaving_descriptors_or_memory(many_gw):
    gw = many_gw
    path = socket_path(gw)
    # One session first: the audit database opens its WAL files at the first write, for good.
    asyncio.run(one_client(path, gw.token, -1, []))
    harness.wait_until(lambda: not children(gw.pid), 30, "the warm-up session's server to stop")
    start_fds = fds(gw.pid)
    start_kinds = fd_kinds(gw.pid)
    rss: list[float] = []
    anon: list[float] = []
    after: list[int] = []
    for rnd in range(ROUNDS):
        latencies, took = asyncio.run(round_of(gw, path))
        assert len(latencies) == CLIENTS * CALLS
        harness.log(f"[many] round {rnd}: {CLIENTS} sessions x {CALLS} echo calls in {took:.2f} s: "
                    f"p50 {percentile(latencies, 0.5) * 1000:.2f} ms, p99 {percentile(latencies, 0.99) * 1000:.2f} ms, "
                    f"{len(latencies) / took:.0f} calls/s")
        # Each session's child is stopped once its connection closes; bounded wait for the last ones.
        harness.wait_until(lambda: not children(gw.pid), 60, "every session's server to stop")
        # Under load the audit database may open one more connection (its files stay open, once):
        # the first round may end a few above the start, and every later round where it ended.
        bound = start_fds + LAZY_FDS if rnd == 0 else after[0]
        try:
            harness.wait_until(lambda: fds(gw.pid) <= bound, 60, f"gateway descriptors back to {bound}")
        except harness.HarnessError as e:
            pytest.fail(f"{e}: {fds(gw.pid)} open, by kind {fd_kinds(gw.pid)} (at start {start_kinds})")
        after.append(fds(gw.pid))
        mem = status(gw.pid)
        rss.append(mem["VmRSS"])
        anon.append(mem["RssAnon"])
        harness.log(f"[many] after round {rnd}: fds {fds(gw.pid)} (start {start_fds}), "
                    f"RSS {mem['VmRSS']:.1f} MiB (anon {mem['RssAnon']:.1f}, file {mem['RssFile']:.1f}), peak {mem['VmHWM']:.1f} MiB, threads {threads(gw.pid)}, "
                    f"anonymous {anon_kib(gw.pid) / 1024:.1f} MiB")
    # What grew round after round before (RssAnon 14.6 -> 23.2 MiB over six rounds beside CI's other
    # lanes, in uneven steps, the last +4.5 MiB in the fastest round) was the main heap's high-water
    # mark: each busier burst had more sessions' buffers alive at once, and glibc kept the freed pages.
    # The gateway now gives them back when the last session of a burst ends (allocator.rs
    # `release_free_memory`), so what stays is what the gateway holds: RssAnon flat within a MiB from
    # round 1 on (debug build: 8.4, 8.6, 8.9, 8.7, 8.8 MiB), the bursts' own peak in VmHWM. A leak of
    # 10 KiB per session shows as more than these bounds.
    grew = rss[-1] - rss[-3]
    assert grew < PLATEAU_MIB, f"RSS grew {grew:.1f} MiB in the last two rounds: {rss}"
    anon_grew = anon[-1] - anon[1]
    assert anon_grew < ANON_BOUND_MIB, f"RssAnon grew {anon_grew:.1f} MiB from round 1 to the last: {anon}"
