"""The approval flow in the modern era (2026-07-28): Python mcp 2.3.0's dual-era `Client` and the TS SDK
2.x client against tests/e2e/peers/modern_server.py (MCPServer, MRTR elicitation) through Portcullis.

A person approves through the control API (an `approvals.AutoApprover` thread on the event stream, or
explicit calls). One gateway serves the module; each test tags its calls with a unique marker.

Policy of the `modern` upstream: echo, greet and delete_everything need approval (entry timeout 30 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import pytest
from v2client import ELICIT_NAME, MODERN, Elicitations, assert_denial, first_text, open_client, result_view, run

import approvals
import harness
from approvals import AutoApprover, ControlApi

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
TIMEOUT = 30
CLIENT_JS = harness.TS_DIR / "client.mjs"


def marker() -> str:
    return uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def mworld(e2e_tmp: Path) -> dict[str, Any]:
    root = e2e_tmp / "approvals-mcp2"
    root.mkdir(parents=True)
    log = root / "modern.log"
    spec = harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "modern_server.py",
                                {"MODERN_SERVER_LOG": str(log)})
    return {"root": root, "log": log, "spec": spec}


@pytest.fixture(scope="module")
def mgw(mworld):
    entry = {"action": "require_approval", "approval_timeout": TIMEOUT}
    policy = {"version": "1", "default": "allow",
              "tools": {"echo": entry, "greet": entry, "delete_everything": entry}}
    config = harness.write_config(mworld["root"] / "gateway", {"modern": mworld["spec"]}, {"modern": policy})
    gw = harness.start_gateway(config, mworld["root"] / "data")
    yield gw
    harness.log(f"portcullis serve (approvals mcp2) exited with {gw.stop()}")


@pytest.fixture
def api(mgw) -> ControlApi:
    return ControlApi.of(mgw)


@pytest.fixture
def events(api):
    stream = api.subscribe()
    yield stream
    stream.close()


def log_text(mworld) -> str:
    return mworld["log"].read_text() if mworld["log"].exists() else ""


async def in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))


class Background:
    def __init__(self, tg: Any, fn: Callable[[], Awaitable[Any]]) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self._fn = fn
        tg.start_soon(self._run)

    async def _run(self) -> None:
        try:
            self.result = await self._fn()
        except Exception as e:
            self.error = e
        finally:
            self.done.set()

    async def wait(self, timeout: float = 15.0) -> Any:
        with anyio.fail_after(timeout):
            await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


# --------------------------------------------------------------------------------------------------
# 9. MRTR: one logical call, one prompt


@pytest.mark.parametrize("route", ROUTES)
def test_mrtr_call_is_approved_once(mworld, mgw, api, events, route):
    """greet answers input_required + requestState; the client elicits and retries under a new id.
    The person is asked once; the retry passes as `retry of a call already approved`."""
    m = marker()
    asked = Elicitations()
    before = log_text(mworld)
    approver = AutoApprover(events, lambda a: ("approve", "once") if approvals.mentions(a, m) else None)
    try:
        async def body():
            async with open_client(route, "modern", mworld["spec"], mgw, elicitation_callback=asked) as c:
                return c.protocol_version, await c.call_tool("greet", {"marker": m})

        version, result = run(body)
    finally:
        approver.stop()
    assert version == MODERN, f"the client must speak {MODERN} through the gateway: {version}"
    assert not result.is_error and first_text(result) == f"Hello, {ELICIT_NAME} ({m})", result_view(result)
    assert len(asked.asked) == 1 and m in asked.asked[0].message, "one elicitation round"
    requested = events.requested(m, "modern", "greet")
    assert len(requested) == 1, f"one logical call, one prompt; got {len(requested)}: {events.describe()}"
    approval = requested[0]["approval"]
    assert approval["arguments"] == {"marker": m}
    assert approval["client"]["name"] == "portcullis-e2e-mcp2", approval
    assert [d[2].status for d in approver.decided] == [200]
    assert log_text(mworld)[len(before):].count("greet") == 1, "the tool body runs once, after the input"

    rows = approvals.audit_rows(mgw, "modern", "greet", m, count=2)
    assert [r["decision"] for r in rows] == ["approved", "approved"], [r.raw for r in rows]
    assert rows[0]["decided_by"] == "user" and rows[0]["wait_ms"] is not None, rows[0].raw
    assert rows[1]["reason"] == "retry of a call already approved", rows[1].raw
    assert rows[0]["request_id"] != rows[1]["request_id"], "the retry comes under a new id"
    assert rows[0]["session"] == rows[1]["session"] == approval["session"]


def test_mrtr_continuation_is_not_a_blank_cheque(mworld, mgw, api, events):
    """After an approved MRTR round, a *new* greet with other arguments is asked again."""
    m1, m2 = marker(), marker()
    asked = Elicitations()
    approver = AutoApprover(events, lambda a: ("approve", "once")
                            if approvals.mentions(a, m1) or approvals.mentions(a, m2) else None)
    try:
        async def body():
            async with open_client("http", "modern", mworld["spec"], mgw, elicitation_callback=asked) as c:
                return await c.call_tool("greet", {"marker": m1}), await c.call_tool("greet", {"marker": m2})

        r1, r2 = run(body)
    finally:
        approver.stop()
    assert first_text(r1) == f"Hello, {ELICIT_NAME} ({m1})" and first_text(r2) == f"Hello, {ELICIT_NAME} ({m2})"
    assert len(events.requested(m1)) == 1 and len(events.requested(m2)) == 1, events.describe()


# --------------------------------------------------------------------------------------------------
# deny, cancel, progress in the modern era


@pytest.mark.parametrize("route", ROUTES)
def test_modern_deny_never_runs(mworld, mgw, api, events, route):
    m = marker()
    before = log_text(mworld)
    reason = f"not in production {m}"
    approver = AutoApprover(events, lambda a: ("deny", reason) if approvals.mentions(a, m) else None)
    try:
        async def body():
            async with open_client(route, "modern", mworld["spec"], mgw) as c:
                return c.protocol_version, await c.call_tool("delete_everything", {"marker": m})

        version, result = run(body)
    finally:
        approver.stop()
    assert version == MODERN
    assert_denial(result, "denied by the user", reason)
    assert "delete_everything" not in log_text(mworld)[len(before):], "a denied call must never run"
    (row,) = approvals.audit_rows(mgw, "modern", "delete_everything", m)
    assert row["decision"] == "rejected" and row["decided_by"] == "user" and row["outcome"] is None, row.raw


@pytest.mark.parametrize("route", ["http", "stdio"])
def test_modern_cancel_withdraws_held_call(mworld, mgw, api, events, route):
    """The mcp 2.x client abandons a held call (anyio cancel): over HTTP it closes the response stream,
    over stdio it sends notifications/cancelled to the relay. Either way the prompt is withdrawn (over
    HTTP after the gateway's short re-attach grace, 3 s, in which a re-issue could join it)."""
    m = marker()
    before = log_text(mworld)

    async def body():
        async with open_client(route, "modern", mworld["spec"], mgw) as c:
            async with anyio.create_task_group() as tg:
                Background(tg, lambda: c.call_tool("greet", {"marker": m}))
                ev = await in_thread(events.wait_requested, m, "modern", "greet")
                tg.cancel_scope.cancel()
            await in_thread(api.wait_pending, lambda p: all(a["id"] != ev["approval"]["id"] for a in p), 10,
                            "the cancelled call to leave the pending list")
            tools = await c.list_tools()  # the client stays usable
        return ev, tools

    ev, tools = run(body)
    assert "greet" in {t.name for t in tools.tools}
    resolved = events.wait_resolved(ev["approval"]["id"], timeout=5)
    assert resolved["decision"] == "cancelled" and resolved["decided_by"] == "client", resolved.data
    (row,) = approvals.audit_rows(mgw, "modern", "greet", m)
    assert row["decision"] == "cancelled" and row["decided_by"] == "client", row.raw
    late = api.approve(ev["approval"]["id"])
    assert late.status in (404, 409), late
    assert "greet" not in log_text(mworld)[len(before):]


def test_modern_progress_while_held(mworld, mgw, api, events):
    m = marker()
    seen: list[tuple[float, str | None]] = []

    async def body():
        got = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, message))
            got.set()

        async with open_client("http", "modern", mworld["spec"], mgw) as c:
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: c.call_tool("echo", {"message": m}, progress_callback=on_progress))
                ev = await in_thread(events.wait_requested, m, "modern", "echo")
                with anyio.fail_after(5):
                    await got.wait()
                await in_thread(api.approve, ev["approval"]["id"])
                return await call.wait()

    result = run(body)
    assert first_text(result) == f"Echo: {m}"
    assert seen and all(msg and "waiting for approval" in msg for _, msg in seen), seen


# --------------------------------------------------------------------------------------------------
# The TS SDK 2.x client


def ts_client(plan: dict[str, Any]) -> dict[str, Any]:
    r = subprocess.run([harness.node_bin(), str(CLIENT_JS), json.dumps(plan)], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"client.mjs exited {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(r.stdout.strip().split("\n")[-1])


def test_ts_client_held_then_approved_and_denied(mworld, mgw, api, events):
    m = marker()
    approver = AutoApprover(events, lambda a: None if not approvals.mentions(a, m) else
                            ("approve", "once") if a["tool"] == "echo" else ("deny", f"ts says no {m}"))
    spec = mworld["spec"]
    calls = [{"name": "echo", "arguments": {"message": m}}, {"name": "delete_everything", "arguments": {"marker": m}}]
    try:
        t0 = time.monotonic()
        via = ts_client({"url": mgw.mcp_url("modern"), "token": mgw.token, "calls": calls})
        elapsed = time.monotonic() - t0
    finally:
        approver.stop()
    direct = ts_client({"stdio": {"command": spec["command"], "args": spec["args"], "env": spec.get("env") or {}},
                        "calls": calls[:1]})
    assert via["protocolVersion"] == MODERN, via
    echo, deleted = via["results"]
    assert "thrown" not in echo and "thrown" not in deleted, via["results"]
    assert echo == direct["results"][0], "an approved call gets the upstream's real result"
    assert deleted.get("isError") is True and f"ts says no {m}" in harness.denial_text(deleted["content"])
    assert {a["tool"] for a, *_ in approver.decided} == {"echo", "delete_everything"}
    assert all(a["client"]["name"] == "portcullis-e2e-ts" for a, *_ in approver.decided), approver.decided
    rows = approvals.audit_rows(mgw, "modern", "echo", m)
    assert rows[0]["decision"] == "approved", rows[0].raw
    harness.log(f"TS client: two held calls decided in {elapsed:.2f} s")
