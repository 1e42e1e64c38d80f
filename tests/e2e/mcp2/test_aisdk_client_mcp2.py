"""The Vercel AI SDK's MCP client (@ai-sdk/mcp 2.x), run as tests/e2e/ts/aisdk_client.mjs: a client
stack none of the other suites name, with its own dual-era implementation (no @modelcontextprotocol
package underneath) and strict schemas for every message it reads. Over stdio it sends
`server/discover` first and falls back to `initialize` if no answer comes within a second, so
through `connect` the gateway must answer that probe the way the server would, for either era.

Launched as an editor would launch it (`portcullis connect`), and over Streamable HTTP with the
token: the same era, version, server and tools as directly, the echo's result unchanged, the
policy's refusals as `[portcullis]` isError results, and the client's name in the audit."""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import pytest

import harness

CLIENT_JS = harness.TS_DIR / "aisdk_client.mjs"

pytestmark = pytest.mark.gateway


def aisdk_client(plan: dict[str, Any]) -> dict[str, Any]:
    r = subprocess.run([harness.node_bin(), str(CLIENT_JS), json.dumps(plan)], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"aisdk_client.mjs exited {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(r.stdout.strip().split("\n")[-1])


def launched(argv: list[str], calls: list[dict[str, Any]], wait_for_discover: bool = False) -> dict[str, Any]:
    """The client launching `argv` over stdio, as an editor launches `portcullis connect`."""
    stdio = {"command": argv[0], "args": argv[1:]}
    return aisdk_client({"stdio": stdio, "calls": calls, "waitForDiscover": wait_for_discover})


def direct(spec: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The client launching the server itself: the baseline. The Python test servers take more than
    the SDK's 1 s to answer the first `server/discover`, so the baseline waits for that answer."""
    stdio = {"command": spec["command"], "args": spec["args"], "env": spec.get("env") or {}}
    return aisdk_client({"stdio": stdio, "calls": calls, "waitForDiscover": True})


def names(out: dict[str, Any]) -> set[str]:
    return {t["name"] for t in out["tools"]}


def text_of(result: dict[str, Any]) -> str:
    assert "thrown" not in result, f"a result, not a thrown error: {result}"
    return harness.denial_text(result.get("content", []))


def without_meta(result: dict[str, Any], *also: str) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("_meta", *also)}


def refused(result: dict[str, Any], needle: str) -> None:
    assert result.get("isError") is True, f"a refusal is an isError result: {result}"
    assert text_of(result).startswith(harness.DENIAL_PREFIX) and needle in text_of(result), result


def same_session(via: dict[str, Any], direct: dict[str, Any]) -> None:
    for key in ("era", "protocolVersion", "serverName"):
        assert via[key] == direct[key], f"{key}: {via[key]!r} through the gateway, {direct[key]!r} directly"


def legacy_calls(m: str) -> list[dict[str, Any]]:
    return [
        {"name": "echo", "arguments": {"message": m}},
        {"name": "gzip-file-as-resource", "arguments": {"name": f"{m}.gz", "data": "x"}},
        {"name": "get-env", "arguments": {"m": m}},
    ]


def check_legacy(via: dict[str, Any], direct: dict[str, Any]) -> None:
    same_session(via, direct)
    assert via["era"] == "legacy", via
    assert names(via) == names(direct) - {"get-env"}, "tools/list passes through minus the hidden tool"
    echo, denied, hidden = via["results"]
    assert without_meta(echo) == without_meta(direct["results"][0])
    refused(denied, "no downloads from agents")
    refused(hidden, "hidden")


def modern_calls(m: str) -> list[dict[str, Any]]:
    return [{"name": "echo", "arguments": {"message": m}}, {"name": "delete_everything", "arguments": {"marker": m}}]


def check_modern_calls(via: dict[str, Any], direct: dict[str, Any]) -> None:
    assert names(via) == names(direct) - {"internal_debug"}, "the hidden internal_* tool is filtered"
    echo, denied = via["results"]
    # `resultType` is a 2026-07-28 field: a bridged legacy session's result has none.
    assert without_meta(echo, "resultType") == without_meta(direct["results"][0], "resultType")
    refused(denied, "nothing gets deleted by agents")


def check_modern(via: dict[str, Any], direct: dict[str, Any]) -> None:
    same_session(via, direct)
    assert (via["era"], via["protocolVersion"]) == ("modern", "2026-07-28"), via
    check_modern_calls(via, direct)


def test_aisdk_client_through_connect_to_a_legacy_server(world, gateway):
    m = uuid.uuid4().hex[:12]
    baseline = direct(world.spec("everything"), legacy_calls(m)[:1])
    check_legacy(launched(gateway.connect_argv("everything"), legacy_calls(m)), baseline)
    (row,) = gateway.audit_rows_for("everything", "echo", m, settled=True)
    assert (row["client_name"], row["decision"], row["outcome"]) == ("portcullis-e2e-aisdk", "allowed", "ok"), row.raw


def test_aisdk_client_through_connect_to_a_modern_server(world, gateway):
    """Every `connect` starts its own server. This Python server may take longer than the SDK's 1 s
    wait for `server/discover` to come up, so with the SDK's defaults the probe may time out and the
    client fall back to `initialize`: directly, this modern-only server refuses that and the client
    fails; through the gateway the legacy session is bridged and works. A client that waits for the
    probe's answer (as the baseline does) gets the modern session it gets directly."""
    m = uuid.uuid4().hex[:12]
    baseline = direct(world.spec("modern"), modern_calls(m)[:1])
    first = launched(gateway.connect_argv("modern"), modern_calls(m))
    assert first["era"] in ("modern", "legacy") and first["serverName"] == baseline["serverName"], first
    check_modern_calls(first, baseline)
    check_modern(launched(gateway.connect_argv("modern"), modern_calls(m), wait_for_discover=True), baseline)
    rows = gateway.audit_rows_for("modern", "delete_everything", m)
    assert [(r["client_name"], r["decision"]) for r in rows] == [("portcullis-e2e-aisdk", "denied")] * 2, \
        [r.raw for r in rows]


def test_aisdk_client_over_http_in_both_eras(world, gateway):
    m = uuid.uuid4().hex[:12]
    over_http = {"token": gateway.token}
    check_legacy(aisdk_client({"url": gateway.mcp_url("everything"), **over_http, "calls": legacy_calls(m)}),
                 direct(world.spec("everything"), legacy_calls(m)[:1]))
    check_modern(aisdk_client({"url": gateway.mcp_url("modern"), **over_http, "calls": modern_calls(m)}),
                 direct(world.spec("modern"), modern_calls(m)[:1]))
