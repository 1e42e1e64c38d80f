"""An honest deadline (DESIGN §5, §7): "Extend" moves the gateway's own time-out, bounded by max_hold_secs.

`portcullis approvals extend ID --by DURATION` and `POST /control/approvals/{id}/extend {"by_secs": N}` move
a held call's deadline; the pending list shows the new `expires_at_ms`, and the call times out then and not
before. No extension takes a hold past `approval.max_hold_secs` from when it was held.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from approvals import ControlApi
import held_calls
from held_calls import Call, held, session

import harness

pytestmark = pytest.mark.gateway

MAX_HOLD = 8


@pytest.fixture(scope="module")
def dgw(e2e_tmp: Path):
    gateway = held_calls.start(e2e_tmp, "deadline",
                               extra={"approval": {"timeout_secs": 2, "max_hold_secs": MAX_HOLD}})
    yield gateway
    gateway.stop()


@pytest.fixture
def api(dgw):
    yield from held_calls.approver(dgw)


def listed(api: ControlApi, aid: str) -> dict | None:
    return next((p for p in api.pending() if p["id"] == aid), None)


def test_extend_moves_the_time_out(dgw, api):
    call = Call(dgw, session(dgw), f"extend-{uuid.uuid4().hex[:6]}")
    (aid,) = held(api, call)
    start = time.monotonic()  # no later than the hold began
    first = listed(api, aid)
    assert first["expires_at_ms"] - first["requested_at_ms"] == 2000, first
    out = subprocess.run([str(harness.portcullis_bin()), "approvals", "extend", aid, "--by", "3s",
                          "--data-dir", str(dgw.data_dir)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out
    assert f"extended {aid}" in out.stdout and "cut short" not in out.stdout, out.stdout
    now = listed(api, aid)
    assert now["expires_at_ms"] - now["requested_at_ms"] == 5000, now
    assert now["expires_at"] != first["expires_at"], now
    # Still pending at 3 s, past the original 2 s deadline (checked on every poll until then)…
    while time.monotonic() - start < 3.0:
        assert listed(api, aid) is not None, f"gone after {time.monotonic() - start:.1f} s"
        time.sleep(0.1)
    # …and timed out by about 5 s.
    harness.wait_until(lambda: listed(api, aid) is None, 4, "the extended call to time out")
    waited = time.monotonic() - start
    assert 4.0 <= waited < 7.0, waited
    result = call.result()
    assert result["isError"] is True and "no decision within 5 s" in result["content"][0]["text"], result
    (row,) = dgw.audit_rows_for("held", "echo", call.message, settled=True)
    assert row["decision"] == "timed_out", row.raw


def test_an_extension_past_max_hold_is_clamped(dgw, api):
    call = Call(dgw, session(dgw), f"clamp-{uuid.uuid4().hex[:6]}")
    (aid,) = held(api, call)
    reply = api.request("POST", f"/control/approvals/{aid}/extend", {"by_secs": 600})
    assert reply.status == 200, reply
    body = reply.json()
    assert body["clamped"] is True and body["max_hold_secs"] == MAX_HOLD, body
    now = listed(api, aid)
    assert now["expires_at_ms"] - now["requested_at_ms"] == MAX_HOLD * 1000, now
    assert body["expires_at_ms"] == now["expires_at_ms"], (body, now)
    again = api.request("POST", f"/control/approvals/{aid}/extend", {"by_secs": 5}).json()
    assert again["clamped"] is True and again["expires_at_ms"] == now["expires_at_ms"], again
    assert api.request("POST", f"/control/approvals/{aid}/extend", {"by_secs": 0}).status == 400
    assert api.request("POST", "/control/approvals/999999/extend", {"by_secs": 5}).status == 404
    out = subprocess.run([str(harness.portcullis_bin()), "approvals", "extend", aid, "--by", "1m",
                          "--data-dir", str(dgw.data_dir)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "cut short" in out.stdout, out
    assert api.deny(aid, "done").status == 200
    assert api.request("POST", f"/control/approvals/{aid}/extend", {"by_secs": 5}).status == 409
