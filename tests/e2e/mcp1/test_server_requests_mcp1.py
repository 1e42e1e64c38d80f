"""Server→client traffic and cancellation through the gateway (Python mcp 1.x client).

server-everything's tools: trigger-sampling-request (sampling/createMessage), trigger-elicitation-request
(elicitation/create), get-roots-list (roots/list, also requested by the server 350 ms after initialize),
trigger-long-running-operation (notifications/progress for the request's progressToken). Those three
"trigger"/roots tools are registered only when the client declares the capability, so their presence in
tools/list also shows the gateway forwarded initialize's capabilities untouched.
Cancellation uses tests/e2e/peers/slow_server.py, which logs "cancelled <marker>" when its task is cancelled.
"""

from __future__ import annotations

import uuid

import pytest
from v1client import (
    CONDITIONAL_TOOLS,
    ELICIT_NAME,
    ROOT_NAME,
    ROOT_URI,
    cancel_slow_call,
    exercise_server_requests,
    first_text,
    open_session,
    result_view,
    run,
)

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
UPSTREAMS = ["everything", "everything_http", "everything_sse"]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("route", ROUTES)
def test_sampling_elicitation_roots_reach_client(world, gateway, route, upstream):
    m = uuid.uuid4().hex[:12]
    spec = world.spec(upstream)

    async def body():
        direct = await exercise_server_requests("direct", upstream, spec, None, m)
        via = await exercise_server_requests(route, upstream, spec, gateway, m)
        return direct, via

    (d_cb, d_tools, d_samp, d_elic, d_roots), (cb, tools, samp, elic, roots) = run(body)
    assert CONDITIONAL_TOOLS <= d_tools, "baseline: capability-gated tools are offered to this client"
    assert CONDITIONAL_TOOLS <= tools, "client capabilities must reach the server unchanged"

    assert len(cb.sampling) == 1, "sampling/createMessage must reach the client exactly once"
    assert f"prompt {m}" in cb.sampling[0].messages[0].content.text
    assert result_view(samp) == result_view(d_samp), "sampling result must round-trip to the server"
    assert "sampled reply to:" in first_text(samp) and "e2e-model" in first_text(samp)

    assert len(cb.elicitation) == 1, "elicitation/create must reach the client exactly once"
    assert result_view(elic) == result_view(d_elic)
    assert ELICIT_NAME in "".join(c.text for c in elic.content if c.type == "text")

    assert cb.roots >= 1, "roots/list must reach the client"
    assert result_view(roots) == result_view(d_roots)
    assert ROOT_NAME in first_text(roots) and ROOT_URI in first_text(roots)

    rows = gateway.audit_rows_for(upstream, "trigger-sampling-request", m, settled=True)
    assert rows[0]["decision"] == "allowed" and rows[0]["outcome"] == "ok", rows[0].raw


@pytest.mark.parametrize("upstream", ["everything", "everything_http"])
@pytest.mark.parametrize("route", ROUTES)
def test_progress_notifications_reach_client(world, gateway, route, upstream):
    spec = world.spec(upstream)
    args = {"duration": 0.6, "steps": 4}

    async def call(r):
        seen: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

        async with open_session(r, upstream, spec, gateway if r != "direct" else None) as (s, _):
            result = await s.call_tool("trigger-long-running-operation", args, progress_callback=on_progress)
        return seen, result

    async def body():
        return await call("direct"), await call(route)

    (d_seen, d_result), (seen, result) = run(body)
    assert d_seen == [(1, 4), (2, 4), (3, 4), (4, 4)], f"baseline progress: {d_seen}"
    assert seen == d_seen, "every progress notification must reach the client, in order"
    assert result_view(result) == result_view(d_result)


@pytest.mark.parametrize("route", ROUTES)
def test_client_cancel_reaches_server(world, gateway, route):
    m = uuid.uuid4().hex[:12]
    text, _outcome, after = run(lambda: cancel_slow_call(route, world.spec("slow"), gateway, world.slow_log, m))
    assert f"cancelled {m}" in text, "notifications/cancelled must reach the upstream server"
    assert f"finished {m}" not in text
    assert first_text(after) == f"pong {m}", "the session keeps working after a cancel"

    (row,) = gateway.audit_rows_for("slow", "slow", m, settled=True)
    assert row["decision"] == "allowed", row.raw
    assert row["outcome"] == "cancelled", f"a cancelled forwarded call's outcome must say so: {row.raw}"
