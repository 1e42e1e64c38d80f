"""A hung upstream is bounded by the call timeout (`upstream.call_timeout_secs`, per server
`call_timeout_secs`), with the mcp 1.x client over both gateway routes.

peers/slow_server.py's `slow` tool sleeps far longer than the configured 2 s timeout. The gateway must
answer the call with a `[portcullis]` JSON-RPC error (like the crash path) soon after the timeout, send
the server `notifications/cancelled` (the peer logs "cancelled <marker>"), record the outcome `failure`,
and keep the session usable. A second server without its own setting gets the config-wide timeout, which
here is long: its quick calls are untouched.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
from mcp.shared.exceptions import McpError
from v1client import first_text, open_session, run, wait_file_contains

import harness

pytestmark = pytest.mark.gateway

ROUTES = ["http", "stdio"]
ALLOW_ALL = {"version": "1", "default": "allow"}
CALL_TIMEOUT = 2  # seconds, set on the "hung" server only
SLACK = 3.0  # seconds past the timeout the answer may take (a loaded 2-core CI box)


@pytest.fixture(scope="module")
def slow_log(e2e_tmp: Path) -> Path:
    return e2e_tmp / f"timeout-{uuid.uuid4().hex[:8]}-slow.log"


@pytest.fixture(scope="module")
def specs(slow_log: Path) -> dict[str, dict]:
    script = harness.PEERS_DIR / "slow_server.py"
    hung = harness.python_stdio(Path(sys.executable), script, {"SLOW_SERVER_LOG": str(slow_log)})
    hung["call_timeout_secs"] = CALL_TIMEOUT
    other = harness.python_stdio(Path(sys.executable), script, {"SLOW_SERVER_LOG": str(slow_log)})
    return {"hung": hung, "other": other}


@pytest.fixture(scope="module")
def gw(e2e_tmp: Path, specs):
    root = e2e_tmp / f"timeout-{uuid.uuid4().hex[:8]}"
    config = harness.write_config(root, specs, {"hung": ALLOW_ALL, "other": ALLOW_ALL},
                                  extra={"upstream": {"call_timeout_secs": 600}})
    gateway = harness.start_gateway(config, root / "data")
    yield gateway
    harness.log(f"portcullis serve (call timeout) exited with {gateway.stop()}")


@pytest.mark.parametrize("route", ROUTES)
def test_hung_call_is_failed_and_cancelled_after_the_call_timeout(gw, specs, slow_log, route):
    m = "m" + uuid.uuid4().hex[:12]

    async def body():
        async with open_session(route, "hung", specs["hung"], gw) as (s, _):
            started = time.monotonic()
            try:
                result = await s.call_tool("slow", {"marker": m, "seconds": 120})
                outcome = ("result", result)
            except McpError as e:
                outcome = ("error", e)
            waited = time.monotonic() - started
            await wait_file_contains(slow_log, f"cancelled {m}", 10)  # the server was told
            after = await s.call_tool("ping_tool", {"marker": m})  # the session still works
            return outcome, waited, after

    (kind, value), waited, after = run(body, timeout=60)
    assert kind == "error", f"a hung call must end in a JSON-RPC error, got {value!r}"
    message = value.error.message
    assert message.startswith("[portcullis]") and f"within {CALL_TIMEOUT} s" in message, message
    harness.log(f"[{route}] hung call answered after {waited:.2f} s (timeout {CALL_TIMEOUT} s)")
    assert CALL_TIMEOUT - 0.2 <= waited < CALL_TIMEOUT + SLACK, f"answered after {waited:.2f} s"
    assert f"finished {m}" not in slow_log.read_text()
    assert first_text(after) == f"pong {m}"

    (row,) = gw.audit_rows_for("hung", "slow", m, settled=True)
    assert (row["decision"], row["outcome"]) == ("allowed", "failure"), row.raw
    assert row["upstream_ms"] >= (CALL_TIMEOUT - 0.2) * 1000, row.raw
    assert any("call timeout" in line and "hung" in line for line in gw.proc.lines), "the log must say why"


def test_servers_without_their_own_timeout_use_the_config_wide_one(gw, specs, slow_log):
    """`other` inherits 600 s: a 3 s call (longer than `hung`'s 2 s) completes normally."""
    m = "m" + uuid.uuid4().hex[:12]

    async def body():
        async with open_session("http", "other", specs["other"], gw) as (s, _):
            return await s.call_tool("slow", {"marker": m, "seconds": CALL_TIMEOUT + 1})

    result = run(body, timeout=60)
    assert result.isError is not True and first_text(result) == f"slept {float(CALL_TIMEOUT + 1)}s for {m}"
    (row,) = gw.audit_rows_for("other", "slow", m, settled=True)
    assert row["outcome"] == "ok", row.raw
