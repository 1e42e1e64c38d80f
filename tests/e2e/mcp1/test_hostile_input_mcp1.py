"""Hostile input (issue 6, point 4): oversized lines and bodies, deeply nested JSON, invalid UTF-8, a huge
`tools/list` and thousands of concurrent held calls. Each must get a clear error or be handled, the
gateway must keep serving, and its memory must stay bounded.

Memory is read from /proc/<gateway pid>/status (VmRSS now, VmHWM peak) before and after each case and
logged as `[hostile] <case>: ...` (run with -s to see the figures). The bounds asserted are generous —
they catch a leak or an unbounded buffer (growth by multiples of the input on repetition), not allocator
noise: glibc keeps freed buffers of up to 32 MiB in the heap, so a 16 MiB message may leave tens of MiB
resident once, but repeating it must not add as much again.

The upstream is peers/hostile_server.py (hand-written stdio, so it can break size and shape rules).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from approvals import ControlApi

import harness

pytestmark = pytest.mark.gateway

MIB = 1024 * 1024
LIMIT = 16 * MIB  # the documented maximum message size (HTTP body, stdio line, SSE event)
CALL_TIMEOUT = 10  # on "hostile": the backstop if an oversized answer's id could not be read
DEPTH = 100_000
HELD_CALLS = 2000
DENIED = 200  # of the held calls; the others are withdrawn
REPEATS = int(os.environ.get("HOSTILE_REPEATS", "1"))  # more for a longer look at the plateau
ALLOW_ALL = {"version": "1", "default": "allow"}
HOSTILE = harness.PEERS_DIR / "hostile_server.py"


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM in MiB, open fds."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    out["fds"] = len(list(Path(f"/proc/{pid}/fd").iterdir()))
    return out


def report(case: str, before: dict[str, float], after: dict[str, float]) -> None:
    harness.log(f"[hostile] {case}: RSS {before['VmRSS']:.1f} -> {after['VmRSS']:.1f} MiB, "
                f"peak {after['VmHWM']:.1f} MiB, fds {before['fds']:.0f} -> {after['fds']:.0f}")


@pytest.fixture(scope="module")
def hgw(e2e_tmp: Path):
    root = e2e_tmp / f"hostile-{uuid.uuid4().hex[:8]}"
    python = Path(sys.executable)
    hostile = harness.python_stdio(python, HOSTILE)
    hostile["call_timeout_secs"] = CALL_TIMEOUT
    servers = {
        "hostile": hostile,
        "many": harness.python_stdio(python, HOSTILE, {"HOSTILE_TOOLS": "20000"}),
        "held": harness.python_stdio(python, HOSTILE),
        "deeplist": harness.python_stdio(python, HOSTILE, {"HOSTILE_DEEP_LIST": str(DEPTH)}),
    }
    policies = {
        "hostile": ALLOW_ALL,
        # A hidden tool makes the gateway parse and filter the whole list, its costliest path.
        "many": {"version": "1", "default": "allow", "hide": ["tool_00007"]},
        "held": {"version": "1", "default": "allow", "tools": {"echo": {"action": "require_approval"}}},
        "deeplist": {"version": "1", "default": "allow", "hide": ["secret_*"]},
    }
    config = harness.write_config(root, servers, policies, approval_timeout_secs=120)
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (hostile) exited with {gateway.stop()}")


def session_headers(gw, server: str) -> dict[str, str]:
    init = harness.http_post(gw.mcp_url(server), harness.INITIALIZE_BODY, gw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def call(gw, headers, server: str, tool: str, args: dict, rid: int = 2, timeout: float = 30) -> dict[str, Any]:
    reply = harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                                   "params": {"name": tool, "arguments": args}},
                              headers, timeout=timeout)
    assert reply.status == 200, (reply.status, reply.text()[:500])
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid]
    return msg


def still_serving(gw, headers) -> None:
    m = uuid.uuid4().hex[:8]
    msg = call(gw, headers, "hostile", "echo", {"message": m}, rid=99)
    assert msg["result"]["content"][0]["text"] == f"Echo: {m}", msg


def post_raw(gw, server: str, body: bytes, headers: dict[str, str], timeout: float = 60) -> harness.HttpReply:
    return harness.http_post(gw.mcp_url(server), body, headers, timeout=timeout)


# ---- oversized messages -----------------------------------------------------------------------------


def test_http_body_over_the_limit_is_413_with_a_clear_message(hgw):
    headers = session_headers(hgw, "hostile")
    pad = "x" * (LIMIT + 1024)
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"message": pad}}}).encode()
    before = memory(hgw.pid)
    reply = post_raw(hgw, "hostile", body, headers)
    first = memory(hgw.pid)
    for _ in range(3):
        assert post_raw(hgw, "hostile", body, headers).status == 413
    after = memory(hgw.pid)
    report("HTTP body 16 MiB + 1 KiB, x4", before, after)
    assert reply.status == 413, (reply.status, reply.text()[:300])
    error = json.loads(reply.body)["error"]
    assert "larger than the 16 MiB limit" in error["message"], error
    still_serving(hgw, headers)
    assert after["VmRSS"] - first["VmRSS"] < 48, "repeating an oversized body must not grow memory again"
    assert after["VmRSS"] - before["VmRSS"] < 160


def test_message_just_under_the_limit_passes_both_ways(hgw):
    """15 MiB of arguments in, 15 MiB of result out: forwarded intact, nothing refused."""
    headers = session_headers(hgw, "hostile")
    m = uuid.uuid4().hex[:8]
    before = memory(hgw.pid)
    msg = call(hgw, headers, "hostile", "echo", {"message": m + "q" * (15 * MIB)}, timeout=90)
    assert msg["result"]["content"][0]["text"] == f"Echo: {m}" + "q" * (15 * MIB)
    msg = call(hgw, headers, "hostile", "big", {"mib": 15}, rid=3, timeout=90)
    assert len(msg["result"]["content"][0]["text"]) == 15 * MIB
    first = memory(hgw.pid)
    for i in range(REPEATS):
        msg = call(hgw, headers, "hostile", "echo", {"message": m + "r" * (15 * MIB)}, rid=4 + i, timeout=90)
        report(f"rep {i}", first, memory(hgw.pid))
        assert len(msg["result"]["content"][0]["text"]) == len(m) + 15 * MIB + len("Echo: ")
    after = memory(hgw.pid)
    report("15 MiB call in + 15 MiB result out", before, first)
    report(f"{REPEATS} more 15 MiB call(s)", first, after)
    # The gate holds a 15 MiB call about three times at most (the request's bytes, its arguments read
    # once into a value, the record SQLite builds for the audit row; no digest buffer, no redacted
    # copy, no framed copy for the stdio server: BENCHMARKS.md 2026-12-01 20:30). SQLite reads the
    # audit text in place (audit writer/uncopied.rs) instead of copying it first. With the
    # allocator's mmap threshold fixed (gateway/src/allocator.rs) every such buffer is unmapped when
    # freed, and the outcome is a row of its own (audit migration 3), not a rewrite of the 15 MiB
    # one. Measured, debug build: RSS +2.3 MiB after the first call and result, +1.4 after one
    # more, peak +42 MiB over the baseline (about +57 before the in-place binding; +104 before the
    # allocator and the outcomes table). The bounds leave room for noise and catch a large buffer
    # kept after the call, or one more 15 MiB copy made during it.
    assert first["VmRSS"] - before["VmRSS"] < 16, "a finished call's buffers are given back"
    assert after["VmRSS"] - first["VmRSS"] < 8, "repeated calls keep nothing"
    assert after["VmHWM"] - before["VmRSS"] < 56, f"peak {after['VmHWM']:.0f} MiB"


def test_upstream_line_over_the_limit_is_dropped_and_its_call_fails_at_once(hgw):
    """The line is dropped without being buffered whole; its id, read from the line's start, gets an error
    (not a wait for the call timeout)."""
    headers = session_headers(hgw, "hostile")
    dropped_before = sum("line dropped" in line for line in hgw.proc.lines)
    before = memory(hgw.pid)
    started = time.monotonic()
    msg = call(hgw, headers, "hostile", "oversized", {}, timeout=60)
    waited = time.monotonic() - started
    after = memory(hgw.pid)
    report("upstream stdout line 16 MiB + 64 KiB", before, after)
    assert "error" in msg and "larger than the 16 MiB limit" in msg["error"]["message"], msg
    assert waited < CALL_TIMEOUT, f"answered after {waited:.2f} s: the call must not wait for the timeout"
    # The log line and the answer leave the gateway separately; the harness reads stderr on its own
    # thread, so wait (bounded) for the line rather than expect it already read.
    harness.wait_until(lambda: sum("line dropped" in line for line in hgw.proc.lines) > dropped_before, 10.0,
                       "the gateway's log saying why the line was dropped")
    still_serving(hgw, headers)
    assert after["VmRSS"] - before["VmRSS"] < 160


def test_connect_stdin_line_over_the_limit_gets_a_parse_error_and_the_relay_goes_on(hgw):
    proc = subprocess.Popen(hgw.connect_argv("hostile"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: [lines.append(x) for x in iter(proc.stdout.readline, b"")],
                              daemon=True)
    reader.start()

    def send(raw: bytes) -> None:
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    def answer(pred, what: str) -> dict:
        def find():
            for raw in list(lines):
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                if pred(msg):
                    return msg
            return None
        return harness.wait_until(find, 30, what)

    before = memory(hgw.pid)
    try:
        send(json.dumps(harness.INITIALIZE_BODY).encode())
        answer(lambda m: m.get("id") == 1, "initialize answer")
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"'
             + b"x" * (LIMIT + 100) + b'"}}}')
        send(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"\xff\xfe"}}}')
        send(b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}}')
        too_long = answer(lambda m: m.get("id") is None and "longer than" in json.dumps(m), "line-too-long error")
        after_msg = answer(lambda m: m.get("id") == 4, "the call after the long line")
        bad_utf8 = answer(lambda m: m.get("id") is None and "not valid UTF-8" in json.dumps(m), "UTF-8 error")
    finally:
        proc.kill()
        proc.wait(10)
    after = memory(hgw.pid)
    report("connect stdin line 16 MiB + 100 B", before, after)
    assert too_long["error"]["code"] == -32700, too_long
    assert after_msg["result"]["content"][0]["text"] == "Echo: after", after_msg
    assert bad_utf8["error"]["code"] == -32700, bad_utf8
    ids = [json.loads(x).get("id") for x in lines if x.startswith(b"{")]
    assert 2 not in ids and 3 not in ids, "the long line and the invalid one were not sent on"
    assert after["VmRSS"] - before["VmRSS"] < 160


# ---- shape: nesting and encoding --------------------------------------------------------------------


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("where", ["body", "tools/call arguments", "other request params", "notification"])
def test_deeply_nested_json_from_the_client_gets_a_clear_error(hgw, where):
    headers = session_headers(hgw, "hostile")
    bodies = {
        "body": nested(DEPTH),
        "tools/call arguments": b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo",'
                                b'"arguments":{"message":' + nested(DEPTH) + b"}}}",
        "other request params": b'{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":'
                                + nested(DEPTH) + b"}}",
        "notification": b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":' + nested(DEPTH) + b"}}",
    }
    before = memory(hgw.pid)
    reply = post_raw(hgw, "hostile", bodies[where], headers)
    after = memory(hgw.pid)
    report(f"client JSON nested {DEPTH} deep ({where})", before, after)
    text = reply.text()
    harness.log(f"[hostile] nested ({where}) -> {reply.status} {text[:200]!r}")
    # Never forwarded (an upstream's recursive parser could be crashed by it): a parse error.
    assert reply.status == 400, (reply.status, text[:300])
    error = json.loads(reply.body)["error"]
    assert error["code"] == -32700 and error["message"] == "[portcullis] message nested deeper than 128 levels", error
    still_serving(hgw, headers)
    assert after["VmRSS"] - before["VmRSS"] < 64


def test_deeply_nested_result_from_the_upstream_is_withheld_without_harm(hgw):
    """Past the depth it checks, the gateway's reader only skips: it cannot inspect such an answer's
    texts before the agent reads them, so the answer is withheld with the reason (it went on as it
    came before, its texts uninspected)."""
    headers = session_headers(hgw, "hostile")
    before = memory(hgw.pid)
    reply = post_raw(hgw, "hostile", json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                                 "params": {"name": "deep", "arguments": {"depth": DEPTH}}}).encode(),
                     headers)
    after = memory(hgw.pid)
    report(f"upstream result nested {DEPTH} deep", before, after)
    assert reply.status == 200, reply.status
    assert nested(DEPTH) not in reply.body
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == 8]
    assert msg["error"]["message"].startswith(
        "[portcullis] the answer was withheld: it could not be read for inspection"), msg
    still_serving(hgw, headers)
    rows = hgw.audit_db("server = 'hostile' AND tool = 'deep'")
    assert rows and rows[-1]["decision"] == "allowed", [r.raw for r in rows]


def test_an_answer_that_hides_bad_utf8_past_the_checked_depth_is_withheld(hgw):
    """An answer whose text smuggles tag characters, with a string of invalid UTF-8 nested past the
    depth the gateway's reader checks. A client that reads bad UTF-8 as U+FFFD (Node's Buffer
    `toString`) would parse it, and read the smuggled text: nothing of it may go on."""
    headers = session_headers(hgw, "hostile")
    reply = post_raw(hgw, "hostile", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                                 "params": {"name": "smuggle", "arguments": {}}}).encode(),
                     headers)
    assert reply.status == 200, reply.status
    assert b"\xff" not in reply.body and "\U000E0069".encode() not in reply.body
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == 9]
    assert "result" not in msg, msg
    assert msg["error"]["message"].startswith(
        "[portcullis] the answer was withheld: it could not be read for inspection"), msg
    assert chr(0xE0069) not in json.dumps(msg, ensure_ascii=False), msg
    still_serving(hgw, headers)


def test_a_tools_list_too_deep_to_filter_is_not_passed_on(hgw):
    """A page the gateway cannot parse cannot be checked for hidden tools: fail closed, with a reason."""
    headers = session_headers(hgw, "deeplist")
    reply = post_raw(hgw, "deeplist", b'{"jsonrpc":"2.0","id":11,"method":"tools/list"}', headers)
    assert reply.status == 200, reply.status
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == 11]
    assert "result" not in msg, "an unfilterable tools/list must not reach the client"
    assert msg["error"]["message"].startswith("[portcullis] the server's tools/list answer could not be read"), msg


def test_invalid_utf8_from_an_http_client_is_a_parse_error(hgw):
    headers = session_headers(hgw, "hostile")
    for body in (b"\xff\xfe\xfd", b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo",'
                                 b'"arguments":{"message":"\xc3\x28"}}}'):
        reply = post_raw(hgw, "hostile", body, headers)
        assert reply.status == 400, (reply.status, reply.text())
        error = json.loads(reply.body)["error"]
        assert error["code"] == -32700 and error["message"].startswith("[portcullis] message is not valid UTF-8"), error
    still_serving(hgw, headers)


# ---- a huge tools/list --------------------------------------------------------------------------------


def test_huge_tools_list_is_filtered_and_passed_on(hgw):
    """The first list pins all 20000 tools; a repeated one is only compared with what was learnt. Both
    times are logged (the figures are in BENCHMARKS.md; crates/gate/benches/tools_list.rs measures
    the gateway's share alone)."""
    headers = session_headers(hgw, "many")
    before = memory(hgw.pid)
    for rid, sight in ((4, "first sight"), (5, "repeated")):
        started = time.monotonic()
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}).encode()
        reply = post_raw(hgw, "many", body, headers)
        took = time.monotonic() - started
        (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid]
        names = [t["name"] for t in msg["result"]["tools"]]
        harness.log(f"[hostile] tools/list of 20000 ({sight}): {len(reply.body) / MIB:.1f} MiB in {took:.3f} s "
                    "(server, gateway and client)")
        # The server's 5 named tools, then tool_00000 … tool_19994; the policy hides tool_00007.
        assert len(names) == 19_999 and "tool_00007" not in names and "tool_19994" in names
    after = memory(hgw.pid)
    report("tools/list of 20000 tools (one hidden), twice", before, after)
    assert after["VmRSS"] - before["VmRSS"] < 128


# ---- thousands of held calls -----------------------------------------------------------------------


async def hold_many(gw, headers: dict[str, str], n: int, marker: str) -> list[tuple[Any, Any]]:
    """Open `n` connections, each POSTing a held `echo` call; return the (reader, writer) pairs once
    each has its response headers (held calls answer on an SSE stream at once)."""
    port = int(gw.url.rsplit(":", 1)[1])
    conns = []

    async def one(i: int):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = json.dumps({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"message": f"{marker} {i}"}}}).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write((f"POST /mcp/held HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                      f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n{head}\r\n")
                     .encode() + body)
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), 60)
        assert b" 200 " in status, status
        conns.append((reader, writer))

    for start in range(0, n, 200):  # in waves, so the listen backlog is never the limit
        await asyncio.gather(*(one(i) for i in range(start, min(n, start + 200))))
    return conns


def test_thousands_of_concurrent_held_calls_then_all_withdrawn_or_denied(hgw):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))
    api = ControlApi.of(hgw)
    stream = api.subscribe()
    headers = session_headers(hgw, "held")
    m = "m" + uuid.uuid4().hex[:10]
    still_serving(hgw, session_headers(hgw, "hostile"))
    before = memory(hgw.pid)

    async def body():
        started = time.monotonic()
        conns = await hold_many(hgw, headers, HELD_CALLS, m)
        pending = await asyncio.to_thread(
            api.wait_pending, lambda p: len([x for x in p if m in json.dumps(x)]) >= HELD_CALLS and p,
            60, f"{HELD_CALLS} held calls")
        held_at = time.monotonic() - started
        peak = memory(hgw.pid)
        mine = [p for p in pending if m in json.dumps(p)]
        # Some denied by the person (each control request looks its socket's owner up in
        # /proc/net/tcp, ~20 ms with 4000 loopback sockets open), the rest withdrawn by their clients
        # hanging up.
        t0 = time.monotonic()
        for p in mine[:DENIED]:
            reply = await asyncio.to_thread(api.deny, p["id"], "hostile test")
            assert reply.status == 200, reply
        t1 = time.monotonic()
        for _, writer in conns:
            writer.close()
        harness.log(f"[hostile] {DENIED} denials took {t1 - t0:.1f} s")
        await asyncio.to_thread(api.wait_pending, lambda p: not any(m in json.dumps(x) for x in p), 60,
                                "every held call to be gone")
        return held_at, peak, time.monotonic() - started

    try:
        held_at, peak, total = asyncio.run(asyncio.wait_for(body(), 180))
    finally:
        stream.close()
    settled = harness.wait_until(lambda: (lambda x: x if x["fds"] <= before["fds"] + 10 else None)(memory(hgw.pid)),
                                 30, "the gateway's sockets to close")
    report(f"{HELD_CALLS} held calls: before -> all held", before, peak)
    report(f"{HELD_CALLS} held calls: before -> all gone", before, settled)
    harness.log(f"[hostile] {HELD_CALLS} held in {held_at:.1f} s, all decided or withdrawn after {total:.1f} s")
    rows = harness.wait_until(
        lambda: (lambda r: r if len(r) >= HELD_CALLS else None)(
            hgw.audit_db("server = 'held' AND tool = 'echo' AND arguments LIKE ?", (f"%{m}%",))),
        30, f"{HELD_CALLS} audit rows")
    decisions = sorted({r["decision"] for r in rows})
    assert len(rows) == HELD_CALLS and decisions == ["cancelled", "rejected"], (len(rows), decisions)
    assert peak["fds"] >= before["fds"] + HELD_CALLS - 10, "the calls were really concurrent"
    assert peak["VmRSS"] - before["VmRSS"] < 256, "a held call must cost kilobytes, not megabytes"
    assert settled["VmRSS"] - before["VmRSS"] < 128
