"""`portcullis connect` outlives the gateway (DESIGN §1, issue 14): a Python mcp 1.x ClientSession
talks through `connect`, the gateway is stopped and a new one started on the same data dir, and the
same client session's next call succeeds. A call held for approval at that moment fails with the
`[portcullis]` restart error and the old gateway records it `cancelled`.

Also: two `connect`s started at once with no gateway running start exactly one gateway.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

import harness
from approvals import ControlApi

RESTARTED = "[portcullis] the gateway restarted; the call was not completed"
POLICY = {
    "version": "1",
    "default": "allow",
    "tools": {"echo": {}, "get-tiny-image": {"action": "require_approval"}},
}
CALL_TIMEOUT = 30.0


def own_world(root: Path) -> tuple[Path, Path]:
    config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                  {"everything": POLICY}, approval_timeout_secs=30)
    return config, root / "data"


def text_of(result) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_a_client_session_survives_a_gateway_restart(e2e_tmp):
    config, data = own_world(e2e_tmp / f"restart-{uuid.uuid4().hex[:8]}")
    gateways = [harness.start_gateway(config, data)]
    info = json.loads((data / "gateway.json").read_text())
    assert info.get("socket") and Path(info["socket"]).exists(), f"the gateway names its local socket: {info}"
    figures: dict[str, float] = {}
    marker = uuid.uuid4().hex[:8]

    async def scenario() -> None:
        argv = gateways[0].connect_argv("everything")
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=get_default_environment())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(CALL_TIMEOUT):
                await session.initialize()
                first = await session.call_tool("echo", {"message": f"before {marker}"})
            assert not first.isError and f"before {marker}" in text_of(first), first

            held: dict[str, object] = {}
            held_done = anyio.Event()

            async def held_call() -> None:
                try:
                    held["result"] = await session.call_tool("get-tiny-image", {"marker": marker})
                except Exception as e:  # the restart error arrives as an McpError
                    held["error"] = e
                held_done.set()

            api = ControlApi.of(gateways[0])
            approver = await anyio.to_thread.run_sync(api.subscribe)  # so the call is held, not refused
            await anyio.to_thread.run_sync(approver.wait_attached)
            async with anyio.create_task_group() as tg:
                tg.start_soon(held_call)
                await anyio.to_thread.run_sync(lambda: api.wait_pending(
                    lambda p: [a for a in p if a.get("tool") == "get-tiny-image"], 20.0, "the held call"))
                stopped_at = time.monotonic()
                code = await anyio.to_thread.run_sync(gateways[0].stop)
                assert code is not None, "the old gateway stopped"
                await anyio.to_thread.run_sync(approver.close)
                with anyio.fail_after(CALL_TIMEOUT):
                    await held_done.wait()
            assert "error" in held and RESTARTED in str(held["error"]), f"the held call fails clearly: {held}"

            gateways.append(await anyio.to_thread.run_sync(lambda: harness.start_gateway(config, data)))
            figures["new_gateway_ready_s"] = time.monotonic() - stopped_at
            asked = time.monotonic()
            with anyio.fail_after(CALL_TIMEOUT):
                after = await session.call_tool("echo", {"message": f"after {marker}"})
            figures["gap_s"] = time.monotonic() - stopped_at
            figures["first_call_after_s"] = time.monotonic() - asked
            assert not after.isError and f"after {marker}" in text_of(after), after
            # Still the same client session: more calls, with the client's own ids going on.
            with anyio.fail_after(CALL_TIMEOUT):
                again = await session.call_tool("echo", {"message": f"again {marker}"})
            assert f"again {marker}" in text_of(again)

    try:
        anyio.run(scenario)
        rows = gateways[-1].audit_db("tool = ? AND arguments LIKE ?", ("get-tiny-image", f"%{marker}%"))
        assert [r["decision"] for r in rows] == ["cancelled"], [r.raw for r in rows]
        echoes = gateways[-1].audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{marker}%",))
        assert len(echoes) == 3 and all(r["decision"] == "allowed" for r in echoes), [r.raw for r in echoes]
    finally:
        for gw in gateways:
            gw.stop()
    harness.log(f"restart figures: {json.dumps({k: round(v, 3) for k, v in figures.items()})}")
    print(f"restart figures: {figures}", file=sys.stderr)


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


def test_two_connects_at_once_start_one_gateway(e2e_tmp):
    config, data = own_world(e2e_tmp / f"ondemand-{uuid.uuid4().hex[:8]}")
    argv = [str(harness.portcullis_bin()), "connect", "everything", "--data-dir", str(data), "--config", str(config)]
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
            assert answer.get("id") == 1 and "result" in answer, f"initialized through the started gateway: {answer}"
        pids = serve_processes(data)
        assert len(pids) == 1, f"exactly one gateway was started: {pids}"
        assert (data / "serve.log").exists(), "the started gateway logs to the data dir"
        harness.log(f"on-demand start: both clients initialized {ready_s:.3f} s after start")
    finally:
        for relay in relays:
            relay.stdin.close()
            try:
                relay.wait(timeout=10)
            except subprocess.TimeoutExpired:
                relay.kill()
        for pid in serve_processes(data):
            os.kill(pid, 15)
        harness.wait_until(lambda: not serve_processes(data), 15.0, "the started gateway to stop")
