"""rmcp, the official Rust MCP SDK (3.x, dual-era), on both sides of the gateway: a client that
launches `portcullis connect` as Claude Desktop or Cursor would, and a server behind the gateway.
Nothing here is named by the other suites' clients (Python mcp, TS SDK), so it is the "other MCP
stack" check: the same era, tools and answers through the gateway as directly, the policy's
refusals as `isError` results, and a session that outlives a gateway restart.

The peer is tests/rmcp-peer (built by the workspace's `cargo build`); rmcp_client.py drives it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

import harness
from rmcp_client import RmcpClient, argv_of, echoes_across_a_restart, server_stdio

pytestmark = pytest.mark.gateway

TABLES_POLICY = {
    "version": "1",
    "default": "allow",
    "tools": {"echo": {}, "drop_table": {"action": "deny", "reason": "tables are dropped by people"}},
}


def text_of(answer: dict[str, Any]) -> str:
    assert "result" in answer, f"a result, not a protocol error: {answer}"
    return harness.denial_text(answer["result"].get("content", []))


def without_meta(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, answer
    return {k: v for k, v in answer["result"].items() if k != "_meta"}


def refused(answer: dict[str, Any], needle: str) -> None:
    assert answer.get("result", {}).get("isError") is True, f"a refusal is an isError result: {answer}"
    text = text_of(answer)
    assert text.startswith(harness.DENIAL_PREFIX) and needle in text, text


def names(tools: list[dict[str, Any]]) -> set[str]:
    return {t["name"] for t in tools}


def baseline(argv: list[str], message: str, lifecycle: str = "auto") -> tuple[dict[str, Any], list[Any], Any]:
    """The server reached directly: the negotiated session, its tools, and an `echo` of `message`."""
    with RmcpClient(argv, lifecycle) as direct:
        return direct.ready, direct.tools(), direct.call("echo", {"message": message})


def test_rmcp_client_through_connect_to_a_legacy_server(world, gateway):
    m = uuid.uuid4().hex[:12]
    direct_ready, direct_tools, direct_echo = baseline(argv_of(world.spec("everything")), m)
    with RmcpClient(gateway.connect_argv("everything")) as via:
        assert via.ready == direct_ready, "the same era, version and server through connect as directly"
        assert via.ready["era"] == "legacy", via.ready
        assert names(via.tools()) == names(direct_tools) - {"get-env"}, "tools/list minus the hidden tool"
        assert without_meta(via.call("echo", {"message": m})) == without_meta(direct_echo)
        refused(via.call("gzip-file-as-resource", {"name": f"{m}.gz", "data": "x"}), "no downloads from agents")
        refused(via.call("get-env", {"m": m}), "hidden")
    (row,) = gateway.audit_rows_for("everything", "echo", m, settled=True)
    assert (row["client_name"], row["decision"], row["outcome"]) == ("portcullis-e2e-rmcp", "allowed", "ok"), row.raw
    (denied,) = gateway.audit_rows_for("everything", "gzip-file-as-resource", m)
    assert denied["decision"] == "denied", denied.raw


def test_rmcp_client_through_connect_to_a_modern_server(world, gateway):
    m = uuid.uuid4().hex[:12]
    direct_ready, direct_tools, direct_echo = baseline(argv_of(world.spec("modern")), m)
    with RmcpClient(gateway.connect_argv("modern")) as via:
        assert (via.ready["era"], via.ready["protocolVersion"]) == ("modern", "2026-07-28"), \
            f"rmcp's server/discover probe passes connect untouched: {via.ready}"
        assert via.ready == direct_ready
        assert names(via.tools()) == names(direct_tools) - {"internal_debug"}
        assert without_meta(via.call("echo", {"message": m})) == without_meta(direct_echo)
        refused(via.call("delete_everything", {"marker": m}), "nothing gets deleted by agents")
    (row,) = gateway.audit_rows_for("modern", "echo", m, settled=True)
    assert (row["client_name"], row["decision"]) == ("portcullis-e2e-rmcp", "allowed"), row.raw


@pytest.mark.parametrize("lifecycle,era", [("auto", "modern"), ("initialize", "legacy")])
def test_an_rmcp_server_behind_the_gateway(e2e_tmp, lifecycle, era):
    """rmcp's server speaks both eras: each reaches it through the gateway, annotations intact."""
    root = e2e_tmp / f"rmcp-server-{lifecycle}-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root / "gateway", {"tables": server_stdio()}, {"tables": TABLES_POLICY})
    gw = harness.start_gateway(config, root / "data")
    m = uuid.uuid4().hex[:12]
    try:
        direct_ready, direct_tools, direct_echo = baseline(argv_of(server_stdio()), m, lifecycle)
        assert direct_ready["era"] == era, direct_ready
        with RmcpClient(gw.connect_argv("tables"), lifecycle) as via:
            assert via.ready == direct_ready, f"{via.ready} != {direct_ready}"
            assert via.tools() == direct_tools, "names, schemas and annotations pass the gateway unchanged"
            assert without_meta(via.call("echo", {"message": m})) == without_meta(direct_echo)
            refused(via.call("drop_table", {"table": m}), "tables are dropped by people")
        (row,) = gw.audit_rows_for("tables", "echo", m, settled=True)
        assert (row["decision"], row["outcome"]) == ("allowed", "ok"), row.raw
        (denied,) = gw.audit_rows_for("tables", "drop_table", m)
        assert denied["decision"] == "denied", denied.raw
    finally:
        gw.stop()


def test_an_rmcp_client_survives_a_gateway_restart(e2e_tmp):
    """Issue 14 point 3 for a fourth client: the session (legacy: connect replays its initialize)
    carries on across a gateway stop and a new gateway on the same data dir."""
    root = e2e_tmp / f"rmcp-restart-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root / "gateway", {"everything": harness.everything_stdio()},
                                  {"everything": {"version": "1", "default": "allow", "tools": {"echo": {}}}})
    data: Path = root / "data"
    gateways = [harness.start_gateway(config, data)]
    m = uuid.uuid4().hex[:8]
    try:
        with RmcpClient(gateways[0].connect_argv("everything")) as client:
            assert text_of(client.call("echo", {"message": f"before {m}"})) == f"Echo: before {m}"
            answers, figures = echoes_across_a_restart(client, gateways, config, data, m)
            texts = [text_of(a) for a in answers]
            assert texts == [f"Echo: after {i} {m}" for i in range(3)], texts
        echoes = gateways[-1].audit_db("tool = 'echo' AND arguments LIKE ?", (f"%{m}%",))
        assert len(echoes) == 4 and all(r["decision"] == "allowed" for r in echoes), [r.raw for r in echoes]
        harness.log(f"restart figures (rmcp): {json.dumps(figures)}, calls failed: 0")
    finally:
        for gw in gateways:
            gw.stop()
