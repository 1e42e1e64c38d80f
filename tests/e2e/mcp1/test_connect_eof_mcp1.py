"""A client that sends its requests and closes its input still gets its answers (issue 14, the
`echo '<request>' | portcullis connect` bug): `connect` and the gateway's local-socket connection both
finish the requests in flight after the end of input, then exit.

- through `portcullis connect` over the local socket: one `tools/call` and EOF; `initialize` + a slow
  call + EOF (the answer comes after the EOF, so the relay must wait for it); a last line without its
  newline;
- through the HTTP fallback (a gateway.json that names no socket), the same slow case;
- on the raw socket: a client that shuts only its writing half gets the answer to a call held for
  approval once it is approved; a client that closes the whole connection withdraws it (`cancelled`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import harness
from approvals import ControlApi

pytestmark = pytest.mark.gateway

POLICY = {
    "version": "1",
    "default": "allow",
    "tools": {"echo": {}, "get-sum": {"action": "require_approval"}},
}
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def eof_gw(e2e_tmp: Path):
    root = e2e_tmp / f"eof-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                  {"everything": POLICY}, approval_timeout_secs=30)
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    gateway.stop()


def call(rid: int, tool: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def lines_of(*messages: dict) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


class Answers(dict):
    """The relay's answers by id, and what it wrote to stderr (for a failure's message)."""

    stderr = ""


def relay(argv: list[str], stdin: bytes) -> Answers:
    """Run the relay with `stdin` then EOF; its answers by id. It must exit by itself, in time."""
    done = subprocess.run(argv, input=stdin, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"connect exited {done.returncode}: {done.stderr.decode()[-2000:]}"
    answers = Answers((a.get("id"), a) for a in map(json.loads, filter(bytes.strip, done.stdout.splitlines()))
                      if "id" in a)
    answers.stderr = done.stderr.decode(errors="replace")[-2000:]
    return answers


def text(answer: dict) -> str:
    assert "result" in answer, f"an answer, not an error: {answer}"
    return " ".join(c.get("text", "") for c in answer["result"]["content"])


SLOW = {"duration": 1, "steps": 2}


def test_one_request_then_eof_is_answered(eof_gw):
    m = uuid.uuid4().hex[:8]
    answers = relay(eof_gw.connect_argv("everything"), lines_of(call(7, "echo", {"message": m})))
    assert text(answers[7]) == f"Echo: {m}", answers


def test_a_session_and_a_slow_call_then_eof_are_answered(eof_gw):
    started = time.monotonic()
    answers = relay(eof_gw.connect_argv("everything"), lines_of(
        harness.INITIALIZE_BODY, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(2, "trigger-long-running-operation", SLOW)))
    assert "result" in answers[1], f"initialize answered: {answers}"
    assert "completed" in text(answers[2]).lower(), answers
    assert time.monotonic() - started >= 1.0, "the slow call's answer came after the EOF, and was waited for"


def test_a_last_line_without_newline_is_a_line(eof_gw):
    m = uuid.uuid4().hex[:8]
    answers = relay(eof_gw.connect_argv("everything"), json.dumps(call(3, "echo", {"message": m})).encode())
    assert text(answers[3]) == f"Echo: {m}", answers


def raw_socket(gw) -> socket.socket:
    info = json.loads((gw.data_dir / "gateway.json").read_text())
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT)
    sock.connect(info["socket"])
    sock.sendall(json.dumps({"portcullis": 1, "server": "everything", "token": gw.token}).encode() + b"\n")
    return sock


def read_lines(sock: socket.socket) -> list[dict]:
    """Everything the gateway writes until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_half_closed_socket_still_gets_a_held_answer_and_a_hang_up_withdraws(eof_gw):
    api = ControlApi.of(eof_gw)
    approver = api.subscribe()  # so the call is held, not refused for want of an approver
    try:
        approver.wait_attached()
        m = uuid.uuid4().hex[:8]
        # Half-close: the request is sent, the writing half shut; the answer still comes.
        sock = raw_socket(eof_gw)
        sock.sendall(lines_of(call(5, "get-sum", {"a": 1, "b": 2, "m": m})))
        sock.shutdown(socket.SHUT_WR)
        pending = api.wait_pending(lambda p: [a for a in p if m in json.dumps(a.get("arguments"))], 20.0,
                                   "the half-closed client's held call")
        api.approve(pending[0]["id"], "once")
        lines = read_lines(sock)
        sock.close()
        answer = next(x for x in lines if x.get("id") == 5)
        assert "3" in text(answer), f"the approved call's answer reached the half-closed client: {lines}"

        # Hang-up: the whole connection closed while held: withdrawn and recorded cancelled.
        m2 = uuid.uuid4().hex[:8]
        sock = raw_socket(eof_gw)
        sock.sendall(lines_of(call(6, "get-sum", {"a": 1, "b": 2, "m": m2})))
        api.wait_pending(lambda p: [a for a in p if m2 in json.dumps(a.get("arguments"))], 20.0,
                         "the second held call")
        sock.close()
        api.wait_pending(lambda p: not [a for a in p if m2 in json.dumps(a.get("arguments"))], 10.0,
                         "the hung-up client's call to be withdrawn")
        rows = eof_gw.audit_rows_for("everything", "get-sum", m2, settled=True)
        assert [r["decision"] for r in rows] == ["cancelled"], [r.raw for r in rows]
    finally:
        approver.close()
