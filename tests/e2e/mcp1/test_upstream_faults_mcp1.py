"""Misbehaving stdio upstreams, through Portcullis, with the mcp 1.x client over both gateway routes.

  crashy   peers/crashy_server.py: `crash_soon` exits the process (status 3) in the middle of a call.
           The gateway must answer every call pending on that child with a JSON-RPC error (message says
           the server `exited`) within a second, audit the crashed call as outcome `failure`, leave other
           sessions' children alone, and give the next session a fresh child.
  garbage  peers/garbage_server.py: writes non-JSON lines (text, invalid UTF-8, half JSON) to stdout at
           start-up and before every answer. The gateway must ignore them (and say so in its log), so
           calls succeed as if the lines were not there.

The module runs a gateway of its own (these upstreams are not in the shared conftest world).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import McpError
from v1client import first_text, open_session, result_view, run, wait_file_contains

import harness

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
ALLOW_ALL = {"version": "1", "default": "allow"}
CRASH_TO_ERROR_LIMIT = 1.0  # seconds from the process exiting to the pending call's error answer
CRASHY = harness.PEERS_DIR / "crashy_server.py"
GARBAGE = harness.PEERS_DIR / "garbage_server.py"


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


def alive(pid: int) -> bool:
    """Running and not a zombie (a crashed child the gateway has not reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


@pytest.fixture(scope="module")
def crashy_log(e2e_tmp: Path) -> Path:
    return e2e_tmp / f"faults-{uuid.uuid4().hex[:8]}-crashy.log"


@pytest.fixture(scope="module")
def specs(crashy_log: Path) -> dict[str, dict]:
    python = Path(sys.executable)
    return {
        "crashy": harness.python_stdio(python, CRASHY, {"CRASHY_SERVER_LOG": str(crashy_log)}),
        "garbage": harness.python_stdio(python, GARBAGE),
    }


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path, specs):
    root = e2e_tmp / f"faults-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root, specs, {"crashy": ALLOW_ALL, "garbage": ALLOW_ALL})
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (faults) exited with {gateway.stop()}")


# ---- crash mid-call ---------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
def test_upstream_crash_answers_pending_calls_and_next_session_gets_a_new_child(gw, specs, crashy_log, route):
    m = marker()
    spec = specs["crashy"]

    async def body():
        out: dict[str, object] = {}

        async def call(session, key: str, tool: str, args: dict) -> None:
            try:
                out[key] = ("result", await session.call_tool(tool, args), time.time())
            except McpError as e:
                out[key] = ("error", e, time.time())

        # Session A (whose child will crash) and session B (its own child, must be unaffected).
        async with open_session(route, "crashy", spec, gw) as (a, _), \
                open_session(route, "crashy", spec, gw) as (b, _):
            pid_a = int(first_text(await a.call_tool("pid", {"marker": m})))
            pid_b = int(first_text(await b.call_tool("pid", {"marker": m})))
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, a, "hang", "hang", {"marker": m, "seconds": 60})
                await wait_file_contains(crashy_log, f"hang {m} {pid_a}", 15)  # the pending call is running
                tg.start_soon(call, a, "crash", "crash_soon", {"marker": m})
            out["b_after"] = await b.call_tool("echo", {"message": f"b {m}"})
        # A brand-new session after the crash.
        async with open_session(route, "crashy", spec, gw) as (c, _):
            out["pid_c"] = int(first_text(await c.call_tool("pid", {"marker": m})))
            out["c_echo"] = await c.call_tool("echo", {"message": f"c {m}"})
        return pid_a, pid_b, out

    pid_a, pid_b, out = run(body, timeout=45)
    assert pid_a != pid_b, "each legacy session must get a child of its own"

    crash_line = next(line for line in crashy_log.read_text().splitlines() if line.startswith(f"crash {m} "))
    crashed_at = float(crash_line.split()[3])
    assert int(crash_line.split()[2]) == pid_a

    for key in ("hang", "crash"):
        kind, value, answered_at = out[key]
        assert kind == "error", f"{key}: a call pending on a crashed child must get a JSON-RPC error, got {value!r}"
        assert "exited" in value.error.message, f"{key}: error must say the server exited: {value.error!r}"
        latency = answered_at - crashed_at
        harness.log(f"[{route}] crash -> {key} error answer: {latency * 1000:.0f} ms")
        assert latency < CRASH_TO_ERROR_LIMIT, f"{key}: error came {latency:.3f}s after the crash"

    assert first_text(out["b_after"]) == f"Echo: b {m}", "another session's child must not be affected"
    assert out["pid_c"] not in (pid_a, pid_b), "a new session must get a freshly started child"
    assert first_text(out["c_echo"]) == f"Echo: c {m}"
    harness.wait_until(lambda: not alive(pid_a), 5.0, f"crashed child {pid_a} to be gone")

    (crash_row,) = gw.audit_rows_for("crashy", "crash_soon", m, settled=True)
    assert (crash_row["decision"], crash_row["outcome"]) == ("allowed", "failure"), crash_row.raw
    (hang_row,) = gw.audit_rows_for("crashy", "hang", m, settled=True)
    assert (hang_row["decision"], hang_row["outcome"]) == ("allowed", "failure"), hang_row.raw


# ---- garbage on stdout ------------------------------------------------------------------------------


def test_direct_garbage_server_really_writes_garbage():
    """Baseline, no gateway: the peer's stdout carries the non-JSON lines, before and between answers."""
    proc = subprocess.Popen([sys.executable, str(GARBAGE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(raw) for raw in iter(proc.stdout.readline, b"")], daemon=True).start()

    def send(msg: dict) -> None:
        proc.stdin.write(json.dumps(msg).encode() + b"\n")
        proc.stdin.flush()

    def read_until_id(want: int) -> list[bytes]:
        got, deadline = [], time.monotonic() + 15
        while True:
            raw = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            got.append(raw)
            try:
                if json.loads(raw).get("id") == want:
                    return got
            except ValueError:
                pass

    try:
        send(harness.INITIALIZE_BODY)
        before_init = read_until_id(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"message": "x"}}})
        before_call = read_until_id(2)
    finally:
        proc.kill()
        proc.wait(timeout=5)
    for got in (before_init, before_call):
        assert b"garbage line\n" in got and b"\xff\xfe\n" in got and b"{not json\n" in got, got
    assert json.loads(before_call[-1])["result"]["content"][0]["text"] == "Echo: x"


@pytest.mark.parametrize("route", ROUTES)
def test_garbage_on_upstream_stdout_is_ignored(gw, specs, route):
    m = marker()
    logged_before = sum("non-JSON" in line and "garbage" in line for line in gw.proc.lines)

    async def body():
        async with open_session(route, "garbage", specs["garbage"], gw) as (s, _):
            tools = sorted(t.name for t in (await s.list_tools()).tools)
            echoes = [await s.call_tool("echo", {"message": f"{m} {i}"}) for i in range(3)]
            added = await s.call_tool("add", {"a": 2, "b": 40})
            return tools, echoes, added

    tools, echoes, added = run(body, timeout=30)
    assert tools == ["add", "echo"]
    for i, r in enumerate(echoes):
        assert r.isError is not True and first_text(r) == f"Echo: {m} {i}", result_view(r)
    assert result_view(added)["structuredContent"] == {"result": 42}, result_view(added)

    rows = gw.audit_rows_for("garbage", "echo", m, count=3, settled=True)
    assert [r["outcome"] for r in rows] == ["ok"] * 3, [r.raw for r in rows]

    if route != "http":
        return  # through `connect` the gate (and its log) is the connect process's: its stderr, the client's
    # Start-up (3 lines) + 4 calls x 3 lines, each logged as ignored; at least the calls' ones by now.
    harness.wait_until(
        lambda: sum("non-JSON" in line and "garbage" in line for line in gw.proc.lines) - logged_before >= 12,
        5.0, "the gateway to log the ignored non-JSON lines")
