"""Headers that mirror the body, and exact rate limits, against a real HTTP upstream (issue 28, 3 and 4).

peers/mirror_http_server.py is a dual-era MCPServer (mcp 2.3.0) whose `route` tool declares
`x-mcp-header` on two arguments (`region` → `Mcp-Param-Region`, `count` → `Mcp-Param-Count`) and
which logs the `mcp-*` headers every tools/call arrived with. A raw client sends headers by hand
through the gateway's HTTP entry, in the 2026-07-28 era (stateless) and in the legacy era (an
`initialize`d session): a header that disagrees with the body, or that the body gives no value
for, is refused with 400 / -32020 and never reaches the server; a call the gateway forwards
reaches the server with the body's own values in its headers. The mcp 2.3.0 `Client` does the same
through both routes, and meets the rate limit as written: `max` 3 per `window` 6 s, five calls in
under 6 s, the 4th and 5th refused.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import anyio
import pytest
from v2client import MODERN, assert_denial, first_text, open_client, run

import approvals
import harness

pytestmark = pytest.mark.gateway

SERVER = "mirror_http"
HELD = "mirror_http_held"  # the same upstream, where `route` waits for a person
LEGACY = "2025-11-25"
POLICY = {"version": "1", "default": "allow", "tools": {"echo": {"rate_limit": {"max": 3, "window": 6}}}}
HELD_POLICY = {"version": "1", "default": "allow", "tools": {"route": {"action": "require_approval"}}}


def marker() -> str:
    return "m" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="module")
def header_log(e2e_tmp: Path) -> Path:
    return e2e_tmp / f"mirror-headers-{uuid.uuid4().hex[:8]}.jsonl"


@pytest.fixture(scope="module")
def spec(header_log: Path):
    with harness.python_http_peer("mirror_http_server", "mirror_http_server.py", {"MIRROR_HEADER_LOG": str(header_log)}) as spec:
        yield spec


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path, spec):
    root = e2e_tmp / f"mirror-headers-{uuid.uuid4().hex[:8]}"
    servers = {SERVER: {"type": "http", **spec}, HELD: {"type": "http", **spec}}
    config = harness.write_config(root, servers, {SERVER: POLICY, HELD: HELD_POLICY})
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (mirror headers) exited with {gateway.stop()}")


def calls_logged(log: Path, note: str) -> list[dict]:
    """The tools/call POSTs the server got whose arguments carry `note`."""
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in entries if (e.get("arguments") or {}).get("note") == note]


class RawClient:
    """Posts JSON-RPC by hand, with whatever headers a test gives, in one era."""

    def __init__(self, gateway: harness.Gateway, era: str, server: str = SERVER) -> None:
        self.gateway, self.era, self.server, self.session, self.next_id = gateway, era, server, None, 1
        if era == LEGACY:
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": LEGACY, "capabilities": {},
                               "clientInfo": {"name": "mirror-e2e", "version": "0"}}}
            reply = self.post(init)
            assert reply.status == 200, reply.text()
            self.session = {k.lower(): v for k, v in reply.headers.items()}["mcp-session-id"]
            assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
        listed = self.request("tools/list", {})
        (msg,) = harness.sse_json_messages(listed.body)
        assert "route" in {t["name"] for t in msg["result"]["tools"]}, msg

    def post(self, body: dict, headers: dict[str, str] | None = None) -> harness.HttpReply:
        hdrs = dict(self.gateway.auth_headers())
        if self.session:
            hdrs.update({"Mcp-Session-Id": self.session, "MCP-Protocol-Version": LEGACY})
        hdrs.update(headers or {})
        return harness.http_post(self.gateway.mcp_url(self.server), body, headers=hdrs)

    def request(self, method: str, params: dict, headers: dict[str, str] | None = None) -> harness.HttpReply:
        if self.era == MODERN:
            params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                                          "io.modelcontextprotocol/clientCapabilities": {}}}
            headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **(headers or {})}
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, headers)

    def call_route(self, arguments: dict, headers: dict[str, str]) -> harness.HttpReply:
        if self.era == MODERN:
            headers = {"Mcp-Name": "route", **headers}
        return self.request("tools/call", {"name": "route", "arguments": arguments}, headers)


def assert_header_refused(reply: harness.HttpReply, *needles: str) -> None:
    assert reply.status == 400, f"a header the body does not back must be refused with 400: {reply.status} {reply.text()}"
    (msg,) = harness.sse_json_messages(reply.body)
    assert msg["error"]["code"] == -32020, msg
    text = msg["error"]["message"]
    assert text.startswith("[portcullis]"), text
    for needle in needles:
        assert needle.lower() in text.lower(), f"{needle!r} not in {text!r}"


def test_direct_client_sends_the_declared_headers_and_the_server_logs_them(spec, header_log):
    """Baseline: the SDK client mirrors `region`/`count` into headers, and the peer logs what came."""
    m = marker()

    async def body():
        async with open_client("direct", SERVER, spec) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            return c.protocol_version, tools, await c.call_tool("route", {"region": "us-east", "count": 3, "note": m})

    version, tools, result = run(body)
    assert version == MODERN
    assert tools["route"].input_schema["properties"]["region"]["x-mcp-header"] == "Region"
    assert first_text(result) == f"routed us-east 3 {m}"
    (entry,) = calls_logged(header_log, m)
    assert entry["headers"]["mcp-param-region"] == ["us-east"] and entry["headers"]["mcp-param-count"] == ["3"], entry


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_a_param_header_that_disagrees_with_the_body_is_refused(gw, header_log, era):
    client = RawClient(gw, era)
    m = marker()
    args = {"region": "us-east", "count": 2, "note": m}
    assert_header_refused(client.call_route(args, {"Mcp-Param-Region": "eu-west"}), "Mcp-Param-Region", "does not match")
    assert_header_refused(client.call_route(args, {"Mcp-Param-Count": "20"}), "Mcp-Param-Count", "does not match")
    # The body's value, spelled as the spec says another value would be: still another value.
    assert_header_refused(client.call_route(args, {"Mcp-Param-Region": "=?base64?ZXUtd2VzdA==?="}), "does not match")
    assert calls_logged(header_log, m) == [], f"{era}: a refused call never reaches the server"


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_a_param_header_the_body_gives_no_value_for_is_refused(gw, header_log, era):
    client = RawClient(gw, era)
    m = marker()
    reply = client.call_route({"region": "us-east", "note": m}, {"Mcp-Param-Count": "5"})
    assert_header_refused(reply, "Mcp-Param-Count", "gives none")
    reply = client.call_route({"region": "us-east", "note": m}, {"Mcp-Param-Note": m})
    assert_header_refused(reply, "Mcp-Param-Note", "declares")
    assert calls_logged(header_log, m) == [], f"{era}: a refused call never reaches the server"


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_an_agreeing_header_passes_and_the_server_gets_the_bodys_values(gw, header_log, era):
    client = RawClient(gw, era)
    m = marker()
    # Count as 7.0: the spec compares integers numerically, so it agrees with 7.
    reply = client.call_route({"region": "ap-south", "count": 7, "note": m},
                              {"Mcp-Param-Region": "ap-south", "Mcp-Param-Count": "7.0"})
    assert reply.status == 200, reply.text()
    (msg,) = harness.sse_json_messages(reply.body)
    assert msg["result"]["content"][0]["text"] == f"routed ap-south 7 {m}", msg
    (entry,) = calls_logged(header_log, m)
    assert entry["headers"].get("mcp-param-region") == ["ap-south"], entry
    assert entry["headers"].get("mcp-param-count") == ["7"], f"written from the body, not copied: {entry}"


@pytest.mark.parametrize("route", ["http", "stdio"])
def test_sdk_client_through_the_gateway_reaches_the_server_with_the_bodys_headers(gw, spec, header_log, route):
    """Through `portcullis connect` the client sends no HTTP headers at all; the server still gets
    them, written from the body (non-ASCII in the spec's base64 form)."""
    m = marker()

    async def body():
        async with open_client(route, SERVER, spec, gw) as c:
            await c.list_tools()
            return await c.call_tool("route", {"region": "zürich", "count": 11, "note": m})

    assert first_text(run(body)) == f"routed zürich 11 {m}"
    (entry,) = calls_logged(header_log, m)
    assert entry["headers"].get("mcp-param-region") == ["=?base64?esO8cmljaA==?="], entry
    assert entry["headers"].get("mcp-param-count") == ["11"], entry


def test_rate_limit_allows_max_calls_in_any_window(gw, spec):
    """The report: `max` 3 per `window` 6 s, calls 1.15 s apart. A token bucket let all five through
    in 4.6 s; an exact window lets three through and refuses the 4th and 5th, saying when to retry."""
    m = marker()

    async def body():
        results = []
        async with open_client("http", SERVER, spec, gw) as c:
            start = time.monotonic()
            for i in range(5):
                # Pacing, not synchronization: the calls must be spread over the window.
                await anyio.sleep(max(0.0, start + 1.15 * i - time.monotonic()))
                sent = time.monotonic() - start
                results.append((sent, await c.call_tool("echo", {"message": f"{m}-{i}"})))
        return results

    results = run(body)
    assert results[-1][0] < 6.0, f"the five calls must fall within one window: {[s for s, _ in results]}"
    for i, (_, r) in enumerate(results[:3]):
        assert first_text(r) == f"Echo: {m}-{i}", f"call {i + 1} of max 3 must pass"
    for sent, r in results[3:]:
        text = assert_denial(r, "rate limit", "retry in")
        retry = int(text.split("retry in ")[1].split()[0])
        # The first call leaves the window 6 s after it was let through.
        assert 0 < retry <= 6 - int(sent), (sent, text)
    rows = gw.audit_rows_for(SERVER, "echo", m, count=5, settled=True)
    assert [r["decision"] for r in rows] == ["allowed"] * 3 + ["rate_limited"] * 2, [r.raw for r in rows]


@pytest.mark.parametrize("era", [MODERN, LEGACY])
def test_a_call_approved_with_edits_reaches_the_server_with_headers_of_the_edited_arguments(gw, header_log, era):
    """The person changes `region` and `count`; the server gets the edited values in the body and in
    its headers, not the agent's (whose headers agreed with the agent's body)."""
    api = approvals.ControlApi.of(gw)
    stream = api.subscribe()  # an attached approver: the call is held, not refused
    try:
        client = RawClient(gw, era, HELD)
        m = marker()
        replies: list[harness.HttpReply] = []
        call = threading.Thread(target=lambda: replies.append(client.call_route(
            {"region": "us-east", "count": 1, "note": m}, {"Mcp-Param-Region": "us-east", "Mcp-Param-Count": "1"})))
        call.start()
        held = api.wait_pending(lambda p: [a for a in p if approvals.mentions(a, m)], 10.0, "the held route call")
        edited = {"region": "eu-north", "count": 2, "note": m}
        path = f"/control/approvals/{held[0]['id']}/approve"
        decided = api.request("POST", path, {"arguments": edited})
        assert decided.status == 200, decided.text()
        call.join(20.0)
        assert not call.is_alive() and replies, "the approved call must be answered"
        (msg,) = harness.sse_json_messages(replies[0].body)
        assert msg["result"]["content"][0]["text"] == f"routed eu-north 2 {m}", msg
        (entry,) = calls_logged(header_log, m)
        assert entry["arguments"] == edited, entry
        assert entry["headers"].get("mcp-param-region") == ["eu-north"], entry
        assert entry["headers"].get("mcp-param-count") == ["2"], entry
    finally:
        stream.close()
