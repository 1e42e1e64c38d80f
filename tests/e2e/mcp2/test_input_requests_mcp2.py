"""MRTR input requests decided at the gate (issue 32), with the dual-era Python client (mcp 2.3.0)
against the modern server (peers/modern_server.py, MCPServer from mcp 2.3.0), over both entries.

`greet` answers its first tools/call with `input_required` and an elicitation input request. Under
`modern` (elicitation allowed by the default) it reaches the client; under `modern_strict` the policy
denies elicitation: the request leaves the answer before the client reads it, the client's callback is
never called, and the retry carries the decline the gate put in for it, so the server reads a "no"
and the call ends as the server ends a declined one — never with a name the person did not give.
"""

from __future__ import annotations

import uuid

import pytest
from v2client import ELICIT_NAME, MODERN, Elicitations, first_text, open_client, run

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


@pytest.mark.parametrize("route", ROUTES)
def test_allowed_input_request_reaches_the_client_and_is_recorded(world, gateway, route):
    m = marker()
    asked = Elicitations()

    async def body():
        async with open_client(route, "modern", world.spec("modern"), gateway, elicitation_callback=asked) as c:
            return c.protocol_version, await c.call_tool("greet", {"marker": m})

    version, via = run(body)
    assert version == MODERN
    assert len(asked.asked) == 1 and m in asked.asked[0].message
    assert first_text(via) == f"Hello, {ELICIT_NAME} ({m})"
    (row,) = gateway.audit_rows_for("modern", "elicitation", m)
    assert row["method"] == "elicitation/create", row.raw
    assert row["decision"] == "allowed" and row["rule"] == "default", row.raw


@pytest.mark.parametrize("route", ROUTES)
def test_denied_input_request_never_reaches_the_client_and_the_server_reads_a_decline(world, gateway, route):
    m = marker()
    asked, asked_direct = Elicitations(), Elicitations()

    async def body():
        async with open_client(route, "modern_strict", world.spec("modern_strict"), gateway,
                               elicitation_callback=asked) as c:
            via = await c.call_tool("greet", {"marker": m})
        return via

    via = run(body)
    assert asked.asked == [], "a denied input request must not reach the client"
    text = first_text(via)
    assert ELICIT_NAME not in text, f"no name was given, so none may be greeted: {text}"
    assert via.is_error or "declin" in text.lower(), f"the server must read a decline: {via}"
    (row,) = gateway.audit_rows_for("modern_strict", "elicitation", m)
    assert row["method"] == "elicitation/create", row.raw
    assert row["decision"] == "denied" and row["reason"] == "no forms from this server", row.raw
    assert row["rule"] == "server_requests.elicitation", row.raw
    calls = gateway.audit_rows_for("modern_strict", "greet", m, count=2, settled=True)
    assert [r["decision"] for r in calls] == ["allowed", "allowed"], "the call and its retry are decided"
