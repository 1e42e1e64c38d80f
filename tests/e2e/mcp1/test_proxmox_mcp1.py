"""The shipped Proxmox policy in front of a real Proxmox MCP server talking to a fake Proxmox VE.

  agent (mcp 1.x client) ──► portcullis serve ──► proxmox-mcp-server (PyPI, 286 tools, stdio)
                                                        └──HTTPS──► fakepve (PyPI) on 127.0.0.1

The gateway uses policies/proxmox-mcp-server.json exactly as shipped. A person is played through the
control API. What must hold:
  * every tool the server lists has its own reviewed entry in the shipped file;
  * read calls (get_vm_status, get_task_status) pass and return the fake cluster's answers;
  * a mutating call (start_vm) is held for approval: approved, it runs (the VM is then running);
    denied, it does not (the VM stays stopped);
  * destructive calls (delete_vm) are denied with the policy's reason and do not reach the server;
  * the raw API tool is allowed for GET and refused for DELETE by the entry's rules.

Needs tests/.peers/proxmox (scripts/test-peers.sh).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from v1client import assert_denial, first_text, open_session, run

import harness
from approvals import ControlApi

pytestmark = pytest.mark.gateway

SERVER = "proxmox-mcp-server"
SHIPPED_POLICY = harness.REPO / "policies" / f"{SERVER}.json"
PROXMOX_VENV = harness.REPO / "tests" / ".peers" / "proxmox"
NODE = "pve1"
RUNNING_VM, STOPPED_VM, DENIED_VM, DOOMED_VM = 100, 101, 102, 103
GUESTS = {
    "guests": [
        {"vmid": RUNNING_VM, "name": "web1", "status": "running"},
        {"vmid": STOPPED_VM, "name": "db1", "status": "stopped"},
        {"vmid": DENIED_VM, "name": "cache1", "status": "stopped"},
        {"vmid": DOOMED_VM, "name": "old1", "status": "stopped"},
    ]
}
PVE_PASSWORD = "e2e-secret"


@pytest.fixture(scope="module")
def fakepve(e2e_tmp: Path):
    """fakepve on 127.0.0.1, a port the system picks, tasks finishing at once (--time-scale 0)."""
    fakepve_bin = harness.require_file(PROXMOX_VENV / "bin" / "fakepve")
    guests = e2e_tmp / "proxmox-guests.json"
    guests.write_text(json.dumps(GUESTS))
    proc = harness.Proc("fakepve", [fakepve_bin, guests, "--host", "127.0.0.1", "--port", "0", "--time-scale", "0",
                                    "--password", PVE_PASSWORD], capture_stdout=True)
    try:
        m = proc.wait_for_line(r"fakepve listening on https://127\.0\.0\.1:(\d+)", harness.READY_TIMEOUT)
    except BaseException:
        proc.stop()
        raise
    yield int(m.group(1))
    proc.stop()


@pytest.fixture(scope="module")
def spec(fakepve: int) -> dict[str, Any]:
    """The MCP server as a user configures it: password login, certificate not verified (self-signed)."""
    return {
        "command": str(harness.require_file(PROXMOX_VENV / "bin" / "proxmox-mcp-server")),
        "args": [],
        "env": {
            "PROXMOX_HOST": "127.0.0.1",
            "PROXMOX_PORT": str(fakepve),
            "PROXMOX_USER": "root@pam",
            "PROXMOX_PASSWORD": PVE_PASSWORD,
            "PROXMOX_VERIFY_SSL": "0",
        },
    }


@pytest.fixture(scope="module")
def pgw(e2e_tmp: Path, spec):
    root = e2e_tmp / "proxmox"
    config = harness.write_config(root / "gateway", {SERVER: spec}, policies={}, approval_timeout_secs=30)
    # The shipped file, byte for byte.
    shutil.copyfile(SHIPPED_POLICY, config.parent / "policies" / f"{SERVER}.json")
    gw = harness.start_gateway(config, root / "data")
    yield gw
    harness.log(f"portcullis serve (proxmox) exited with {gw.stop()}")


@pytest.fixture
def api(pgw) -> ControlApi:
    return ControlApi.of(pgw)


@pytest.fixture
def events(api: ControlApi):
    stream = api.subscribe()
    yield stream
    stream.close()


def shipped_entries() -> dict[str, Any]:
    return json.loads(SHIPPED_POLICY.read_text())["tools"]


def vm_status(text: str) -> dict[str, Any]:
    value = json.loads(text)
    assert isinstance(value, dict), f"get_vm_status must answer a JSON object: {text[:300]}"
    return value


async def in_thread(fn, *args):
    return await anyio.to_thread.run_sync(lambda: fn(*args))


def test_every_listed_tool_has_a_reviewed_entry(pgw, spec):
    async def body():
        async with open_session("http", SERVER, spec, pgw) as (s, _):
            return await s.list_tools()

    listed = {t.name for t in run(body).tools}
    entries = shipped_entries()
    assert len(listed) == 286, f"proxmox-mcp-server 1.4.4 lists 286 tools, got {len(listed)}"
    assert listed == set(entries), (
        f"the shipped policy must name every tool exactly: missing {sorted(listed - set(entries))}, "
        f"stale {sorted(set(entries) - listed)}"
    )
    for name, entry in entries.items():
        assert entry.get("class") and entry.get("risk"), f"{name}: class and risk are recorded beside each entry"


def test_read_calls_pass_and_return_the_fake_clusters_answers(pgw, spec):
    async def body():
        async with open_session("http", SERVER, spec, pgw) as (s, _):
            running = await s.call_tool("get_vm_status", {"node": NODE, "vmid": RUNNING_VM})
            stopped = await s.call_tool("get_vm_status", {"node": NODE, "vmid": STOPPED_VM})
            nodes = await s.call_tool("list_nodes", {})
            raw_get = await s.call_tool("proxmox_api_raw", {"method": "get", "path": f"/nodes/{NODE}/qemu"})
        return running, stopped, nodes, raw_get

    running, stopped, nodes, raw_get = run(body)
    for result in (running, stopped, nodes, raw_get):
        assert not result.isError, f"an allowed read must reach the server: {first_text(result)[:500]}"
    assert vm_status(first_text(running))["status"] == "running"
    assert vm_status(first_text(running))["name"] == "web1"
    assert vm_status(first_text(stopped))["status"] == "stopped"
    assert NODE in first_text(nodes)
    assert {vm["vmid"] for vm in json.loads(first_text(raw_get))} >= {RUNNING_VM, STOPPED_VM}, \
        "a GET through the raw API tool is allowed by the entry's first rule"

    rows = pgw.audit_cli("--server", SERVER, "--tool", "get_vm_status", "--limit", "50")
    assert rows and all(r["decision"] == "allowed" and r["rule"] == "tools.get_vm_status" for r in rows), \
        [r.raw for r in rows]


def test_start_vm_is_held_then_runs_when_approved(pgw, spec, api, events):
    args = {"node": NODE, "vmid": STOPPED_VM}

    async def body():
        async with open_session("http", SERVER, spec, pgw) as (s, _):
            async with anyio.create_task_group() as tg:
                box: dict[str, Any] = {}

                async def call():
                    box["result"] = await s.call_tool("start_vm", args)

                tg.start_soon(call)
                ev = await in_thread(lambda: events.wait_requested(None, SERVER, "start_vm"))
                assert "result" not in box, "a held call must not be answered before the decision"
                pending = await in_thread(api.pending)
                reply = await in_thread(api.approve, ev["approval"]["id"], "once")
            started = box["result"]
            upid = first_text(started).strip().strip('"')
            task = await s.call_tool("get_task_status", {"node": NODE, "upid": upid})
            after = await s.call_tool("get_vm_status", args)
        return ev, pending, reply, started, upid, task, after

    ev, pending, reply, started, upid, task, after = run(body, timeout=90)
    approval = ev["approval"]
    assert approval["server"] == SERVER and approval["tool"] == "start_vm", approval
    assert approval["arguments"] == args, approval
    assert approval["rule"] == "tools.start_vm", approval
    assert any(p["id"] == approval["id"] and p["tool"] == "start_vm" for p in pending), \
        f"the held call must be listed on the control API: {pending}"
    assert reply.status == 200, reply
    assert not started.isError, first_text(started)
    assert upid.startswith("UPID:"), f"start_vm answers the fake cluster's task id: {first_text(started)!r}"
    status = json.loads(first_text(task))
    assert status["upid"] == upid and status["status"] == "stopped" and status["exitstatus"] == "OK", status
    assert vm_status(first_text(after))["status"] == "running", "the approved start must have run"


def test_start_vm_denied_by_the_person_does_not_run(pgw, spec, api, events):
    args = {"node": NODE, "vmid": DENIED_VM}

    async def body():
        async with open_session("http", SERVER, spec, pgw) as (s, _):
            async with anyio.create_task_group() as tg:
                box: dict[str, Any] = {}

                async def call():
                    box["result"] = await s.call_tool("start_vm", args)

                tg.start_soon(call)
                ev = await in_thread(lambda: events.wait_for(
                    lambda d: d.get("type") == "ApprovalRequested"
                    and d["approval"]["tool"] == "start_vm" and d["approval"]["arguments"] == args,
                    what="ApprovalRequested for start_vm of the denied VM"))
                reply = await in_thread(api.deny, ev["approval"]["id"], "not during business hours")
            after = await s.call_tool("get_vm_status", args)
        return reply, box["result"], after

    reply, refused, after = run(body, timeout=90)
    assert reply.status == 200, reply
    assert_denial(refused, "not during business hours")
    assert vm_status(first_text(after))["status"] == "stopped", "a denied start must not reach the cluster"


def test_delete_vm_is_denied_with_the_policys_reason(pgw, spec):
    reason = shipped_entries()["delete_vm"]["reason"]

    async def body():
        async with open_session("http", SERVER, spec, pgw) as (s, _):
            refused = await s.call_tool("delete_vm", {"node": NODE, "vmid": DOOMED_VM})
            raw_delete = await s.call_tool("proxmox_api_raw",
                                           {"method": "DELETE", "path": f"/nodes/{NODE}/qemu/{DOOMED_VM}"})
            after = await s.call_tool("get_vm_status", {"node": NODE, "vmid": DOOMED_VM})
        return refused, raw_delete, after

    refused, raw_delete, after = run(body)
    assert_denial(refused, reason)
    assert_denial(raw_delete, reason)
    assert vm_status(first_text(after))["name"] == "old1", "the VM must still exist"
    rows = pgw.audit_cli("--server", SERVER, "--tool", "delete_vm", "--limit", "10")
    assert rows and rows[0]["decision"] == "denied" and rows[0]["rule"] == "tools.delete_vm", [r.raw for r in rows]
    assert rows[0]["decided_by"] == "policy" and rows[0]["outcome"] is None, "a denied call is never forwarded"
    raw_rows = pgw.audit_cli("--server", SERVER, "--tool", "proxmox_api_raw", "--decision", "denied", "--limit", "10")
    assert raw_rows and raw_rows[0]["rule"] == "tools.proxmox_api_raw.rules[1]", [r.raw for r in raw_rows]
