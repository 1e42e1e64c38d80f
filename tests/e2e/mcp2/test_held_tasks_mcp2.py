"""2026-07-28 held calls: the tasks extension, and a re-issued call re-attaching to its approval.

Raw 2026-era HTTP to the gateway's Streamable HTTP entry (no SDK here drives the tasks extension yet:
Python mcp 2.3 and `@modelcontextprotocol/client` 2.4 know its types and its `Mcp-Name` routing, not
a polling client), in front of tests/e2e/peers/modern_server.py (MCPServer, mcp 2.3) whose `echo`
the policy holds.

- A call that declares `io.modelcontextprotocol/tasks` in its request capabilities is answered at once
  with `resultType: "task"`; `tasks/get` (with `Mcp-Name: <taskId>`) says it waits for a person; the
  decision completes it with the real result inline, or the refusal; `tasks/cancel` withdraws it.
- A call whose response stream breaks while held, re-issued under a new id (same caller, tool and
  arguments), joins the pending approval: one prompt, and the decision answers the re-issued request.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import pytest
from v2client import MODERN

import harness
import held_calls

pytestmark = pytest.mark.gateway

SERVER = "modern"
MAX_HOLD = 120
CLIENT_INFO = {"name": "portcullis-e2e-tasks", "version": "1.0.0"}


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path):
    root = e2e_tmp / f"held-tasks-mcp2-{uuid.uuid4().hex[:8]}"
    spec = harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "modern_server.py")
    policy = {"version": "1", "default": "allow", "tools": {"echo": {"action": "require_approval"}}}
    extra = {"approval": {"timeout_secs": 20, "max_hold_secs": MAX_HOLD}}
    config = harness.write_config(root, {SERVER: spec}, {SERVER: policy}, extra=extra)
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    gateway.stop()


@pytest.fixture
def api(gw):
    yield from held_calls.approver(gw)


def meta(tasks: bool) -> dict[str, Any]:
    caps: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if tasks else {}
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": caps,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO}


def headers(gw, method: str, name: str) -> dict[str, str]:
    return {**gw.auth_headers(), "MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": name}


def post(gw, rid: Any, method: str, params: dict[str, Any], name: str, timeout: float = 15) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    reply = harness.http_post(gw.mcp_url(SERVER), body, headers(gw, method, name), timeout=timeout)
    msgs = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid]
    assert msgs, f"no answer to {method} {rid}: {reply.status} {reply.text()[:500]}"
    return msgs[0]


def echo_params(message: str, tasks: bool) -> dict[str, Any]:
    return {"name": "echo", "arguments": {"message": message}, "_meta": meta(tasks)}


def task_get(gw, task_id: str) -> dict[str, Any]:
    got = post(gw, f"get-{uuid.uuid4().hex[:6]}", "tasks/get", {"taskId": task_id, "_meta": meta(True)}, task_id)
    assert "result" in got, got
    return got["result"]


def held_approval(api, message: str) -> dict[str, Any]:
    return api.wait_pending(lambda ps: next((p for p in ps if p["arguments"].get("message") == message), None),
                            15, f"the call {message!r} to be held")


def wait_terminal(gw, task_id: str) -> dict[str, Any]:
    return harness.wait_until(lambda: (t := task_get(gw, task_id))["status"] != "working" and t, 20,
                              f"task {task_id} to end", interval=0.2)


def test_a_2026_task_is_answered_at_once_and_completes_with_the_real_result(gw, api):
    message = f"t26-{uuid.uuid4().hex[:8]}"
    created = post(gw, 1, "tools/call", echo_params(message, tasks=True), "echo")
    task = created["result"]
    assert task["resultType"] == "task" and task["status"] == "working", created
    assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(task), task
    working = task_get(gw, task["taskId"])
    assert working["status"] == "working" and working["resultType"] == "complete", working
    assert "waiting for the user's approval" in working["statusMessage"], working
    approval = held_approval(api, message)
    assert approval["expires_at_ms"] - approval["requested_at_ms"] >= (MAX_HOLD - 2) * 1000, approval
    assert api.approve(approval["id"]).status == 200
    done = wait_terminal(gw, task["taskId"])
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == f"Echo: {message}", done
    (row,) = gw.audit_rows_for(SERVER, "echo", message, settled=True)
    assert row["decision"] == "approved" and row["outcome"] == "ok", row.raw


def test_a_denied_2026_task_completes_with_the_refusal(gw, api):
    message = f"t26-no-{uuid.uuid4().hex[:8]}"
    task = post(gw, 2, "tools/call", echo_params(message, tasks=True), "echo")["result"]
    assert api.deny(held_approval(api, message)["id"], "no thanks").status == 200
    done = wait_terminal(gw, task["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is True, done
    text = done["result"]["content"][0]["text"]
    assert text.startswith("[portcullis]") and "no thanks" in text, text


def test_tasks_cancel_withdraws_a_2026_held_call(gw, api):
    message = f"t26-cancel-{uuid.uuid4().hex[:8]}"
    task = post(gw, 3, "tools/call", echo_params(message, tasks=True), "echo")["result"]
    held_approval(api, message)
    ack = post(gw, 4, "tasks/cancel", {"taskId": task["taskId"], "_meta": meta(True)}, task["taskId"])
    assert ack.get("result") == {"resultType": "complete"}, ack
    harness.wait_until(lambda: not any(p["arguments"].get("message") == message for p in api.pending()),
                       10, "the approval to be withdrawn")
    assert task_get(gw, task["taskId"])["status"] == "cancelled"
    (row,) = gw.audit_rows_for(SERVER, "echo", message)
    assert (row["decision"], row["decided_by"]) == ("cancelled", "client"), row.raw


def test_a_mismatched_task_name_header_is_refused(gw):
    """`Mcp-Name` mirrors `params.taskId` for tasks/* (SEP-2663): a header naming another task is refused."""
    body = {"jsonrpc": "2.0", "id": 9, "method": "tasks/get", "params": {"taskId": "a", "_meta": meta(True)}}
    reply = harness.http_post(gw.mcp_url(SERVER), body, headers(gw, "tasks/get", "b"))
    assert reply.status == 400, reply.text()


def open_held_stream(gw, rid: Any, message: str) -> http.client.HTTPConnection:
    """POSTs a held 2026 call and reads only the response headers: the stream stays open until closed."""
    url = urllib.parse.urlsplit(gw.mcp_url(SERVER))
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=15)
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": echo_params(message, False)})
    conn.request("POST", url.path, body=body, headers={
        **headers(gw, "tools/call", "echo"), "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200 and "text/event-stream" in resp.getheader("Content-Type", ""), resp.status
    return conn


def test_a_reissued_held_call_joins_its_pending_approval(gw, api):
    message = f"reattach-{uuid.uuid4().hex[:8]}"
    first = open_held_stream(gw, "first", message)
    approval = held_approval(api, message)
    first.close()  # the stream breaks while the call is held
    out: dict[str, Any] = {}
    reissue = threading.Thread(target=lambda: out.update(
        answer=post(gw, "second", "tools/call", echo_params(message, False), "echo", timeout=30)), daemon=True)
    reissue.start()
    gw.proc.wait_for_line(r"re-issued held call joined its pending approval", 10)
    same = [p for p in api.pending() if p["arguments"].get("message") == message]
    assert [p["id"] for p in same] == [approval["id"]], f"one prompt, not two: {same}"
    decided = time.monotonic()
    assert api.approve(approval["id"]).status == 200
    reissue.join(20)
    harness.log(f"re-attached call answered {(time.monotonic() - decided) * 1000:.0f} ms after the decision")
    answer = out["answer"]
    assert answer["id"] == "second" and answer["result"]["content"][0]["text"] == f"Echo: {message}", answer
    (row,) = gw.audit_rows_for(SERVER, "echo", message, settled=True)
    assert row["decision"] == "approved" and row["outcome"] == "ok", row.raw


def test_a_broken_stream_not_reissued_is_withdrawn_after_the_grace(gw, api):
    message = f"gone-{uuid.uuid4().hex[:8]}"
    conn = open_held_stream(gw, "lone", message)
    approval = held_approval(api, message)
    conn.close()
    started = time.monotonic()
    harness.wait_until(lambda: all(p["id"] != approval["id"] for p in api.pending()), 10,
                       "the abandoned call's prompt to be withdrawn")
    waited = time.monotonic() - started
    assert 2.0 <= waited < 8.0, f"withdrawn after the 3 s re-attach grace, not {waited:.1f} s"
    (row,) = gw.audit_rows_for(SERVER, "echo", message)
    assert (row["decision"], row["decided_by"]) == ("cancelled", "client"), row.raw
