"""What comes back (issue 33) in both eras, over both entries: an `echo` whose answer carries what
the message carried is a result crafted by the client. Through the modern server (2026-07-28,
MRTR-era result with `structuredContent`) and server-everything (legacy), the gate strips tag
characters, zero-width characters and terminal escapes from every text of the result — `content`
and `structuredContent` alike — and leaves real text as it is; the audit keeps the findings.
Each case also runs direct, so what the gate changed is exactly what the policy says."""

from __future__ import annotations

import uuid

import pytest
from v2client import MODERN, first_text, open_client, run

ROUTES = ["http", "stdio"]
HOSTILE = "ok\u200b \U000E0049\U000E0047\U000E004E \x1b]52;c;cm0gLXJm\x07done \x1b[2Jclear"
CLEAN = "ok  done clear"
REAL = "می\u200cخواهم \U0001F469\u200d\U0001F4BB"


@pytest.mark.gateway
@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("server", ["modern", "everything"])
def test_a_crafted_result_is_stripped_in_both_eras(world, gateway, route, server):
    m = "m" + uuid.uuid4().hex[:10]
    prefix = "Echo: "

    async def body():
        async with open_client("direct", server, world.spec(server)) as c:
            direct = await c.call_tool("echo", {"message": f"{m} {HOSTILE}"})
        async with open_client(route, server, world.spec(server), gateway) as c:
            version = c.protocol_version
            via = await c.call_tool("echo", {"message": f"{m} {HOSTILE}"})
            real = await c.call_tool("echo", {"message": f"{m} {REAL}"})
        return version, direct, via, real

    version, direct, via, real = run(body)
    assert (version == MODERN) == (server == "modern"), version
    assert first_text(direct) == f"{prefix}{m} {HOSTILE}", "direct, the server answers what it was sent"
    assert first_text(via) == f"{prefix}{m} {CLEAN}", f"through the gate: {first_text(via)!r}"
    if server == "modern":
        assert via.structured_content == {"result": f"{prefix}{m} {CLEAN}"}, via.structured_content
    assert first_text(real).encode() == f"{prefix}{m} {REAL}".encode(), "real text passes byte for byte"

    rows = gateway.audit_rows_for(server, "echo", m, settled=True, count=2)
    # Oldest first: the hostile echo, then the real text.
    hostile, clean = rows
    found = {(f["kind"], f["action"], f["what"]) for f in hostile["findings"]}
    assert ("invisible", "strip", "tag characters") in found, found
    assert any(what.startswith("OSC 52") for _, _, what in found), found
    assert any(kind == "escape" and what.startswith("CSI") for kind, _, what in found), found
    assert clean["findings"] == [], clean["findings"]
