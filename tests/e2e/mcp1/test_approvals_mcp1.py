"""The approval flow end to end, with the Python mcp 1.x client and real servers.

A call whose policy entry is `require_approval` is held until a person decides through the control
API (`/control/approvals`, `/control/events`) or the CLI (`portcullis approvals ...`). These tests
play both the agent (an mcp 1.x `ClientSession` over the gateway's Streamable HTTP entry with the
token, or through `portcullis connect`) and the person (the control API, the CLI, `approvals
watch`), and check what each side sees, what reached the upstream and what the audit says.

One gateway serves the module (fixture `agw`); each test tags its calls with a unique marker and
opens its own sessions, so tests do not depend on each other or on their order. Upstreams:

  ev        server-everything (stdio): echo and get-sum need approval (entry timeout 30 s)
  ev_t      server-everything (stdio): echo needs approval with approval_timeout 2
  bare      server-everything (stdio) with NO policy file: every call needs approval (config 20 s)
  fs        server-filesystem on a scratch root: write_file and create_directory need approval
  fs_rules  server-filesystem on another root, its policy file rewritten by "always" decisions
  probe     tests/e2e/peers/approval_probe_server.py: reports when a call reached it (latency)
  ruled     the probe server again; its `probe` entry needs approval but a rule denies markers `rm-*`

The regression tests at the end pin gateway bugs found while writing this suite (all fixed); each
is named after the behaviour the bug broke.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sys
import threading
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import get_default_environment, stdio_client
from v1client import assert_denial, first_text, open_session, result_view, run

import approvals
import harness
from approvals import ControlApi, EventStream, cli

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
ENTRY_TIMEOUT = 30
FILE_TIMEOUT = 25
CONFIG_TIMEOUT = 20
SHORT_TIMEOUT = 2


def marker() -> str:
    return uuid.uuid4().hex[:12]


# --------------------------------------------------------------------------------------------------
# The module's world: upstreams, policies, one gateway


@dataclass
class AWorld:
    root: Path
    fs_root: Path
    rules_root: Path
    probe_log: Path
    policies_dir: Path = field(init=False)
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)

    def spec(self, server: str) -> dict[str, Any]:
        return self.servers[server]


def _approval(timeout: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"action": "require_approval"}
    if timeout is not None:
        entry["approval_timeout"] = timeout
    return entry


@pytest.fixture(scope="module")
def aworld(e2e_tmp: Path) -> AWorld:
    root = e2e_tmp / "approvals-mcp1"
    fs_root = root / "fsroot"
    rules_root = root / "rulesroot"
    for d in (fs_root, rules_root):
        d.mkdir(parents=True)
    (fs_root / "hello.txt").write_text("hello from the approval tests\n")
    probe_log = root / "probe.log"
    w = AWorld(root=root, fs_root=fs_root.resolve(), rules_root=rules_root.resolve(), probe_log=probe_log)
    w.servers = {
        "ev": harness.everything_stdio(),
        "ev_t": harness.everything_stdio(),
        "bare": harness.everything_stdio(),
        "fs": harness.filesystem_stdio(w.fs_root),
        "fs_rules": harness.filesystem_stdio(w.rules_root),
        "probe": harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "approval_probe_server.py",
                                      {"PROBE_SERVER_LOG": str(probe_log)}),
        "ruled": harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "approval_probe_server.py",
                                      {"PROBE_SERVER_LOG": str(probe_log)}),
    }
    w.policies = {
        "ev": {"version": "1", "default": "allow",
               "tools": {"echo": _approval(ENTRY_TIMEOUT), "get-sum": _approval(ENTRY_TIMEOUT)}},
        "ev_t": {"version": "1", "default": "allow", "approval_timeout": 40,
                 "tools": {"echo": _approval(SHORT_TIMEOUT)}},
        "fs": {"version": "1", "default": "allow",
               "tools": {"write_file": _approval(ENTRY_TIMEOUT), "create_directory": _approval(ENTRY_TIMEOUT)}},
        "fs_rules": {"version": "1", "default": "allow", "approval_timeout": FILE_TIMEOUT,
                     "tools": {"write_file": _approval(), "create_directory": _approval(),
                               "read_text_file": {}}},
        "probe": {"version": "1", "default": "require_approval", "approval_timeout": FILE_TIMEOUT},
        "ruled": {"version": "1", "default": "allow", "tools": {"probe": {
            "action": "require_approval",
            "rules": [{"when": {"arguments.marker": {"regex": "^rm-"}}, "action": "deny", "reason": "no rm"}]}}},
        # "bare" has no policy file: every call requires approval, timeout from the config.
    }
    return w


@pytest.fixture(scope="module")
def agw(aworld: AWorld):
    config = harness.write_config(aworld.root / "gateway", aworld.servers, aworld.policies,
                                  approval_timeout_secs=CONFIG_TIMEOUT)
    aworld.policies_dir = config.parent / "policies"
    gw = harness.start_gateway(config, aworld.root / "data")
    yield gw
    harness.log(f"portcullis serve (approvals mcp1) exited with {gw.stop()}")


@pytest.fixture
def api(agw) -> ControlApi:
    return ControlApi.of(agw)


@pytest.fixture
def events(api: ControlApi):
    """An approver: a subscriber to /control/events, attached before the test starts."""
    stream = api.subscribe()
    yield stream
    stream.close()


# --------------------------------------------------------------------------------------------------
# Async helpers


async def in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a blocking helper (event waits, control API, CLI) without blocking the event loop."""
    return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))


class Background:
    """A coroutine started in a task group; its result or error is kept."""

    def __init__(self, tg: anyio.abc.TaskGroup, fn: Callable[[], Awaitable[Any]]) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self._fn = fn
        tg.start_soon(self._run)

    async def _run(self) -> None:
        try:
            self.result = await self._fn()
        except Exception as e:  # reported by wait()
            self.error = e
        finally:
            self.done.set()

    async def wait(self, timeout: float = 15.0) -> Any:
        with anyio.fail_after(timeout):
            await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


async def wait_gone(api: ControlApi, approval_id: str, timeout: float = 5.0) -> None:
    await in_thread(api.wait_pending, lambda p: all(a["id"] != approval_id for a in p), timeout,
                    f"approval {approval_id} to leave GET /control/approvals")


def cancel_notification(request_id: Any, reason: str) -> types.ClientNotification:
    return types.ClientNotification(
        types.CancelledNotification(params=types.CancelledNotificationParams(requestId=request_id, reason=reason))
    )


@asynccontextmanager
async def connect_session_with_pid(gw: harness.Gateway, server: str, pidfile: Path):
    """An mcp 1.x session through `portcullis connect`, launched via sh so the relay's pid is known."""
    argv = gw.connect_argv(server)
    params = StdioServerParameters(command="/bin/sh", args=["-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), *argv],
                                   env=get_default_environment())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=types.Implementation(name="portcullis-e2e-mcp1-kill",
                                                                                version="1.0.0")) as session:
            await session.initialize()
            yield session


def assert_approval_object(approval: dict[str, Any], server: str, tool: str, arguments: dict[str, Any],
                           timeout_s: int, rule: str | None = None) -> None:
    for key in ("id", "server", "tool", "title", "description", "annotations", "risk", "arguments", "session",
                "client", "rule", "requested_at", "requested_at_ms", "expires_at", "expires_at_ms", "request_id"):
        assert key in approval, f"approval object lacks {key!r}: {approval}"
    assert approval["server"] == server and approval["tool"] == tool, approval
    assert approval["arguments"] == arguments, "the approver must see the full, unredacted arguments"
    assert approval["risk"] in ("read", "write", "execute", "delete", "unknown"), approval
    assert approval["session"], approval
    assert approval["client"]["name"], approval
    assert approval["expires_at_ms"] - approval["requested_at_ms"] == timeout_s * 1000, \
        f"expected a {timeout_s} s hold, approval says {approval['requested_at_ms']}..{approval['expires_at_ms']}"
    if rule is not None:
        assert approval["rule"] == rule, approval


# --------------------------------------------------------------------------------------------------
# 1. approve


@pytest.mark.parametrize("route", ROUTES)
def test_approve_via_api_returns_upstream_result(aworld, agw, api, events, route):
    m = marker()
    args = {"message": f"approve me {m}"}

    async def body():
        async with open_session("direct", "ev", aworld.spec("ev")) as (s, _):
            direct = await s.call_tool("echo", args)
        async with open_session(route, "ev", aworld.spec("ev"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("echo", args))
                ev = await in_thread(events.wait_requested, m, "ev", "echo")
                assert not call.done.is_set(), "a held call must not be answered before the decision"
                pending = await in_thread(api.pending)
                reply = await in_thread(api.approve, ev["approval"]["id"], "once")
                via = await call.wait()
        return direct, ev, pending, reply, via

    direct, ev, pending, reply, via = run(body)
    approval = ev["approval"]
    assert_approval_object(approval, "ev", "echo", args, ENTRY_TIMEOUT, rule="tools.echo")
    assert approval["risk"] == "read", approval
    assert approval["client"] == {"name": "portcullis-e2e-mcp1", "version": "1.0.0"}, approval
    assert any(p["id"] == approval["id"] for p in pending), f"the held call must be listed: {pending}"
    assert reply.status == 200, reply
    assert reply.json()["decision"] == "approved" and reply.json()["scope"] == "once", reply
    assert result_view(via) == result_view(direct), "an approved call must get the upstream's real result"
    assert f"approve me {m}" in first_text(via)

    resolved = events.wait_resolved(approval["id"])
    assert resolved.data == {"type": "ApprovalResolved", "id": approval["id"], "decision": "approved",
                             "decided_by": "user", "scope": "once"}
    (row,) = approvals.audit_rows(agw, "ev", "echo", m)
    assert row["decision"] == "approved" and row["decided_by"] == "user", row.raw
    assert row["rule"] == "tools.echo" and row["wait_ms"] is not None and row["wait_ms"] >= 0, row.raw
    harness.wait_until(lambda: approvals.audit_rows(agw, "ev", "echo", m)[0].get("outcome") == "ok", 10,
                       "the approved call's outcome")
    assert not any(p["id"] == approval["id"] for p in api.pending())
    again = api.approve(approval["id"], "once")
    assert again.status == 409 and "error" in again.json(), again


def test_approve_via_cli_returns_upstream_result(aworld, agw, api, events):
    n = random.randint(10_000_000, 99_999_999)
    args = {"a": n, "b": 7}

    async def body():
        async with open_session("direct", "ev", aworld.spec("ev")) as (s, _):
            direct = await s.call_tool("get-sum", args)
        async with open_session("stdio", "ev", aworld.spec("ev"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("get-sum", args))
                ev = await in_thread(events.wait_requested, str(n), "ev", "get-sum")
                done = await in_thread(cli, agw.data_dir, "approvals", "approve", ev["approval"]["id"],
                                       "--scope", "once")
                via = await call.wait()
        return direct, ev, done, via

    direct, ev, done, via = run(body)
    assert done.returncode == 0, f"approvals approve failed: {done.stdout} {done.stderr}"
    assert ev["approval"]["id"] in done.stdout, done.stdout
    assert result_view(via) == result_view(direct), "an approved call must get the upstream's real result"
    assert str(n + 7) in first_text(via)
    (row,) = approvals.audit_rows(agw, "ev", "get-sum", str(n))
    assert row["decision"] == "approved" and row["decided_by"] == "user", row.raw

    again = cli(agw.data_dir, "approvals", "approve", ev["approval"]["id"])
    assert again.returncode == 1, f"approving a decided call must exit 1: {again}"
    assert again.stderr.strip() and len(again.stderr.strip().splitlines()) == 1, again.stderr


# --------------------------------------------------------------------------------------------------
# 2. deny


@pytest.mark.parametrize("route,decider", [("http", "api"), ("stdio", "cli")])
def test_deny_write_file_never_runs(aworld, agw, api, events, route, decider):
    m = marker()
    target = aworld.fs_root / f"denied-{m}.txt"
    args = {"path": str(target), "content": f"must not be written {m}"}
    reason = f"not today {m}"

    async def body():
        async with open_session(route, "fs", aworld.spec("fs"), agw) as (s, _):
            await s.list_tools()  # the gateway learns annotations (risk) from the listing
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("write_file", args))
                ev = await in_thread(events.wait_requested, m, "fs", "write_file")
                if decider == "api":
                    decided = await in_thread(api.deny, ev["approval"]["id"], reason)
                else:
                    decided = await in_thread(cli, agw.data_dir, "approvals", "deny", ev["approval"]["id"],
                                              "--reason", reason)
                result = await call.wait()
        return ev, decided, result

    ev, decided, result = run(body)
    approval = ev["approval"]
    assert_approval_object(approval, "fs", "write_file", args, ENTRY_TIMEOUT, rule="tools.write_file")
    assert approval["risk"] in ("write", "delete"), f"write_file is at least a write: {approval}"
    if decider == "api":
        assert decided.status == 200 and decided.json()["decision"] == "rejected", decided
    else:
        assert decided.returncode == 0, f"approvals deny failed: {decided.stdout} {decided.stderr}"
    text = assert_denial(result, "denied by the user", reason)
    assert "write_file" in text
    assert not target.exists(), "a denied write_file must never reach server-filesystem"

    resolved = events.wait_resolved(approval["id"])
    assert resolved["decision"] == "rejected" and resolved["decided_by"] == "user", resolved.data
    (row,) = approvals.audit_rows(agw, "fs", "write_file", m)
    assert row["decision"] == "rejected" and row["decided_by"] == "user", row.raw
    assert reason in (row["reason"] or ""), row.raw
    assert row["outcome"] is None, row.raw
    assert row["wait_ms"] is not None, row.raw
    late = api.approve(approval["id"], "once")
    assert late.status == 409, f"a rejected call cannot be approved afterwards: {late!r}"
    assert not target.exists()


# --------------------------------------------------------------------------------------------------
# 3. timeout


def test_timeout_is_denied_within_bound(aworld, agw, api, events):
    m = marker()
    args = {"message": f"nobody answers {m}"}

    async def body():
        async with open_session("http", "ev_t", aworld.spec("ev_t"), agw) as (s, _):
            t0 = time.monotonic()
            result = await s.call_tool("echo", args)
            return result, time.monotonic() - t0

    result, elapsed = run(body)
    assert elapsed <= SHORT_TIMEOUT + 1.0, f"a {SHORT_TIMEOUT} s approval timeout answered after {elapsed:.2f} s"
    assert elapsed >= SHORT_TIMEOUT - 0.1, f"answered after {elapsed:.2f} s, before the {SHORT_TIMEOUT} s timeout"
    assert_denial(result, "no decision within")
    ev = events.wait_requested(m, "ev_t", "echo", timeout=1)
    assert_approval_object(ev["approval"], "ev_t", "echo", args, SHORT_TIMEOUT, rule="tools.echo")
    resolved = events.wait_resolved(ev["approval"]["id"])
    assert resolved["decision"] == "timed_out" and resolved["decided_by"] == "timeout", resolved.data
    assert not any(p["id"] == ev["approval"]["id"] for p in api.pending())
    (row,) = approvals.audit_rows(agw, "ev_t", "echo", m)
    assert row["decision"] == "timed_out" and row["decided_by"] == "timeout", row.raw
    assert row["wait_ms"] >= SHORT_TIMEOUT * 1000 - 50, row.raw
    late = api.approve(ev["approval"]["id"], "once")
    assert late.status in (404, 409), f"a timed-out call cannot be approved afterwards: {late!r}"
    print(f"timeout: {SHORT_TIMEOUT} s approval_timeout answered after {elapsed:.3f} s")


# --------------------------------------------------------------------------------------------------
# 4. cancel and disconnect


#: Issue 6: a client that goes away withdraws its held call (and the prompt) within a second.
WITHDRAWN_WITHIN_S = 1.0


def _assert_withdrawn(agw, api: ControlApi, events: EventStream, approval_id: str, m: str, target: Path,
                      since: float) -> None:
    """`since`: time.monotonic() when the client cancelled, died or hung up."""
    resolved = events.wait_resolved(approval_id, timeout=5)
    assert resolved["decision"] == "cancelled" and resolved["decided_by"] == "client", resolved.data
    took = resolved.mono - since
    harness.log(f"held call withdrawn {took * 1000:.0f} ms after the client went away")
    assert took <= WITHDRAWN_WITHIN_S, f"withdrawn after {took:.3f} s"
    (row,) = approvals.audit_rows(agw, "fs", "write_file", m)
    assert row["decision"] == "cancelled" and row["decided_by"] == "client", row.raw
    assert row["outcome"] in (None, "cancelled"), row.raw
    late = api.approve(approval_id, "once")
    assert late.status in (404, 409), f"a withdrawn call cannot be approved afterwards: {late!r}"
    assert not target.exists(), "a withdrawn write_file must never reach server-filesystem"


@pytest.mark.parametrize("route", ROUTES)
def test_client_cancel_withdraws_held_call(aworld, agw, api, events, route):
    m = marker()
    target = aworld.fs_root / f"cancelled-{m}.txt"
    args = {"path": str(target), "content": f"must not be written {m}"}

    async def body():
        async with open_session(route, "fs", aworld.spec("fs"), agw) as (s, _):
            request_id = s._request_id  # the id the next request gets (ClientSession counts up)
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("write_file", args))
                ev = await in_thread(events.wait_requested, m, "fs", "write_file")
                assert ev["approval"]["request_id"] == str(request_id), ev.data
                since = time.monotonic()
                await s.send_notification(cancel_notification(request_id, "the user pressed stop"))
                await wait_gone(api, ev["approval"]["id"])
                # The client gave up on the request; whatever the gateway says about it is not awaited.
                tg.cancel_scope.cancel()
            after = await s.call_tool("read_text_file", {"path": str(aworld.fs_root / "hello.txt")})
        return ev, call, after, since

    ev, call, after, since = run(body)
    _assert_withdrawn(agw, api, events, ev["approval"]["id"], m, target, since)
    assert "hello from the approval tests" in first_text(after), "the session must stay usable after a cancel"
    if call.done.is_set() and call.result is not None:
        harness.log(f"after notifications/cancelled the gateway still answered the request: "
                    f"{result_view(call.result)}")


def test_killing_connect_withdraws_held_call(aworld, agw, api, events):
    m = marker()
    target = aworld.fs_root / f"killed-{m}.txt"
    args = {"path": str(target), "content": f"must not be written {m}"}
    pidfile = aworld.root / f"connect-{m}.pid"
    killed_at: list[float] = []

    async def body():
        try:
            async with connect_session_with_pid(agw, "fs", pidfile) as s:
                async with anyio.create_task_group() as tg:
                    Background(tg, lambda: s.call_tool("write_file", args))
                    ev = await in_thread(events.wait_requested, m, "fs", "write_file")
                    pid = int(pidfile.read_text().strip())
                    killed_at.append(time.monotonic())
                    os.kill(pid, signal.SIGKILL)
                    await wait_gone(api, ev["approval"]["id"])
                    tg.cancel_scope.cancel()
        except Exception as e:  # the SDK's stdio transport may complain about the dead relay on exit
            harness.log(f"mcp 1.x stdio client after SIGKILL of the relay: {e!r}")
        return ev

    ev = run(body)
    _assert_withdrawn(agw, api, events, ev["approval"]["id"], m, target, killed_at[0])


def test_closing_http_stream_withdraws_held_call(aworld, agw, api, events):
    """A raw legacy-era client over HTTP closes its POST response stream while the call is held."""
    m = marker()
    target = aworld.fs_root / f"closed-{m}.txt"
    init = harness.http_post(agw.mcp_url("fs"), harness.INITIALIZE_BODY, agw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**agw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(agw.mcp_url("fs"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"path": str(target), "content": m}}}).encode()
    hdrs = {"Host": f"127.0.0.1:{api.port}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "Content-Length": str(len(body)), **headers}
    sock = socket.create_connection((api.host, api.port), timeout=10)
    try:
        sock.sendall(("POST /mcp/fs HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
                      + "\r\n").encode() + body)
        ev = events.wait_requested(m, "fs", "write_file")
        head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head, head
    finally:
        closed_at = time.monotonic()
        sock.close()
    run(lambda: wait_gone(api, ev["approval"]["id"]))
    _assert_withdrawn(agw, api, events, ev["approval"]["id"], m, target, closed_at)


# --------------------------------------------------------------------------------------------------
# 5. progress


@pytest.mark.parametrize("route", ROUTES)
def test_progress_while_held(aworld, agw, api, events, route):
    m = marker()
    want = 2 if route == "http" else 1  # the second one comes 5 s after the first; check it once
    seen: list[tuple[float, float, float | None, str | None]] = []

    async def body():
        got = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((time.monotonic(), progress, total, message))
            if len(seen) >= want:
                got.set()

        async with open_session(route, "ev", aworld.spec("ev"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                t0 = time.monotonic()
                call = Background(tg, lambda: s.call_tool("echo", {"message": m}, progress_callback=on_progress))
                ev = await in_thread(events.wait_requested, m, "ev", "echo")
                with anyio.fail_after(12):
                    await got.wait()
                assert not call.done.is_set()
                await in_thread(api.approve, ev["approval"]["id"], "once")
                result = await call.wait()
        return t0, result

    t0, result = run(body)
    assert m in first_text(result) and not result.isError
    assert len(seen) >= want, seen
    first_at = seen[0][0] - t0
    assert first_at < 2.0, f"the first progress notification should come at once, came after {first_at:.2f} s"
    for _, progress, _, message in seen:
        assert message and "waiting for approval" in message, seen
    progresses = [p for _, p, _, _ in seen]
    assert progresses == sorted(set(progresses)), f"progress must strictly increase: {progresses}"
    if want >= 2:
        gap = seen[1][0] - seen[0][0]
        assert 3.5 <= gap <= 7.0, f"progress every 5 s, saw a gap of {gap:.2f} s"


# --------------------------------------------------------------------------------------------------
# 6. session scope


def test_session_scope_covers_same_tool_same_session_only(aworld, agw, api, events):
    m1, m2, m3, m4 = (marker() for _ in range(4))
    n = random.randint(10_000_000, 99_999_999)

    async def body():
        async with open_session("http", "ev", aworld.spec("ev"), agw) as (a, _):
            async with anyio.create_task_group() as tg:
                first = Background(tg, lambda: a.call_tool("echo", {"message": m1}))
                ev1 = await in_thread(events.wait_requested, m1, "ev", "echo")
                reply = await in_thread(api.approve, ev1["approval"]["id"], "session")
                r1 = await first.wait()
            with anyio.fail_after(8):  # not held: answered at once (a hold would last 30 s)
                r2 = await a.call_tool("echo", {"message": m2})
            # The grant is for echo only: get-sum in the same session is still held.
            async with anyio.create_task_group() as tg:
                other_tool = Background(tg, lambda: a.call_tool("get-sum", {"a": n, "b": 1}))
                ev_sum = await in_thread(events.wait_requested, str(n), "ev", "get-sum")
                await in_thread(api.approve, ev_sum["approval"]["id"], "once")
                r_sum = await other_tool.wait()
            async with open_session("stdio", "ev", aworld.spec("ev"), agw) as (b, _):
                async with anyio.create_task_group() as tg:
                    third = Background(tg, lambda: b.call_tool("echo", {"message": m3}))
                    ev3 = await in_thread(events.wait_requested, m3, "ev", "echo")
                    await in_thread(api.deny, ev3["approval"]["id"], f"other session {m3}")
                    r3 = await third.wait()
            with anyio.fail_after(8):  # A's grant outlives B
                r4 = await a.call_tool("echo", {"message": m4})
        return reply, ev1, r1, r2, ev_sum, r_sum, ev3, r3, r4

    reply, ev1, r1, r2, ev_sum, r_sum, ev3, r3, r4 = run(body)
    assert reply.status == 200 and reply.json()["scope"] == "session", reply
    assert events.wait_resolved(ev1["approval"]["id"])["scope"] == "session"
    assert m1 in first_text(r1) and m2 in first_text(r2) and m4 in first_text(r4)
    assert not r2.isError and not r4.isError
    assert not events.requested(m2) and not events.requested(m4), "a session grant must not prompt again"
    assert str(n + 1) in first_text(r_sum), "another tool in the same session is held, then approved"
    assert ev3["approval"]["session"] != ev1["approval"]["session"], "B must be another session"
    assert_denial(r3, "denied by the user", f"other session {m3}")

    for mk in (m2, m4):
        (row,) = approvals.audit_rows(agw, "ev", "echo", mk)
        assert row["decision"] == "approved", row.raw
        assert row["reason"].startswith("approved earlier for this session (grant g"), row.raw
    (row1,) = approvals.audit_rows(agw, "ev", "echo", m1)
    assert row1["decision"] == "approved" and row1["decided_by"] == "user", row1.raw
    (row3,) = approvals.audit_rows(agw, "ev", "echo", m3)
    assert row3["decision"] == "rejected", row3.raw


# --------------------------------------------------------------------------------------------------
# 7. always allow, deny always


def _policy(aworld: AWorld, server: str) -> dict[str, Any]:
    return json.loads((aworld.policies_dir / f"{server}.json").read_text())


def test_always_allow_writes_policy_and_stops_prompting(aworld, agw, api, events):
    m = marker()
    p1 = aworld.rules_root / f"always-1-{m}.txt"
    p2 = aworld.rules_root / f"always-2-{m}.txt"
    policy_file = aworld.policies_dir / "fs_rules.json"
    before = _policy(aworld, "fs_rules")
    assert before["tools"]["write_file"]["action"] == "require_approval"

    async def body():
        async with open_session("http", "fs_rules", aworld.spec("fs_rules"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("write_file", {"path": str(p1), "content": m}))
                ev = await in_thread(events.wait_requested, m, "fs_rules", "write_file")
                start = events.mark()
                reply = await in_thread(api.approve, ev["approval"]["id"], "always")
                r1 = await call.wait()
        reloaded = await in_thread(events.wait_for, lambda d: d.get("type") == "PolicyReloaded"
                                   and d.get("server") == "fs_rules", 10, "PolicyReloaded fs_rules", start)
        mark = events.mark()
        async with open_session("stdio", "fs_rules", aworld.spec("fs_rules"), agw) as (s, _):
            with anyio.fail_after(10):  # no prompt any more: answered at once
                r2 = await s.call_tool("write_file", {"path": str(p2), "content": m})
        return ev, reply, r1, reloaded, mark, r2

    ev, reply, r1, reloaded, mark, r2 = run(body)
    assert_approval_object(ev["approval"], "fs_rules", "write_file", {"path": str(p1), "content": m},
                           FILE_TIMEOUT, rule="tools.write_file")
    assert reply.status == 200 and reply.json()["scope"] == "always", reply
    assert not r1.isError and p1.read_text() == m, "the approved write must have happened"
    after = _policy(aworld, "fs_rules")
    assert after["tools"]["write_file"] == {}, f"always allow must write an allow entry: {after}"
    assert after["tools"]["create_directory"] == before["tools"]["create_directory"], "other entries stay"
    assert after["tools"]["read_text_file"] == {} and after["version"] == "1"
    assert after.get("approval_timeout") == FILE_TIMEOUT and after.get("default") == "allow", after
    check = approvals.policy_check(policy_file)
    assert check.returncode == 0, f"the rewritten policy must validate: {check.stdout} {check.stderr}"
    assert not r2.isError and p2.read_text() == m, "the next call must pass"
    assert not events.requested(m, since=mark), "the next call must not prompt"
    rows = approvals.audit_rows(agw, "fs_rules", "write_file", m, count=2)
    assert [r["decision"] for r in rows] == ["approved", "allowed"], [r.raw for r in rows]
    assert rows[1]["decided_by"] == "policy", rows[1].raw
    assert rows[1]["rule"] == "tools.write_file", rows[1].raw


def test_deny_always_writes_policy_and_refuses_without_prompt(aworld, agw, api, events):
    m = marker()
    d1 = aworld.rules_root / f"never-1-{m}"
    d2 = aworld.rules_root / f"never-2-{m}"
    policy_file = aworld.policies_dir / "fs_rules.json"
    reason = f"no new directories {m}"

    async def body():
        async with open_session("stdio", "fs_rules", aworld.spec("fs_rules"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("create_directory", {"path": str(d1)}))
                ev = await in_thread(events.wait_requested, m, "fs_rules", "create_directory")
                start = events.mark()
                reply = await in_thread(api.deny, ev["approval"]["id"], reason, True)
                r1 = await call.wait()
        await in_thread(events.wait_for, lambda d: d.get("type") == "PolicyReloaded"
                        and d.get("server") == "fs_rules", 10, "PolicyReloaded fs_rules", start)
        mark = events.mark()
        async with open_session("http", "fs_rules", aworld.spec("fs_rules"), agw) as (s, _):
            with anyio.fail_after(10):
                r2 = await s.call_tool("create_directory", {"path": str(d2)})
        return reply, r1, mark, r2

    reply, r1, mark, r2 = run(body)
    assert reply.status == 200 and reply.json()["decision"] == "rejected", reply
    assert_denial(r1, "denied by the user", reason)
    assert not d1.exists()
    entry = _policy(aworld, "fs_rules")["tools"]["create_directory"]
    assert entry.get("action") == "deny", f"deny always must write a deny entry: {entry}"
    check = approvals.policy_check(policy_file)
    assert check.returncode == 0, f"the rewritten policy must validate: {check.stdout} {check.stderr}"
    assert_denial(r2)
    assert not d2.exists(), "the policy now denies create_directory: it must never run"
    assert not events.requested(m, since=mark), "deny always must not prompt again"
    rows = approvals.audit_rows(agw, "fs_rules", "create_directory", m, count=2)
    assert [r["decision"] for r in rows] == ["rejected", "denied"], [r.raw for r in rows]
    assert rows[1]["decided_by"] == "policy", rows[1].raw


# --------------------------------------------------------------------------------------------------
# 8. two sessions at once, decided in reverse order


def test_two_sessions_decided_independently_in_reverse(aworld, agw, api, events):
    ma, mb = marker(), marker()

    async def body():
        async with open_session("http", "ev", aworld.spec("ev"), agw) as (a, _), \
                open_session("stdio", "ev", aworld.spec("ev"), agw) as (b, _):
            async with anyio.create_task_group() as tg:
                call_a = Background(tg, lambda: a.call_tool("echo", {"message": ma}))
                ev_a = await in_thread(events.wait_requested, ma, "ev", "echo")
                call_b = Background(tg, lambda: b.call_tool("echo", {"message": mb}))
                ev_b = await in_thread(events.wait_requested, mb, "ev", "echo")
                ids = {ev_a["approval"]["id"], ev_b["approval"]["id"]}
                both = await in_thread(api.wait_pending, lambda p: ids <= {x["id"] for x in p}, 5, "both pending")
                await in_thread(api.approve, ev_b["approval"]["id"], "once")  # the later one first
                rb = await call_b.wait()
                a_still_waiting = not call_a.done.is_set()
                still = await in_thread(api.pending)
                await in_thread(api.deny, ev_a["approval"]["id"], f"first come, last served {ma}")
                ra = await call_a.wait()
        return ev_a, ev_b, both, rb, a_still_waiting, still, ra

    ev_a, ev_b, both, rb, a_still_waiting, still, ra = run(body)
    assert ev_a["approval"]["session"] != ev_b["approval"]["session"], "two sessions"
    assert ev_a["approval"]["id"] != ev_b["approval"]["id"]
    assert mb in first_text(rb) and not rb.isError
    assert a_still_waiting, "deciding B must not release A"
    assert [x["id"] for x in still if x["id"] in (ev_a["approval"]["id"], ev_b["approval"]["id"])] == \
        [ev_a["approval"]["id"]], still
    assert_denial(ra, "denied by the user", f"first come, last served {ma}")
    (row_a,) = approvals.audit_rows(agw, "ev", "echo", ma)
    (row_b,) = approvals.audit_rows(agw, "ev", "echo", mb)
    assert row_a["decision"] == "rejected" and row_b["decision"] == "approved", (row_a.raw, row_b.raw)
    assert row_a["session"] != row_b["session"]


# --------------------------------------------------------------------------------------------------
# Approver presence, the default for a server without a policy file


def test_no_approver_refuses_at_once(aworld, agw, api):
    """Nobody subscribed to /control/events: the call is refused at once, saying so; after an
    approver came and went, again."""
    m1, m2 = marker(), marker()

    async def call(message: str):
        async with open_session("http", "ev", aworld.spec("ev"), agw) as (s, _):
            t0 = time.monotonic()
            with anyio.fail_after(10):
                result = await s.call_tool("echo", {"message": message})
            return result, time.monotonic() - t0

    r1, t1 = run(lambda: call(m1))
    stream = api.subscribe()
    stream.close()
    r2, t2 = run(lambda: call(m2))
    for result, elapsed in ((r1, t1), (r2, t2)):
        assert_denial(result, "no approver")
        assert elapsed < 2.0, f"refused after {elapsed:.2f} s; must be at once"
    for mk in (m1, m2):
        (row,) = approvals.audit_rows(agw, "ev", "echo", mk)
        assert row["decision"] == "denied" and row["decided_by"] == "gateway", row.raw


def test_server_without_policy_file_holds_every_call(aworld, agw, api, events):
    m = marker()

    async def body():
        async with open_session("stdio", "bare", aworld.spec("bare"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("echo", {"message": m}))
                ev = await in_thread(events.wait_requested, m, "bare", "echo")
                await in_thread(api.approve, ev["approval"]["id"])
                return ev, await call.wait()

    ev, result = run(body)
    assert_approval_object(ev["approval"], "bare", "echo", {"message": m}, CONFIG_TIMEOUT)
    assert m in first_text(result) and not result.isError
    (row,) = approvals.audit_rows(agw, "bare", "echo", m)
    assert row["decision"] == "approved", row.raw


# --------------------------------------------------------------------------------------------------
# 10. control API and CLI refusals


def test_control_api_requires_token_and_local_origin(agw, api, e2e_tmp):
    for method, path, body in (("GET", "/control/approvals", None),
                               ("POST", "/control/approvals/1/approve", {"scope": "once"}),
                               ("POST", "/control/approvals/1/deny", {"reason": "x"}),
                               ("GET", "/control/events", None)):
        no_token = api.request(method, path, body, token=False, timeout=5)
        assert no_token.status == 401, f"{method} {path} without a token: {no_token!r}"
        wrong = api.request(method, path, body, token="not-the-token", timeout=5)
        assert wrong.status == 401, f"{method} {path} with a wrong token: {wrong!r}"
        foreign = api.request(method, path, body, headers={"Origin": "http://evil.example"}, timeout=5)
        assert foreign.status == 403, f"{method} {path} from a foreign Origin: {foreign!r}"
    ok = api.request("GET", "/control/approvals", headers={"Origin": "http://localhost:5173"})
    assert ok.status == 200 and isinstance(ok.json(), list), ok
    unknown = api.approve("999", "once")
    assert unknown.status == 404 and "error" in unknown.json(), unknown
    unknown_deny = api.deny("999", "no")
    assert unknown_deny.status == 404 and "error" in unknown_deny.json(), unknown_deny

    r = cli(agw.data_dir, "approvals", "approve", "999")
    assert r.returncode == 1 and "no pending approval" in r.stderr, r
    assert len(r.stderr.strip().splitlines()) == 1, f"one line on stderr: {r.stderr!r}"
    r = cli(agw.data_dir, "approvals", "deny", "999", "--reason", "nope")
    assert r.returncode == 1 and "no pending approval" in r.stderr, r
    empty = e2e_tmp / f"no-gateway-{marker()}"
    empty.mkdir()
    for argv in (("approvals", "list"), ("approvals", "list", "--json"), ("approvals", "approve", "1"),
                 ("approvals", "deny", "1")):
        r = cli(empty, *argv)
        assert r.returncode == 2, f"{argv} with no gateway must exit 2: {r}"


# --------------------------------------------------------------------------------------------------
# 11. approvals watch, approvals list --json


def test_watch_approves_from_piped_key(aworld, agw, api):
    m = marker()
    watch = approvals.Watch(agw.data_dir)
    try:
        watch.wait_line("waiting for calls")  # subscribed: the gateway now holds calls for it
        watch.send("a")  # from a pipe, a key waits for the next call that arrives

        async def body():
            async with open_session("http", "ev", aworld.spec("ev"), agw) as (s, _):
                with anyio.fail_after(15):
                    return await s.call_tool("echo", {"message": m})

        result = run(body)
        assert m in first_text(result) and not result.isError, result
        line = watch.wait_line("approved")
        watch.send("q")
        code = watch.wait(10)
    finally:
        watch.stop()
    assert code == 0, f"watch exited {code}:\n{watch.output()}"
    assert "echo" in watch.output(), watch.output()
    (row,) = approvals.audit_rows(agw, "ev", "echo", m)
    assert row["decision"] == "approved" and row["decided_by"] == "user", row.raw
    assert line


def test_watch_denies_with_piped_key(aworld, agw, api):
    m = marker()
    target = aworld.fs_root / f"watch-denied-{m}.txt"
    watch = approvals.Watch(agw.data_dir)
    try:
        watch.wait_line("waiting for calls")

        async def body():
            async with open_session("stdio", "fs", aworld.spec("fs"), agw) as (s, _):
                async with anyio.create_task_group() as tg:
                    call = Background(tg, lambda: s.call_tool("write_file", {"path": str(target), "content": m}))
                    await in_thread(watch.wait_line, "write_file")  # the card is on screen
                    watch.send("d")
                    return await call.wait()

        result = run(body)
        watch.close_stdin()
        code = watch.wait(10)
    finally:
        watch.stop()
    assert_denial(result, "denied by the user")
    assert not target.exists()
    assert code == 0, f"watch must stop cleanly when stdin closes: {code}\n{watch.output()}"
    (row,) = approvals.audit_rows(agw, "fs", "write_file", m)
    assert row["decision"] == "rejected" and row["decided_by"] == "user", row.raw


def test_watch_on_a_terminal_decides_by_key_and_restores_the_terminal(aworld, agw, api):
    """The terminal approver as a person runs it: raw mode while it runs, the card as wide as the terminal,
    an arrow key (whose escape sequence ends in `A`) and Alt+a decide nothing, `a` approves once, Ctrl-C
    quits, and the terminal is left in the mode it was in."""
    m = marker()
    watch = approvals.TerminalWatch(agw.data_dir, columns=60)
    try:
        watch.wait_text("waiting for calls")
        assert watch.is_raw(), f"raw mode while watching: {watch.mode()}"

        async def body():
            async with open_session("http", "ev", aworld.spec("ev"), agw) as (s, _):
                async with anyio.create_task_group() as tg:
                    call = Background(tg, lambda: s.call_tool("echo", {"message": m}))
                    await in_thread(watch.wait_text, m)  # the card is on screen
                    await in_thread(watch.wait_text, "[q] quit")
                    watch.type(b"\x1b[A")  # arrow up
                    watch.type(b"\x1ba")  # Alt+a
                    watch.type(b"?")  # the legend again: the keys before it were read by then
                    await in_thread(watch.wait_text, "[q] quit", 2)
                    held = await in_thread(api.pending)
                    assert any(approvals.mentions(a, m) for a in held), f"an arrow key or Alt+a decided the call: {held}"
                    watch.type(b"a")
                    await in_thread(watch.wait_text, "approved ")
                    return await call.wait()

        result = run(body)
        assert m in first_text(result) and not result.isError, result
        watch.type(b"\x03")  # Ctrl-C: a key in raw mode
        watch.wait_text("stopped watching")
        code = watch.wait(10)
        mode = watch.mode()
    finally:
        watch.stop()
    assert code == 0, f"watch exited {code}:\n{watch.text()}"
    assert mode == watch.cooked, f"the terminal's mode is restored on exit: {mode} != {watch.cooked}"
    lines = watch.lines()
    (head,) = [line for line in lines if line.startswith("---- approval ")]
    assert len(head) == 60, f"the card is as wide as the terminal (60 columns): {head!r}"
    assert any(line.startswith("approved ") and "(once)" in line for line in lines), lines
    (row,) = approvals.audit_rows(agw, "ev", "echo", m)
    assert row["decision"] == "approved" and row["decided_by"] == "user", row.raw


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_watch_on_a_terminal_restores_it_when_stopped_by_a_signal(agw, signame):
    watch = approvals.TerminalWatch(agw.data_dir)
    try:
        watch.wait_text("waiting for calls")
        assert watch.is_raw(), f"raw mode while watching: {watch.mode()}"
        watch.popen.send_signal(getattr(signal, signame))
        code = watch.wait(10)
        mode = watch.mode()
    finally:
        watch.stop()
    assert code == 0, f"watch exited {code} on {signame}:\n{watch.text()}"
    assert mode == watch.cooked, f"the terminal's mode is restored after {signame}: {mode} != {watch.cooked}"


def test_approvals_list_json_fields(aworld, agw, api, events):
    m = marker()
    args = {"message": f"list me {m}", "nested": {"token": "s3cret-visible-to-the-approver"}}

    async def body():
        async with open_session("http", "ev", aworld.spec("ev"), agw) as (s, _):
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("echo", args))
                ev = await in_thread(events.wait_requested, m, "ev", "echo")
                listed = await in_thread(cli, agw.data_dir, "approvals", "list", "--json")
                table = await in_thread(cli, agw.data_dir, "approvals", "list")
                await in_thread(cli, agw.data_dir, "approvals", "deny", ev["approval"]["id"], "--reason", "listed")
                return ev, listed, table, await call.wait()

    ev, listed, table, result = run(body)
    assert listed.returncode == 0, listed
    items = json.loads(listed.stdout)
    (item,) = [i for i in items if i["id"] == ev["approval"]["id"]]
    for key in ("id", "server", "tool", "arguments", "session", "client", "requested_at", "expires_at"):
        assert key in item, f"approvals list --json lacks {key!r}: {item}"
    assert item["server"] == "ev" and item["tool"] == "echo"
    assert item["arguments"] == args, "the approver sees the arguments unredacted"
    assert item["session"] == ev["approval"]["session"]
    assert item["client"]["name"] == "portcullis-e2e-mcp1"
    assert item["requested_at"] < item["expires_at"], item
    assert table.returncode == 0 and ev["approval"]["id"] in table.stdout and "echo" in table.stdout, table
    assert_denial(result, "denied by the user", "listed")
    (row,) = approvals.audit_rows(agw, "ev", "echo", m)
    assert "s3cret-visible-to-the-approver" not in json.dumps(row.raw), "the audit row stays redacted"


# --------------------------------------------------------------------------------------------------
# Latency: call sent -> ApprovalRequested on the event stream; approve POST -> upstream receipt


LATENCY_SAMPLES = 20


def test_approval_latency(agw, api, events, record_property, e2e_tmp):
    init = harness.http_post(agw.mcp_url("probe"), harness.INITIALIZE_BODY, agw.auth_headers())
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**agw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(agw.mcp_url("probe"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)

    to_event: list[float] = []  # client send -> event read by the subscriber
    to_hold: list[float] = []  # client send -> requested_at_ms (gateway clock, ms resolution)
    to_upstream: list[float] = []  # approve POST sent -> probe server read the call
    to_result: list[float] = []  # approve POST sent -> client has the result
    for i in range(LATENCY_SAMPLES):
        m = marker()
        box: dict[str, Any] = {}
        body = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                "params": {"name": "probe", "arguments": {"marker": m}}}

        def post() -> None:
            box["reply"] = harness.http_post(agw.mcp_url("probe"), body, headers, timeout=30)
            box["done"] = time.time()

        t = threading.Thread(target=post)
        sent = time.time()
        t.start()
        ev = events.wait_requested(m, "probe", "probe", timeout=10)
        approve_at = time.time()
        reply = api.approve(ev["approval"]["id"], "once")
        t.join(15)
        assert reply.status == 200 and not t.is_alive(), reply
        (msg,) = [x for x in harness.sse_json_messages(box["reply"].body) if x.get("id") == 100 + i]
        received = json.loads(msg["result"]["content"][0]["text"])
        assert received["marker"] == m
        to_event.append((ev.wall - sent) * 1000)
        to_hold.append(ev["approval"]["requested_at_ms"] - sent * 1000)
        to_upstream.append(received["received_ns"] / 1e6 - approve_at * 1000)
        to_result.append((box["done"] - approve_at) * 1000)

    figures = {
        "samples": LATENCY_SAMPLES,
        "call_to_event_ms_p50": approvals.percentile(to_event, 0.5),
        "call_to_event_ms_max": max(to_event),
        "call_to_hold_ms_p50": approvals.percentile(to_hold, 0.5),
        "approve_to_upstream_ms_p50": approvals.percentile(to_upstream, 0.5),
        "approve_to_upstream_ms_max": max(to_upstream),
        "approve_to_result_ms_p50": approvals.percentile(to_result, 0.5),
    }
    for k, v in figures.items():
        record_property(k, round(v, 3) if isinstance(v, float) else v)
    out = e2e_tmp / "approval_latency.json"
    out.write_text(json.dumps({**figures, "call_to_event_ms": to_event, "approve_to_upstream_ms": to_upstream},
                              indent=2))
    print("approval latency: " + ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in figures.items()))
    harness.log(f"approval latency figures in {out}: {json.dumps(figures)}")
    assert figures["call_to_event_ms_p50"] < 250, figures
    assert figures["approve_to_upstream_ms_p50"] < 250, figures
    rows = agw.audit_cli("--server", "probe", "--decision", "approved", "--limit", "1000")
    assert len(rows) >= LATENCY_SAMPLES


# --------------------------------------------------------------------------------------------------
# Regressions: gateway bugs found while writing this suite, named after the bug they pin


def _legacy_http_session(agw, server: str) -> dict[str, str]:
    init = harness.http_post(agw.mcp_url(server), harness.INITIALIZE_BODY, agw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**agw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(agw.mcp_url(server), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def _cleanup_pending(api: ControlApi, m: str) -> None:
    for p in api.pending():
        if approvals.mentions(p, m):
            api.deny(p["id"], "test cleanup")


def test_abandoned_json_only_request_is_withdrawn(aworld, agw, api, events):
    m = marker()
    target = aworld.fs_root / f"json-only-{m}.txt"
    headers = _legacy_http_session(agw, "fs")
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"path": str(target), "content": m}}}).encode()
    hdrs = {"Host": f"127.0.0.1:{api.port}", "Content-Type": "application/json", "Accept": "application/json",
            "Content-Length": str(len(body)), **headers}
    try:
        sock = socket.create_connection((api.host, api.port), timeout=10)
        try:
            sock.sendall(("POST /mcp/fs HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
                          + "\r\n").encode() + body)
            ev = events.wait_requested(m, "fs", "write_file")
        finally:
            closed_at = time.monotonic()
            sock.close()
        run(lambda: wait_gone(api, ev["approval"]["id"], timeout=3))
        _assert_withdrawn(agw, api, events, ev["approval"]["id"], m, target, closed_at)
    finally:
        _cleanup_pending(api, m)


def test_last_approver_leaving_releases_held_calls(agw, api):
    m = marker()
    headers = _legacy_http_session(agw, "probe")
    stream = api.subscribe()
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["reply"] = harness.http_post(agw.mcp_url("probe"), {
                "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "probe", "arguments": {"marker": m}}}, headers, timeout=3)
        except OSError as e:
            box["error"] = e

    t = threading.Thread(target=call)
    try:
        t.start()
        stream.wait_requested(m, "probe", "probe")
        stream.close()  # the only approver goes away
        t.join(6)
        assert "reply" in box, f"the held call was not answered after its approver left: {box}"
        (msg,) = [x for x in harness.sse_json_messages(box["reply"].body) if x.get("id") == 3]
        assert msg["result"]["isError"] is True and "no approver" in json.dumps(msg), msg
    finally:
        t.join(8)
        _cleanup_pending(api, m)


def test_always_allow_keeps_the_entrys_deny_rules(aworld, agw, api, events):
    m = marker()

    async def body():
        async with open_session("http", "ruled", aworld.spec("ruled"), agw) as (s, _):
            before = await s.call_tool("probe", {"marker": f"rm-{m}-1"})
            async with anyio.create_task_group() as tg:
                call = Background(tg, lambda: s.call_tool("probe", {"marker": f"keep-{m}"}))
                ev = await in_thread(events.wait_requested, f"keep-{m}", "ruled", "probe")
                await in_thread(api.approve, ev["approval"]["id"], "always")
                kept = await call.wait()
            start = events.mark()
            with anyio.fail_after(10):
                after = await s.call_tool("probe", {"marker": f"rm-{m}-2"})
        return before, kept, after, start

    before, kept, after, start = run(body)
    assert_denial(before, "no rm")
    assert not kept.isError and f"keep-{m}" in first_text(kept)
    entry = _policy(aworld, "ruled")["tools"]["probe"]
    assert approvals.policy_check(aworld.policies_dir / "ruled.json").returncode == 0
    assert not events.requested(f"rm-{m}-2", since=start)
    assert after.isError, (f"always-allowing `keep-{m}` must not allow what the entry's rule denies; "
                           f"entry now {entry}, the rm- call got {result_view(after)}")
