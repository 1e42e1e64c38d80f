"""Everything the policy does not decide passes through untouched: prompts, resources, completion, ping,
unknown methods, request ids (string and number), and `portcullis connect` writes protocol bytes only."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
import uuid
from typing import Any

import pytest
from mcp import types
from v1client import open_session, run

import harness

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def other_methods(session, m: str) -> dict[str, Any]:
    resources = await session.list_resources()
    first = resources.resources[0].uri
    return {
        "prompts": dump(await session.list_prompts()),
        "prompt": dump(await session.get_prompt("args-prompt", {"city": m})),
        "resources": dump(resources),
        "templates": dump(await session.list_resource_templates()),
        "read": dump(await session.read_resource(first)),
        "complete": dump(await session.complete(
            types.PromptReference(type="ref/prompt", name="completable-prompt"),
            {"name": "department", "value": "E"})),
        "ping": dump(await session.send_ping()),
    }


@pytest.mark.parametrize("upstream", ["everything", "everything_http"])
@pytest.mark.parametrize("route", ROUTES)
def test_other_methods_match_direct(world, gateway, route, upstream):
    m = uuid.uuid4().hex[:12]
    spec = world.spec(upstream)

    async def body():
        async with open_session("direct", upstream, spec) as (s, _):
            direct = await other_methods(s, m)
        async with open_session(route, upstream, spec, gateway) as (s, _):
            via = await other_methods(s, m)
        return direct, via

    direct, via = run(body)
    assert direct["prompt"]["messages"][0]["content"]["text"] == f"What's weather in {m}?"
    for key in direct:
        strip = lambda d: {k: v for k, v in d.items() if k != "_meta"} if isinstance(d, dict) else d  # noqa: E731
        assert strip(via[key]) == strip(direct[key]), f"{key} must pass through untouched"


class RawStdio:
    """A raw line-level stdio peer: write JSON-RPC lines, collect every stdout line as it arrives."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env)
        self.lines: list[bytes] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in iter(self.p.stdout.readline, b""):
            with self._cv:
                self.lines.append(line)
                self._cv.notify_all()

    def send(self, msg: dict[str, Any]) -> None:
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def response(self, rid: Any, timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for line in self.lines:
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if msg.get("id") == rid and ("result" in msg or "error" in msg):
                        return msg
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no response with id {rid!r} within {timeout}s; got {self.lines!r}")
                self._cv.wait(left)

    def close(self) -> tuple[int | None, str]:
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=8)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=5)
        return self.p.returncode, self.p.stderr.read().decode("utf-8", "replace")


def raw_exchange(peer: RawStdio, m: str) -> dict[str, Any]:
    peer.send(harness.INITIALIZE_BODY)
    init = peer.response(1)
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    peer.send({"jsonrpc": "2.0", "id": f"str-{m}", "method": "tools/call",
               "params": {"name": "echo", "arguments": {"message": m}}})
    peer.send({"jsonrpc": "2.0", "id": 4242, "method": "portcullis-e2e/unknown-method", "params": {"m": m}})
    peer.send({"jsonrpc": "2.0", "id": 4243, "method": "ping"})
    return {"init": init, "echo": peer.response(f"str-{m}"), "unknown": peer.response(4242),
            "ping": peer.response(4243)}


def test_connect_relays_raw_protocol_untouched(world, gateway):
    m = uuid.uuid4().hex[:12]
    spec = world.spec("everything")
    direct_peer = RawStdio([spec["command"], *spec["args"]])
    try:
        direct = raw_exchange(direct_peer, m)
    finally:
        direct_peer.close()
    relay = RawStdio(gateway.connect_argv("everything"))
    try:
        via = raw_exchange(relay, m)
    finally:
        code, stderr = relay.close()

    for line in relay.lines:
        msg = json.loads(line)  # stdout must carry protocol bytes only: every line one JSON-RPC message
        assert msg.get("jsonrpc") == "2.0", f"non-protocol line on connect's stdout: {line!r}"
    assert via["init"]["result"]["serverInfo"] == direct["init"]["result"]["serverInfo"]
    assert via["echo"]["id"] == f"str-{m}", "string request ids must come back as sent"
    assert via["echo"]["result"]["content"] == direct["echo"]["result"]["content"]
    assert "error" in direct["unknown"], "baseline: server-everything rejects an unknown method"
    assert via["unknown"].get("error", {}).get("code") == direct["unknown"]["error"]["code"], \
        f"an unknown method must reach the server and its error come back: {via['unknown']}"
    assert via["ping"].get("result") == {}, via["ping"]
    assert code == 0, f"connect must exit 0 when its stdin closes: {code} {stderr[-500:]}"


def test_connect_without_its_config_says_so_and_writes_nothing_to_stdout(e2e_tmp):
    """`connect` runs the gate and starts the server from the config: without one it exits 1 with
    the reason on stderr; stdout stays protocol (nothing on it)."""
    empty = e2e_tmp / f"no-config-{uuid.uuid4().hex[:8]}"
    empty.mkdir()
    r = subprocess.run([str(harness.portcullis_bin()), "connect", "everything", "--data-dir", str(empty),
                        "--config", str(empty / "missing.json")],
                       input=json.dumps(harness.INITIALIZE_BODY) + "\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, f"a user error: {r.returncode} {r.stderr[-500:]}"
    assert r.stdout == "", f"stdout is protocol only: {r.stdout!r}"
    assert "missing.json" in r.stderr and r.stderr.startswith("portcullis: "), r.stderr


def test_a_held_call_with_no_keeper_that_can_start_says_what_to_do(e2e_tmp):
    """The keeper (`portcullis serve`, started by `connect` on demand) cannot run: its port is
    taken. Allowed calls go on; a held call is refused under its id, saying why and what to do."""
    root = e2e_tmp / f"no-keeper-{uuid.uuid4().hex[:8]}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        policy = {"version": "1", "default": "allow", "tools": {"get-sum": {"action": "require_approval"}}}
        config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                      {"everything": policy}, extra={"listen": f"127.0.0.1:{port}"})
        lines = [harness.INITIALIZE_BODY, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}},
                 {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get-sum", "arguments": {"a": 1, "b": 2}}}]
        r = subprocess.run([str(harness.portcullis_bin()), "connect", "everything", "--data-dir", str(root / "data"),
                            "--config", str(config)],
                           input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True,
                           timeout=90)
    answers = {a.get("id"): a for a in (json.loads(x) for x in r.stdout.split("\n") if x.strip())}
    assert answers[2]["result"]["content"][0]["text"] == "Echo: hi", answers
    refused = answers[3]["result"]
    text = refused["content"][0]["text"]
    assert refused.get("isError") is True and text.startswith("[portcullis]"), refused
    assert "portcullis serve" in text and "serve.log" in text, f"why, and what to do: {text}"


def test_http_request_ids_and_session_header(gateway):
    """Raw Streamable HTTP: the initialize reply carries Mcp-Session-Id, a string id comes back as sent."""
    url = gateway.mcp_url("everything")
    init = harness.http_post(url, harness.INITIALIZE_BODY, headers=gateway.auth_headers())
    assert init.status == 200, init.text()
    sid = next((v for k, v in init.headers.items() if k.lower() == "mcp-session-id"), None)
    assert sid, f"a legacy session must get an Mcp-Session-Id: {init.headers}"
    headers = dict(gateway.auth_headers(), **{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
    note = harness.http_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert note.status == 202, f"a notification is answered 202: {note.status} {note.text()}"
    call = harness.http_post(url, {"jsonrpc": "2.0", "id": "abc-1", "method": "tools/call",
                                   "params": {"name": "echo", "arguments": {"message": "raw"}}}, headers=headers)
    assert call.status == 200, call.text()
    (reply,) = [msg for msg in harness.sse_json_messages(call.body) if msg.get("id") == "abc-1"]
    assert reply["result"]["content"][0]["text"] == "Echo: raw"
    bad = harness.http_post(url, {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                            headers=dict(headers, **{"Mcp-Session-Id": "no-such-session"}))
    assert bad.status in (400, 404), f"an unknown session id must be refused: {bad.status}"


@pytest.mark.parametrize("route", ROUTES)
def test_unusual_text_and_large_payload_round_trip(world, gateway, route):
    """Raw U+2028/U+2029 (node's JSON.stringify leaves them unescaped), other non-ASCII text, and a
    300 kB argument must come back byte-identical: the stdio framing splits on \\n only."""
    m = uuid.uuid4().hex[:12]
    tricky = f"{m} line\u2028sep\u2029para \u00e9\u4e2d\U0001F600 \\n \"quoted\" \r tab\t"
    big = m + ("x" * 300_000)
    spec = world.spec("everything")

    async def body():
        async with open_session(route, "everything", spec, gateway) as (s, _):
            return await s.call_tool("echo", {"message": tricky}), await s.call_tool("echo", {"message": big})

    r1, r2 = run(body)
    assert r1.content[0].text == f"Echo: {tricky}"
    assert r2.content[0].text == f"Echo: {big}"


@pytest.mark.parametrize("route", ROUTES)
def test_concurrent_calls_in_one_session_are_not_serialized(world, gateway, route):
    """A quick call issued while a slow one runs in the same session answers first."""
    import anyio

    m = uuid.uuid4().hex[:12]
    order: list[str] = []

    async def body():
        async with open_session(route, "everything", world.spec("everything"), gateway) as (s, _):
            async def slow():
                await s.call_tool("trigger-long-running-operation", {"duration": 1.5, "steps": 3})
                order.append("slow")

            async def quick():
                await anyio.sleep(0.2)
                r = await s.call_tool("echo", {"message": m})
                order.append("quick:" + r.content[0].text)

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(quick)

    run(body)
    assert order == [f"quick:Echo: {m}", "slow"], f"calls must be multiplexed, not queued: {order}"
