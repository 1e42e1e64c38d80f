"""Held calls as tasks (MCP 2025-11-25 tasks), with the real Python mcp 1.x task client.

A call held for a person, from a client that asked for a task (`session.experimental.call_tool_as_task`,
which sends `params.task`), is answered at once with a task of the gateway's own: the person has up to
`approval.max_hold_secs`, `tasks/get` says the call waits for a person, the decision completes the task
(approved: the upstream's real result; denied: the `[portcullis]` refusal), and `tasks/cancel` withdraws
the approval. A client that asks for no task is held as before, within the usual approval timeout.

The upstream is tests/e2e/peers/hostile_server.py as `held`, its `echo` held by the policy; each test
tags its call with a unique message. Routes: the HTTP entry and `portcullis connect`.

Also measured: the time from the person's decision to the task's completion as the client sees it,
both for a client blocked in `tasks/result` and for one polling `tasks/get` at the advertised interval.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import anyio
import pytest
from mcp import types
from v1client import assert_denial, first_text, open_session, run

import harness
import held_calls

pytestmark = [pytest.mark.gateway,
              pytest.mark.filterwarnings("ignore:The experimental tasks API is deprecated:DeprecationWarning")]

MAX_HOLD = 120
TIMEOUT = 10


@pytest.fixture(scope="module")
def tgw(e2e_tmp):
    extra = {"approval": {"timeout_secs": TIMEOUT, "max_hold_secs": MAX_HOLD}}
    gw = held_calls.start(e2e_tmp, "tasks", extra=extra)
    yield gw
    gw.stop()


@pytest.fixture
def api(tgw):
    yield from held_calls.approver(tgw)


def held_approval(api, message: str) -> dict[str, Any]:
    return api.wait_pending(lambda ps: next((p for p in ps if p["arguments"].get("message") == message), None),
                            15, f"the call {message!r} to be held")


async def create_task(session, message: str) -> types.CreateTaskResult:
    return await session.experimental.call_tool_as_task("echo", {"message": message}, ttl=60_000)


@pytest.mark.parametrize("route", ["http", "stdio"])
def test_an_approved_task_completes_with_the_real_result(tgw, api, route):
    message = f"task-ok-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session(route, "held", {}, tgw) as (session, _):
            created = await create_task(session, message)
            task_id = created.task.taskId
            assert created.task.status == "working", created
            assert task_id.startswith("portcullis-"), f"a gateway task: {task_id!r}"
            status = await session.experimental.get_task(task_id)
            assert status.status == "working"
            assert "waiting for the user's approval" in (status.statusMessage or ""), status
            approval = await anyio.to_thread.run_sync(held_approval, api, message)
            hold_ms = approval["expires_at_ms"] - approval["requested_at_ms"]
            assert hold_ms >= (MAX_HOLD - 2) * 1000, f"a task holds up to max_hold_secs, not {hold_ms} ms"
            reply = await anyio.to_thread.run_sync(api.approve, approval["id"])
            assert reply.status == 200, reply
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
            assert first_text(result) == f"Echo: {message}", result
            assert not result.isError
            final = await session.experimental.get_task(task_id)
            assert final.status == "completed", final

    run(body)
    rows = tgw.audit_rows_for("held", "echo", message, settled=True)
    assert [r["decision"] for r in rows] == ["approved"], [r.raw for r in rows]
    assert rows[0]["outcome"] == "ok", rows[0].raw


def test_a_denied_task_completes_with_the_refusal(tgw, api):
    message = f"task-no-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "held", {}, tgw) as (session, _):
            created = await create_task(session, message)
            approval = await anyio.to_thread.run_sync(held_approval, api, message)
            reply = await anyio.to_thread.run_sync(lambda: api.deny(approval["id"], "not today"))
            assert reply.status == 200, reply
            statuses = [s.status async for s in session.experimental.poll_task(created.task.taskId)]
            assert statuses[-1] == "completed", statuses
            result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
            assert_denial(result, "denied", "not today")

    run(body)
    rows = tgw.audit_rows_for("held", "echo", message)
    assert [r["decision"] for r in rows] == ["rejected"], [r.raw for r in rows]


def test_tasks_cancel_withdraws_the_approval(tgw, api):
    message = f"task-cancel-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "held", {}, tgw) as (session, _):
            created = await create_task(session, message)
            await anyio.to_thread.run_sync(held_approval, api, message)
            cancelled = await session.experimental.cancel_task(created.task.taskId)
            assert cancelled.status == "cancelled", cancelled
            after = await session.experimental.get_task(created.task.taskId)
            assert after.status == "cancelled", after

    run(body)
    harness.wait_until(lambda: not any(p["arguments"].get("message") == message for p in api.pending()),
                       10, "the cancelled task's approval to be withdrawn")
    rows = tgw.audit_rows_for("held", "echo", message)
    assert [(r["decision"], r["decided_by"]) for r in rows] == [("cancelled", "client")], [r.raw for r in rows]


@pytest.fixture(scope="module")
def egw(e2e_tmp):
    """server-everything, whose `simulate-research-query` runs only as a task (taskSupport required):
    `ev_held` holds it, `ev_free` allows it."""
    root = e2e_tmp / f"tasks-everything-{uuid.uuid4().hex[:8]}"
    held = {"version": "1", "default": "allow", "tools": {"simulate-research-query": {"action": "require_approval"}}}
    servers = {"ev_held": harness.everything_stdio(), "ev_free": harness.everything_stdio()}
    config = harness.write_config(root, servers, {"ev_held": held, "ev_free": {"version": "1", "default": "allow"}},
                                  extra={"approval": {"timeout_secs": TIMEOUT, "max_hold_secs": MAX_HOLD}})
    gw = harness.start_gateway(config, root / "data")
    yield gw
    gw.stop()


@pytest.fixture
def eapi(egw):
    yield from held_calls.approver(egw)


async def research(session, topic: str):
    return await session.experimental.call_tool_as_task("simulate-research-query", {"topic": topic}, ttl=60_000)


def test_a_task_the_upstream_created_passes_through(egw, eapi):
    topic = f"free-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "ev_free", {}, egw) as (session, _):
            created = await research(session, topic)
            assert not created.task.taskId.startswith("portcullis-"), "the upstream's own task"
            statuses = [s.status async for s in session.experimental.poll_task(created.task.taskId)]
            result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
            return statuses, result

    statuses, result = run(body)
    assert statuses[-1] == "completed", statuses
    assert topic in first_text(result) or topic in json.dumps(result.model_dump(mode="json")), result


def test_an_upstream_tasks_result_is_inspected_like_the_calls_answer(egw, eapi):
    """Issue 33: the result of a task the upstream created is the call's answer, given later to
    tasks/result; the hidden characters the server echoes back in it are stripped, as in a plain
    answer, so a server cannot pass an answer around the inspection by answering through a task."""
    topic = f"free-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "ev_free", {}, egw) as (session, _):
            created = await research(session, f"{topic}\u200b\U000E0041\U000E0042")
            assert not created.task.taskId.startswith("portcullis-"), "the upstream's own task"
            _ = [s.status async for s in session.experimental.poll_task(created.task.taskId)]
            return await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)

    result = run(body)
    text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    assert topic in text, text[:2000]
    assert "\u200b" not in text and "\U000E0041" not in text, f"hidden characters reached the agent: {text[:2000]!r}"


def test_an_approved_task_on_a_task_only_tool_completes_with_the_upstreams_task_result(egw, eapi):
    """The approved call goes upstream with its task request; the upstream's task is followed with
    tasks/result and completes the gateway's task."""
    topic = f"held-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "ev_held", {}, egw) as (session, _):
            created = await research(session, topic)
            assert created.task.taskId.startswith("portcullis-"), created
            approval = await anyio.to_thread.run_sync(
                lambda: eapi.wait_pending(lambda ps: next((p for p in ps if p["arguments"].get("topic") == topic), None),
                                          15, "the research call to be held"))
            await anyio.to_thread.run_sync(eapi.approve, approval["id"])
            return await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)

    result = run(body)
    text = json.dumps(result.model_dump(mode="json"))
    assert not result.isError and topic in text, text[:2000]


def test_upstream_task_ids_pass_through_untouched(tgw, api):
    """A tasks/get for a task the gateway did not mint goes to the upstream, which answers it."""

    async def body():
        async with open_session("http", "held", {}, tgw) as (session, _):
            with pytest.raises(Exception) as caught:
                await session.experimental.get_task("upstream-task-that-does-not-exist")
            return str(caught.value)

    text = run(body)
    assert "portcullis" not in text.lower(), f"the upstream, not the gateway, answers its tasks: {text!r}"


def test_a_client_without_tasks_is_held_as_before(tgw, api):
    message = f"plain-{uuid.uuid4().hex[:8]}"

    async def body():
        async with open_session("http", "held", {}, tgw) as (session, _):
            async with anyio.create_task_group() as tg:
                out: dict[str, Any] = {}

                async def call():
                    out["result"] = await session.call_tool("echo", {"message": message})

                tg.start_soon(call)
                approval = await anyio.to_thread.run_sync(held_approval, api, message)
                hold_ms = approval["expires_at_ms"] - approval["requested_at_ms"]
                assert hold_ms <= TIMEOUT * 1000, f"no task: the usual approval timeout, not {hold_ms} ms"
                await anyio.to_thread.run_sync(api.approve, approval["id"])
            assert first_text(out["result"]) == f"Echo: {message}"
            assert not isinstance(out["result"], types.CreateTaskResult)

    run(body)


def test_decision_to_task_completion_time(tgw, api):
    """Seen by the client: blocked in tasks/result, and polling tasks/get at the advertised interval."""
    figures: dict[str, list[float]] = {"tasks/result": [], "tasks/get polling": []}

    async def one(mode: str) -> None:
        message = f"task-time-{uuid.uuid4().hex[:8]}"
        async with open_session("http", "held", {}, tgw) as (session, _):
            created = await create_task(session, message)
            task_id = created.task.taskId
            approval = await anyio.to_thread.run_sync(held_approval, api, message)
            done = anyio.Event()
            seen: dict[str, float] = {}

            async def watch():
                if mode == "tasks/result":
                    result = await session.experimental.get_task_result(task_id, types.CallToolResult)
                    assert first_text(result) == f"Echo: {message}"
                else:
                    async for status in session.experimental.poll_task(task_id):
                        last = status.status
                    assert last == "completed"
                seen["at"] = time.monotonic()
                done.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(watch)
                await anyio.sleep(0)  # let the watcher send its first request before the decision
                decided = time.monotonic()
                await anyio.to_thread.run_sync(api.approve, approval["id"])
                await done.wait()
            figures[mode].append((seen["at"] - decided) * 1000)

    async def body():
        for mode in figures:
            for _ in range(3):
                await one(mode)

    run(body, timeout=90)
    for mode, ms in figures.items():
        harness.log(f"decision -> task completion ({mode}): " + ", ".join(f"{m:.0f} ms" for m in ms))
    assert max(figures["tasks/result"]) < 2000, figures
    # Polling sees it within the advertised poll interval (500 ms) plus a round trip.
    assert max(figures["tasks/get polling"]) < 2500, figures
