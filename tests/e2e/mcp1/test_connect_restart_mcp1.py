"""The keeper is not in the way (DESIGN §1, issue 31): `portcullis connect` runs the gate itself and
starts its server, so a keeper (`portcullis serve`) that stops and starts again under a connected
Python mcp 1.x client touches neither the server's process and state nor the allowed calls. A call
held at that moment is asked again of the keeper started in its place, with no second prompt, and a
person approving it there answers the waiting call; the next held call is asked of the new keeper.

Also: two `connect`s started at once with no keeper running start exactly one keeper.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

import harness
from approvals import ControlApi

POLICY = {
    "version": "1",
    "default": "allow",
    "tools": {"count": {}, "ask": {"action": "require_approval"}},
}
CALL_TIMEOUT = 30.0
COUNTER = harness.PEERS_DIR / "counter_server.py"


def own_world(root: Path) -> tuple[Path, Path]:
    server = harness.python_stdio(Path(sys.executable), COUNTER)
    config = harness.write_config(root / "gateway", {"counter": server}, {"counter": POLICY},
                                  approval_timeout_secs=30)
    return config, root / "data"


def text_of(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def counted(result) -> tuple[int, int]:
    """(n, pid) from the counter server's answer."""
    m = re.search(r"n=(\d+) pid=(\d+)", text_of(result))
    assert m and not result.isError, f"a count: {result}"
    return int(m.group(1)), int(m.group(2))


def test_a_keeper_restart_leaves_the_server_and_allowed_calls_alone(e2e_tmp):
    config, data = own_world(e2e_tmp / f"restart-{uuid.uuid4().hex[:8]}")
    first = harness.start_gateway(config, data)
    figures: dict[str, float] = {}
    marker = uuid.uuid4().hex[:8]

    async def scenario() -> None:
        argv = first.connect_argv("counter")
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=get_default_environment())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(CALL_TIMEOUT):
                await session.initialize()
                n, pid = counted(await session.call_tool("count", {}))
            assert n == 1, n

            held: dict[str, object] = {}
            held_done = anyio.Event()

            async def held_call() -> None:
                held["result"] = await session.call_tool("ask", {"marker": marker})
                held_done.set()

            api = ControlApi.of(first)
            approver = await anyio.to_thread.run_sync(api.subscribe)  # so the call is held, not refused
            await anyio.to_thread.run_sync(approver.wait_attached)
            async with anyio.create_task_group() as tg:
                tg.start_soon(held_call)
                before = await anyio.to_thread.run_sync(lambda: api.wait_pending(
                    lambda p: [a for a in p if a.get("tool") == "ask"], 20.0, "the held call"))
                assert before[0]["asked_before"] is False
                stopped_at = time.monotonic()
                code = await anyio.to_thread.run_sync(first.stop)
                assert code is not None, "the old keeper stopped"
                await anyio.to_thread.run_sync(approver.close)

                # No keeper for a moment: allowed calls go on, on the same server process.
                with anyio.fail_after(CALL_TIMEOUT):
                    n, same = counted(await session.call_tool("count", {}))
                assert (n, same) == (2, pid), f"the server kept its process and state: n={n} pid={same} (was {pid})"

                # The held call is asked again of the keeper `connect` starts in its place, with no
                # second prompt; a person approving it there answers the waiting call.
                new = await anyio.to_thread.run_sync(lambda: running_keeper(data, other_than=first.pid))
                api = ControlApi(new["url"], new["token"])
                approver = await anyio.to_thread.run_sync(api.subscribe)
                await anyio.to_thread.run_sync(approver.wait_attached)
                again = await anyio.to_thread.run_sync(lambda: api.wait_pending(
                    lambda p: [a for a in p if marker in json.dumps(a.get("arguments"))], 20.0,
                    "the held call asked again of the new keeper"))
                figures["held_call_asked_again_s"] = time.monotonic() - stopped_at
                assert again[0]["asked_before"] is True, again[0]
                assert again[0]["expires_at_ms"] == before[0]["expires_at_ms"], "its deadline is kept"
                reply = await anyio.to_thread.run_sync(lambda: api.approve(again[0]["id"], "once"))
                assert reply.status == 200, reply
                with anyio.fail_after(CALL_TIMEOUT):
                    await held_done.wait()
            assert f"asked {marker} pid={pid}" in text_of(held["result"]), held["result"]
            # The new keeper lists the client's session, announced again by its `connect`.
            sessions = (await anyio.to_thread.run_sync(lambda: api.request("GET", "/control/sessions"))).json()
            mine = [s for s in sessions if s["server"] == "counter" and s["via"] == "connect"]
            assert len(mine) == 1 and mine[0]["client"]["name"] and mine[0]["pid"] != new["pid"], sessions

            with anyio.fail_after(CALL_TIMEOUT):
                n, same = counted(await session.call_tool("count", {}))
            assert (n, same) == (3, pid), f"after the new keeper: n={n} pid={same} (was {pid})"

            # The next held call is asked of the new keeper (a prompt of its own), and approved there.
            async with anyio.create_task_group() as tg:
                later: dict[str, object] = {}

                async def call_again() -> None:
                    later["result"] = await session.call_tool("ask", {"marker": f"again-{marker}"})

                tg.start_soon(call_again)
                pending = await anyio.to_thread.run_sync(lambda: api.wait_pending(
                    lambda p: [a for a in p if f"again-{marker}" in json.dumps(a.get("arguments"))], 20.0,
                    "the next held call at the new keeper"))
                assert pending[0]["asked_before"] is False
                await anyio.to_thread.run_sync(lambda: api.approve(pending[0]["id"], "once"))
            await anyio.to_thread.run_sync(approver.close)
            assert f"asked again-{marker} pid={pid}" in text_of(later["result"]), later

    try:
        anyio.run(scenario)
        rows = first.audit_db("tool = 'ask' AND arguments LIKE ?", (f"%{marker}%",))
        decisions = sorted(r["decision"] for r in rows)
        assert decisions == ["approved", "approved"], [r.raw for r in rows]
        counts = first.audit_db("tool = 'count'", ())
        assert len(counts) == 3 and all(r["decision"] == "allowed" for r in counts), [r.raw for r in counts]
    finally:
        first.stop()
        stop_keepers(data)
    harness.log(f"keeper restart figures: {json.dumps({k: round(v, 3) for k, v in figures.items()})}")
    print(f"keeper restart figures: {figures}", file=sys.stderr)


def running_keeper(data: Path, other_than: int, timeout: float = 30.0) -> dict:
    """gateway.json of the keeper running for `data` that is not `other_than`, once it answers."""
    def read() -> dict | None:
        try:
            info = json.loads((data / "gateway.json").read_text())
        except (OSError, ValueError):
            return None
        if info.get("pid") == other_than or not info.get("url"):
            return None
        try:
            ControlApi(info["url"], info["token"]).pending()
        except Exception:
            return None
        return info
    return harness.wait_until(read, timeout, "a keeper started in the old one's place")


def stop_keepers(data: Path) -> None:
    """Stops the keepers `connect` started for `data`."""
    for pid in serve_processes(data):
        os.kill(pid, 15)
    harness.wait_until(lambda: not serve_processes(data), 15.0, "the started keepers to stop")


def serve_processes(data: Path) -> list[int]:
    """pids of `portcullis serve` processes for this data dir."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(data).encode() in argv:
            pids.append(int(entry.name))
    return pids


def test_two_connects_at_once_start_one_keeper(e2e_tmp):
    config, data = own_world(e2e_tmp / f"ondemand-{uuid.uuid4().hex[:8]}")
    argv = [str(harness.portcullis_bin()), "connect", "counter", "--data-dir", str(data), "--config", str(config)]
    init = dict(harness.INITIALIZE_BODY)
    relays = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]
    started = time.monotonic()
    try:
        answers = []
        for relay in relays:
            relay.stdin.write((json.dumps(init) + "\n").encode())
            relay.stdin.flush()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            lines = [pool.submit(relay.stdout.readline) for relay in relays]
            for line in lines:
                answers.append(json.loads(line.result(timeout=40.0)))
        ready_s = time.monotonic() - started
        for answer in answers:
            assert answer.get("id") == 1 and "result" in answer, f"initialized by connect itself: {answer}"
        # The keeper is started in the background; nothing above waited for it.
        info = harness.wait_until(lambda: (data / "gateway.json").exists() and serve_processes(data), 30.0,
                                  "the keeper started in the background")
        started_s = time.monotonic() - started
        pids = serve_processes(data)
        assert len(pids) == 1, f"exactly one keeper was started: {pids} ({info})"
        assert (data / "serve.log").exists(), "the started keeper logs to the data dir"
        harness.log(f"on-demand start: both clients initialized {ready_s:.3f} s after start, "
                    f"the keeper ready {started_s:.3f} s after")
    finally:
        for relay in relays:
            relay.stdin.close()
            try:
                relay.wait(timeout=10)
            except subprocess.TimeoutExpired:
                relay.kill()
        stop_keepers(data)


def test_a_call_decided_in_connect_is_announced_by_the_keeper(e2e_tmp):
    """The audit viewer follows the keeper's events: a call `connect` decided and committed in its
    own process is announced there as `AuditAppended` (the keeper follows the shared audit)."""
    config, data = own_world(e2e_tmp / f"announced-{uuid.uuid4().hex[:8]}")
    keeper = harness.start_gateway(config, data)
    try:
        events = ControlApi.of(keeper).subscribe()
        try:
            events.wait_attached()
            argv = keeper.connect_argv("counter")
            lines = [harness.INITIALIZE_BODY, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {}}}]
            r = subprocess.run(argv, input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True,
                               text=True, timeout=60)
            answers = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
            assert any(a.get("id") == 2 and "result" in a for a in answers), answers
            (row,) = keeper.audit_db("tool = 'count'", ())
            seen = events.wait_for(lambda e: e.get("type") == "AuditAppended" and e.get("id") == row["id"],
                                   timeout=10, what="the keeper announcing the row connect committed")
            data = seen.data
            assert (data["server"], data["tool"], data["decision"]) == ("counter", "count", "allowed"), data
        finally:
            events.close()
    finally:
        keeper.stop()


def test_killing_connect_under_load_loses_no_decision_of_a_forwarded_call(e2e_tmp):
    """Issue 31 point 4: every `connect` commits its decision before it forwards, so a data plane
    killed (SIGKILL) with calls in flight leaves a row for every call its server saw: the ones
    answered, and the slow one still running (its outcome never filled in)."""
    root = e2e_tmp / f"killed-{uuid.uuid4().hex[:8]}"
    policy = {"version": "1", "default": "allow"}
    config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                  {"everything": policy})
    data = root / "data"
    keeper = harness.start_gateway(config, data)
    m = uuid.uuid4().hex[:8]
    proc = subprocess.Popen(keeper.connect_argv("everything"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        def call(rid: int, name: str, arguments: dict) -> bytes:
            body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
            return (json.dumps(body) + "\n").encode()

        proc.stdin.write((json.dumps(harness.INITIALIZE_BODY) + "\n").encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.write(call(2, "trigger-long-running-operation", {"duration": 30, "steps": 30, "marker": m}))
        proc.stdin.write(b"".join(call(10 + i, "echo", {"message": f"{m} {i}"}) for i in range(30)))
        proc.stdin.flush()
        answered: list[int] = []
        while len(answered) < 30:
            line = proc.stdout.readline()
            assert line, f"connect ended early; answered {answered}"
            answer = json.loads(line)
            if isinstance(answer.get("id"), int) and answer["id"] >= 10:
                answered.append(answer["id"])
        keeper.audit_rows_for("everything", "trigger-long-running-operation", m)  # in flight, recorded
        proc.kill()
        proc.wait(timeout=10)
        echoes = keeper.audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{m}%",))
        assert len(echoes) == 30 and all(r["decision"] == "allowed" for r in echoes), [r.raw for r in echoes]
        (slow,) = keeper.audit_db("tool = 'trigger-long-running-operation' AND arguments LIKE ?", (f"%{m}%",))
        assert slow["decision"] == "allowed" and slow["outcome"] is None, slow.raw
    finally:
        if proc.poll() is None:
            proc.kill()
        keeper.stop()
