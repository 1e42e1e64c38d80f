"""`portcullis connect` under Wine: the Windows build of the CLI runs the gate for the client and
starts the server itself, and asks the keeper (the Windows `portcullis serve`, also under Wine)
about held calls over the Windows named pipe. scripts/test-wine.sh builds them and sets
PORTCULLIS_BIN to a wrapper that runs `portcullis.exe` under Wine with PORTCULLIS_EXPERIMENTAL_PIPE=1.

The MCP client is the Linux rmcp client (tests/rmcp-peer), launching `portcullis.exe connect` as
an editor would; the server is the Windows build of the rmcp server, so every hop past the client
is Windows code: the gate, the policy, the audit, the child process, the pipe's client and server
ends. What Wine cannot show is the pipe's guard (it enforces no DACL and ignores
FILE_FLAG_FIRST_PIPE_INSTANCE), so SECURITY.md's gate stays until a Windows run shows that."""

from __future__ import annotations

import concurrent.futures
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

import harness
from approvals import ControlApi
from rmcp_client import RmcpClient, echoes_across_a_restart

pytestmark = pytest.mark.gateway

POLICY = {
    "version": "1",
    "default": "allow",
    "tools": {
        "echo": {"rules": [{"when": {"arguments.message": {"prefix": "held"}}, "action": "require_approval"}]},
        "drop_table": {"action": "deny", "reason": "tables are dropped by people"},
    },
}


def windows_server() -> dict[str, Any]:
    exe = os.environ.get("PORTCULLIS_WINE_RMCP_SERVER")
    if not exe:
        pytest.fail("PORTCULLIS_WINE_RMCP_SERVER is not set: run this module through scripts/test-wine.sh")
    return {"command": exe, "args": ["server"], "env": {}}


def own_gateway(root: Path) -> tuple[Path, Path]:
    return harness.write_config(root / "gateway", {"tables": windows_server()}, {"tables": POLICY}), root / "data"


# Wine's CreateProcess now and then fails with ERROR_INTERNAL_ERROR (1359) while the machine is
# loaded (the other end-to-end lanes run beside this one): the child never starts, so `connect`
# rightly refuses the handshake. Windows does not do this; the test tries again, a bounded number
# of times, only on that error, and says so in its log.
WINE_SPAWN_FLAKE = "(os error 1359)"


def wine_client(argv: list[str], lifecycle: str, env: dict[str, str] | None = None, attempts: int = 3) -> RmcpClient:
    for attempt in range(1, attempts + 1):
        try:
            return RmcpClient(argv, lifecycle, env=env)
        except harness.HarnessError as e:
            if WINE_SPAWN_FLAKE not in str(e) or attempt == attempts:
                raise
            harness.log(f"Wine could not start the server (attempt {attempt} of {attempts}): {e}")
    raise AssertionError("unreachable")


def text_of(answer: dict[str, Any]) -> str:
    assert "result" in answer, f"a result, not a protocol error: {answer}"
    return harness.denial_text(answer["result"].get("content", []))


@pytest.mark.parametrize("lifecycle", ["auto", "initialize"])
def test_connect_over_the_named_pipe(e2e_tmp, lifecycle):
    config, data = own_gateway(e2e_tmp / f"pipe-{lifecycle}-{uuid.uuid4().hex[:8]}")
    gw = harness.start_gateway(config, data)
    m = uuid.uuid4().hex[:12]
    try:
        named = json.loads((data / "gateway.json").read_text())
        assert named.get("socket", "").endswith("connect.sock"), f"the gateway bound its named pipe: {named}"
        with wine_client(gw.connect_argv("tables"), lifecycle) as client:
            era = {"auto": "modern", "initialize": "legacy"}[lifecycle]
            assert client.ready["era"] == era, client.ready
            assert {t["name"] for t in client.tools()} == {"echo", "drop_table"}
            assert text_of(client.call("echo", {"message": m})) == f"rmcp echo: {m}"
            refused = client.call("drop_table", {"name": m})
            assert refused["result"].get("isError") is True, refused
            assert text_of(refused).startswith(harness.DENIAL_PREFIX) and "dropped by people" in text_of(refused)
            if lifecycle == "initialize":
                # A held call crosses the named pipe to the keeper, and its approval comes back.
                h = uuid.uuid4().hex[:12]  # its own marker: the allowed echo's row is checked below
                api = ControlApi.of(gw)
                approver = api.subscribe()
                try:
                    approver.wait_attached()
                    held = concurrent.futures.ThreadPoolExecutor(1).submit(
                        client.call, "echo", {"message": f"held {h}"}, 90.0)
                    pending = api.wait_pending(lambda p: [a for a in p if h in json.dumps(a.get("arguments"))], 60.0,
                                               "the held call at the keeper, over the pipe")
                    api.approve(pending[0]["id"], "once")
                    assert text_of(held.result(timeout=60)) == f"rmcp echo: held {h}"
                finally:
                    approver.close()
        (row,) = gw.audit_rows_for("tables", "echo", m, settled=True)
        assert (row["client_name"], row["decision"], row["outcome"]) == ("portcullis-e2e-rmcp", "allowed", "ok"), row.raw
        (denied,) = gw.audit_rows_for("tables", "drop_table", m)
        assert denied["decision"] == "denied", denied.raw
    finally:
        gw.stop()


def test_a_session_under_wine_survives_a_keeper_restart(e2e_tmp):
    """Issue 31 point 3 on the Windows code: the keeper stops and a new one starts; `connect` runs
    the gate and the server itself, so the session goes on and no call fails."""
    config, data = own_gateway(e2e_tmp / f"pipe-restart-{uuid.uuid4().hex[:8]}")
    gateways = [harness.start_gateway(config, data)]
    m = uuid.uuid4().hex[:8]
    try:
        with wine_client(gateways[0].connect_argv("tables"), "initialize", env={"PORTCULLIS_LOG": "info"}) as client:
            assert text_of(client.call("echo", {"message": f"before {m}"})) == f"rmcp echo: before {m}"
            answers, figures = echoes_across_a_restart(client, gateways, config, data, m)
            texts = [text_of(a) for a in answers]
            assert texts == [f"rmcp echo: after {i} {m}" for i in range(3)], texts
        echoes = gateways[-1].audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{m}%",))
        assert len(echoes) == 4 and all(r["decision"] == "allowed" for r in echoes), [r.raw for r in echoes]
        harness.log(f"restart figures (named pipe, under Wine): {json.dumps(figures)}, calls failed: 0")
    finally:
        for gw in gateways:
            gw.stop()
