"""The keeper is not in the way, for the other clients of issue 31 point 3 (the Python mcp 1.x case,
with a server that counts its calls, is tests/e2e/mcp1/test_connect_restart_mcp1.py): the Python mcp
2.3.0 `Client`, the TypeScript SDK v2 client and the Vercel AI SDK's own MCP client, each launching
`portcullis connect`, keep one client session across a keeper stop and a new keeper on the same data
dir, and no call fails: `connect` runs the gate and the server itself.

For mcp 2.x a slow call is in flight at the stop: it goes on to its answer. The gap the client sees
(stop → the first answer after it) is logged.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest

import harness
from mcp.shared.exceptions import MCPError
from v2client import open_client

pytestmark = pytest.mark.gateway

POLICY = {"version": "1", "default": "allow", "tools": {"echo": {}}}
CALL_TIMEOUT = 30.0
NODE_CLIENTS = {"TS SDK": "client.mjs", "AI SDK": "aisdk_client.mjs"}


def own_world(root: Path) -> tuple[Path, Path]:
    config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                  {"everything": POLICY})
    return config, root / "data"


def text_of(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_a_python_mcp2_client_and_its_call_in_flight_survive_a_keeper_restart(e2e_tmp):
    config, data = own_world(e2e_tmp / f"restart2-{uuid.uuid4().hex[:8]}")
    gateways = [harness.start_gateway(config, data)]
    marker = uuid.uuid4().hex[:8]
    figures: dict[str, float] = {}
    failed: list[str] = []

    async def scenario() -> None:
        async with open_client("stdio", "everything", {}, gateways[0]) as client:
            with anyio.fail_after(CALL_TIMEOUT):
                first = await client.call_tool("echo", {"message": f"before {marker}"})
            assert f"before {marker}" in text_of(first), first
            slow: dict[str, object] = {}
            slow_done = anyio.Event()

            async def slow_call() -> None:
                try:
                    slow["result"] = await client.call_tool("trigger-long-running-operation",
                                                            {"duration": 20, "steps": 20, "marker": marker})
                except MCPError as e:
                    slow["error"] = e
                slow_done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                # The slow call is in flight once the old gateway has audited it.
                await anyio.to_thread.run_sync(lambda: gateways[0].audit_rows_for(
                    "everything", "trigger-long-running-operation", marker))
                stopped_at = time.monotonic()
                assert await anyio.to_thread.run_sync(gateways[0].stop) is not None, "the old gateway stopped"
                with anyio.fail_after(CALL_TIMEOUT):
                    await slow_done.wait()
            # The server runs in `connect`, not in the keeper: the call in flight goes on to its answer.
            if "error" in slow or getattr(slow.get("result"), "is_error", False):
                failed.append("trigger-long-running-operation")
            gateways.append(await anyio.to_thread.run_sync(lambda: harness.start_gateway(config, data)))
            figures["new_gateway_ready_s"] = time.monotonic() - stopped_at
            for i in range(3):
                with anyio.fail_after(CALL_TIMEOUT):
                    after = await client.call_tool("echo", {"message": f"after {i} {marker}"})
                if i == 0:
                    figures["gap_s"] = time.monotonic() - stopped_at
                assert not after.is_error and f"after {i} {marker}" in text_of(after), after

    try:
        anyio.run(scenario)
        echoes = gateways[-1].audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{marker}%",))
        assert len(echoes) == 4 and all(r["decision"] == "allowed" for r in echoes), [r.raw for r in echoes]
    finally:
        for gw in gateways:
            gw.stop()
    assert failed == [], f"no call failed, not even the one in flight at the stop: {failed}"
    harness.log(f"keeper restart figures (mcp 2.x): {json.dumps({k: round(v, 3) for k, v in figures.items()})}, "
                f"calls failed: {len(failed)}")


@pytest.mark.parametrize("label", NODE_CLIENTS)
def test_a_node_client_survives_a_keeper_restart(e2e_tmp, label):
    config, data = own_world(e2e_tmp / f"restart-node-{uuid.uuid4().hex[:8]}")
    gateways = [harness.start_gateway(config, data)]
    marker = uuid.uuid4().hex[:8]
    argv = gateways[0].connect_argv("everything")
    plan = {"stdio": {"command": argv[0], "args": argv[1:]}, "calls": [
        {"name": "echo", "arguments": {"message": f"before {marker}"}},
        {"signal": "restart-now"},
        {"await": True},
        *({"name": "echo", "arguments": {"message": f"after {i} {marker}"}} for i in range(3)),
    ]}
    script = harness.TS_DIR / NODE_CLIENTS[label]
    proc = subprocess.Popen([harness.node_bin(), str(script), json.dumps(plan)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        signal = json.loads(proc.stdout.readline() or "{}")
        assert signal == {"signal": "restart-now"}, f"the client reached the restart point: {signal}"
        stopped_at = time.monotonic()
        assert gateways[0].stop() is not None, "the old gateway stopped"
        gateways.append(harness.start_gateway(config, data))
        ready_s = time.monotonic() - stopped_at
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=CALL_TIMEOUT)
        gap_s = time.monotonic() - stopped_at
        assert proc.returncode == 0, f"{script.name} exited {proc.returncode}: {err[-2000:]}"
        result = json.loads(out.strip().splitlines()[-1])
        texts = [harness.denial_text(r.get("content", [])) if "thrown" not in r else r["thrown"]
                 for r in result["results"]]
        expected = [f"Echo: before {marker}", *(f"Echo: after {i} {marker}" for i in range(3))]
        assert texts == expected, f"every call succeeded, on one client session: {texts}"
        echoes = gateways[-1].audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{marker}%",))
        assert len(echoes) == 4, [r.raw for r in echoes]
        harness.log(f"restart figures ({label}): new gateway ready {ready_s:.3f} s, first answer after the stop "
                    f"{gap_s:.3f} s (including the node client's exit), first call after "
                    f"{result['callMs'][1]:.1f} ms, calls failed: 0")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for gw in gateways:
            gw.stop()


COUNTER_POLICY = {"version": "1", "default": "allow", "tools": {"count": {}}}
PLAN_CLIENTS = {
    "TS SDK": lambda: [harness.node_bin(), str(harness.TS_DIR / "client.mjs")],
    "Python mcp 1.x": lambda: [str(harness.VENV1 / "bin" / "python"), str(harness.PEERS_DIR / "plan_client_mcp1.py")],
}


def counted(text: str) -> tuple[int, int]:
    """(n, pid) from the counter server's answer."""
    m = re.search(r"n=(\d+) pid=(\d+)", text)
    assert m, f"a count: {text!r}"
    return int(m.group(1)), int(m.group(2))


def test_three_clients_keep_their_servers_and_counts_through_a_keeper_restart(e2e_tmp):
    """Issue 31 point 3: the keeper restarts under three connected clients at once — Python mcp
    2.x (here), the TypeScript SDK and Python mcp 1.x (processes of their own, run by a plan) — each
    through its own `connect` to its own counter server. Every counter goes on from where it was,
    in the same server process, and no allowed call fails (one is made while no keeper runs)."""
    root = e2e_tmp / f"restart3-{uuid.uuid4().hex[:8]}"
    counter = harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "counter_server.py")
    config = harness.write_config(root / "gateway", {"counter": counter}, {"counter": COUNTER_POLICY})
    data = root / "data"
    gateways = [harness.start_gateway(config, data)]
    argv = gateways[0].connect_argv("counter")
    plan = {"stdio": {"command": argv[0], "args": argv[1:]}, "calls": [
        {"name": "count", "arguments": {}}, {"signal": "restart-now"}, {"await": True},
        *({"name": "count", "arguments": {}} for _ in range(3)),
    ]}
    procs = {label: subprocess.Popen([*command(), json.dumps(plan)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
             for label, command in PLAN_CLIENTS.items()}
    counts: dict[str, list[tuple[int, int]]] = {}

    async def scenario() -> None:
        async with open_client("stdio", "counter", {}, gateways[0]) as client:
            async def count() -> tuple[int, int]:
                with anyio.fail_after(CALL_TIMEOUT):
                    result = await client.call_tool("count", {})
                assert not result.is_error, result
                return counted(text_of(result))

            mine = [await count()]
            for label, proc in procs.items():
                line = await anyio.to_thread.run_sync(proc.stdout.readline)
                assert json.loads(line or "{}") == {"signal": "restart-now"}, f"{label} reached the restart: {line!r}"
            assert await anyio.to_thread.run_sync(gateways[0].stop) is not None, "the old keeper stopped"
            mine.append(await count())  # no keeper runs now
            gateways.append(await anyio.to_thread.run_sync(lambda: harness.start_gateway(config, data)))
            for proc in procs.values():
                proc.stdin.write("go\n")
                proc.stdin.flush()
            mine += [await count(), await count()]
            counts["Python mcp 2.x"] = mine

    try:
        anyio.run(scenario)
        for label, proc in procs.items():
            out, err = proc.communicate(timeout=CALL_TIMEOUT)
            assert proc.returncode == 0, f"{label} exited {proc.returncode}: {err[-2000:]}"
            results = json.loads(out.strip().splitlines()[-1])["results"]
            assert all("thrown" not in r and not r.get("isError") for r in results), f"{label}: {results}"
            counts[label] = [counted(harness.denial_text(r.get("content", []))) for r in results]
        for label, seen in counts.items():
            pids = {pid for _, pid in seen}
            assert [n for n, _ in seen] == [1, 2, 3, 4] and len(pids) == 1, \
                f"{label}: its counter went on in one server process: {seen}"
        assert len({seen[0][1] for seen in counts.values()}) == 3, f"three servers, one per client: {counts}"
        rows = gateways[-1].audit_db("tool = 'count'", ())
        assert len(rows) == 12 and all(r["decision"] == "allowed" for r in rows), [r.raw for r in rows]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        for gw in gateways:
            gw.stop()
    harness.log(f"keeper restart under three clients: {json.dumps(counts)}")
