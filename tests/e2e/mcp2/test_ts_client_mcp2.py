"""The TypeScript SDK v2 client (@modelcontextprotocol/client, dual-era, versionNegotiation "auto"),
run as tests/e2e/ts/client.mjs, over Streamable HTTP with the bearer token."""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import pytest

import harness

CLIENT_JS = harness.TS_DIR / "client.mjs"


def ts_client(plan: dict[str, Any], expect_ok: bool = True) -> dict[str, Any]:
    r = subprocess.run([harness.node_bin(), str(CLIENT_JS), json.dumps(plan)], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    if not expect_ok:
        return {"returncode": r.returncode, "stderr": r.stderr}
    assert r.returncode == 0, f"client.mjs exited {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(r.stdout.strip().split("\n")[-1])


def stdio_plan(spec: dict[str, Any]) -> dict[str, Any]:
    return {"stdio": {"command": spec["command"], "args": spec["args"], "env": spec.get("env") or {}}}


def names(out: dict[str, Any]) -> set[str]:
    return {t["name"] for t in out["tools"]}


def text_of(result: dict[str, Any]) -> str:
    return harness.denial_text(result.get("content", []))


def strip_meta(result: dict[str, Any]) -> dict[str, Any]:
    d = {k: v for k, v in result.items() if k != "_meta"}
    d.setdefault("isError", False)
    return d


def test_ts_direct_baselines(world, everything_http):
    m = uuid.uuid4().hex[:12]
    legacy = ts_client({"url": everything_http.url, "calls": [{"name": "echo", "arguments": {"message": m}}]})
    assert legacy["era"] == "legacy", legacy["protocolVersion"]
    assert text_of(legacy["results"][0]) == f"Echo: {m}"
    modern = ts_client(dict(stdio_plan(world.spec("modern")),
                            calls=[{"name": "echo", "arguments": {"message": m}}]))
    assert (modern["era"], modern["protocolVersion"]) == ("modern", "2026-07-28")
    assert text_of(modern["results"][0]) == f"Echo: {m}"


@pytest.mark.gateway
def test_ts_client_legacy_server_through_gateway(world, gateway):
    m = uuid.uuid4().hex[:12]
    calls = [
        {"name": "echo", "arguments": {"message": m}},
        {"name": "gzip-file-as-resource", "arguments": {"name": f"{m}.gz", "data": "x"}},
        {"name": "get-env", "arguments": {"m": m}},
    ]
    direct = ts_client(dict(stdio_plan(world.spec("everything")), calls=calls[:1]))
    via = ts_client({"url": gateway.mcp_url("everything"), "token": gateway.token, "calls": calls})
    assert (via["era"], via["protocolVersion"]) == (direct["era"], direct["protocolVersion"]), \
        "the TS client must negotiate the same era/version through the gateway as directly"
    assert via["serverVersion"] == direct["serverVersion"]
    assert names(via) == names(direct) - {"get-env"}, "tools/list passes through minus hidden tools"
    echo, denied, hidden = via["results"]
    assert strip_meta(echo) == strip_meta(direct["results"][0])
    for result, needle in ((denied, "no downloads from agents"), (hidden, "hidden")):
        assert result.get("isError") is True, f"refused call must be isError: {result}"
        assert text_of(result).startswith("[portcullis]") and needle in text_of(result), result

    (row,) = gateway.audit_rows_for("everything", "echo", m, settled=True)
    assert row["client_name"] == "portcullis-e2e-ts" and row["decision"] == "allowed", row.raw


@pytest.mark.gateway
def test_ts_client_modern_server_through_gateway(world, gateway):
    m = uuid.uuid4().hex[:12]
    calls = [
        {"name": "echo", "arguments": {"message": m}},
        {"name": "delete_everything", "arguments": {"marker": m}},
    ]
    direct = ts_client(dict(stdio_plan(world.spec("modern")), calls=calls[:1]))
    via = ts_client({"url": gateway.mcp_url("modern"), "token": gateway.token, "calls": calls})
    assert (via["era"], via["protocolVersion"]) == ("modern", "2026-07-28"), \
        f"server/discover must pass through for the TS client: {via['era']} {via['protocolVersion']}"
    assert names(via) == names(direct) - {"internal_debug"}, "hidden internal_* is filtered"
    echo, denied = via["results"]
    assert strip_meta(echo) == strip_meta(direct["results"][0])
    assert denied.get("isError") is True and text_of(denied).startswith("[portcullis]"), denied
    assert "nothing gets deleted by agents" in text_of(denied)


@pytest.mark.gateway
def test_ts_client_without_token_is_refused(gateway):
    out = ts_client({"url": gateway.mcp_url("everything"), "calls": []}, expect_ok=False)
    assert out["returncode"] != 0, "connecting without the token must fail"
    assert "401" in out["stderr"] or "nauthorized" in out["stderr"], out["stderr"][-1000:]
