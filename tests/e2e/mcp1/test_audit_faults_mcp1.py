"""The audit database under real faults, and the gateway killed under load.

Faults (issue 6, point 3): while the audit cannot be written — locked by another process, on a full
filesystem — every call is refused with a `[portcullis]` message and nothing is forwarded; the serve
log says so once when it starts and once when it clears; `GET /control/status` and
`portcullis approvals list` show it; and once the fault is removed the next call is audited and
forwarded, by the same gateway process (no restart).

Crash safety (issue 6, point 2): `recording_server.py` fsyncs every marker it receives before it
answers; the gateway is SIGKILLed while several clients call it back to back; every marker the
server saw must have its `allowed` row in the audit, and the database must pass `integrity_check`.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
import uuid
import urllib.request
from pathlib import Path

import pytest

import harness

pytestmark = pytest.mark.gateway

RECORDING_SERVER = harness.PEERS_DIR / "recording_server.py"
FAILING_LINE = "audit database cannot be written"
RECOVERED_LINE = "audit database writable again"
# A first refusal waits out SQLite's 5 s busy timeout; later ones only 0.2 s.
CALL_TIMEOUT = 30


def start(root: Path, data_dir: Path | None = None) -> harness.Gateway:
    policy = {"version": "1", "default": "allow", "tools": {"echo": {}}}
    config = harness.write_config(root, {"everything": harness.everything_stdio()}, {"everything": policy})
    return harness.start_gateway(config, data_dir or root / "data")


def status(gw: harness.Gateway) -> dict:
    req = urllib.request.Request(f"{gw.url}/control/status", headers=gw.auth_headers())
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["audit"]


def approvals_list_stderr(gw: harness.Gateway) -> str:
    r = subprocess.run([str(harness.portcullis_bin()), "approvals", "list", "--data-dir", str(gw.data_dir)],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    return r.stderr


def lines_with(gw: harness.Gateway, needle: str) -> list[str]:
    return [line for line in gw.proc.output().splitlines() if needle in line]


class Session:
    """One legacy MCP session over raw HTTP, kept open across the fault (one upstream child)."""

    def __init__(self, gw: harness.Gateway, server: str = "everything") -> None:
        self.url = gw.mcp_url(server)
        # Generous: a stdio upstream starts with the session, on a machine that may be busy.
        init = harness.http_post(self.url, harness.INITIALIZE_BODY, headers=gw.auth_headers(), timeout=60)
        assert init.status == 200, init.text()
        self.headers = dict(gw.auth_headers())
        self.headers["Mcp-Session-Id"] = init.headers.get("mcp-session-id") or init.headers["Mcp-Session-Id"]
        harness.http_post(self.url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                          headers=self.headers)
        self.next_id = 1

    def call(self, tool: str, arguments: dict, timeout: float = CALL_TIMEOUT) -> dict:
        """The `result` of a tools/call; raises OSError when the gateway is gone."""
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}
        reply = harness.http_post(self.url, body, headers=self.headers, timeout=timeout)
        assert reply.status == 200, reply.text()
        (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == self.next_id]
        return msg["result"]

    def echo(self, m: str) -> dict:
        return self.call("echo", {"message": m})


def text_of(result: dict) -> str:
    return "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def assert_refused(result: dict, condition_words: str) -> str:
    text = text_of(result)
    assert result.get("isError") is True, text
    assert text.startswith("[portcullis] call refused: the audit log cannot be written"), text
    assert condition_words in text, text
    assert "nothing is forwarded until it can" in text, text
    return text


def check_fault_shown(gw: harness.Gateway, condition: str) -> None:
    harness.wait_until(lambda: lines_with(gw, FAILING_LINE), 10, "the serve log to report the audit fault")
    st = status(gw)
    assert st["ok"] is False and st["condition"] == condition, st
    warning = approvals_list_stderr(gw)
    assert "cannot write its audit log" in warning and "refused" in warning, warning


def check_recovered(gw: harness.Gateway, session: Session, m: str, probed: bool = True) -> None:
    if probed:
        # The writer probes every second: the log line and the status clear without a call.
        harness.wait_until(lambda: lines_with(gw, RECOVERED_LINE), 15, "the serve log to report the recovery")
    result = session.echo(f"after {m}")
    assert text_of(result) == f"Echo: after {m}", "the first call after the fix is forwarded"
    harness.wait_until(lambda: lines_with(gw, RECOVERED_LINE), 15, "the serve log to report the recovery")
    assert status(gw) == {"ok": True}
    assert approvals_list_stderr(gw) == ""
    (row,) = gw.audit_rows_for("everything", "echo", f"after {m}", settled=True)
    assert row["decision"] == "allowed" and row["outcome"] == "ok", row.raw
    for line in lines_with(gw, FAILING_LINE) + lines_with(gw, RECOVERED_LINE):
        harness.log(f"serve log: {line.strip()}")
    assert len(lines_with(gw, FAILING_LINE)) == 1 and len(lines_with(gw, RECOVERED_LINE)) == 1, \
        "one line when the fault starts and one when it clears, not one per call:\n" + gw.proc.output()[-3000:]


def test_audit_locked_by_another_process_fails_closed_and_recovers_without_restart(e2e_tmp):
    root = e2e_tmp / f"audit-locked-{uuid.uuid4().hex[:8]}"
    gw = start(root)
    try:
        session = Session(gw)
        m = uuid.uuid4().hex[:12]
        assert text_of(session.echo(f"before {m}")) == f"Echo: before {m}"

        # This test process is "another process": it takes the database's write lock and keeps it.
        locker = sqlite3.connect(gw.data_dir / "audit.db", timeout=10, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            assert_refused(session.echo(f"locked-1 {m}"), "locked by another process")
            check_fault_shown(gw, "locked")
            t0 = time.monotonic()
            assert_refused(session.echo(f"locked-2 {m}"), "locked by another process")
            harness.log(f"refusal while locked (after the first): {(time.monotonic() - t0) * 1000:.0f} ms")
        finally:
            locker.execute("ROLLBACK")
            locker.close()

        check_recovered(gw, session, m)
        assert not gw.audit_db("arguments LIKE ?", [f"%locked-%{m}%"]), "a refused call leaves no row"
        assert gw.proc.alive(), "the same gateway process recovered"
    finally:
        gw.stop()


@pytest.fixture
def small_fs(e2e_tmp):
    """A 6 MiB tmpfs to put the data dir on; skipped where mount is not allowed (not root)."""
    at = e2e_tmp / f"smallfs-{uuid.uuid4().hex[:8]}"
    at.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", str(at)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    yield at
    subprocess.run(["umount", "-l", str(at)], check=False)


def fill(path: Path) -> None:
    """Write until the filesystem says ENOSPC."""
    chunk = b"\x5a" * 65536
    with open(path, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                if e.errno == 28:
                    return
                raise


def test_audit_on_a_full_filesystem_fails_closed_and_recovers_without_restart(e2e_tmp, small_fs):
    root = e2e_tmp / f"audit-full-{uuid.uuid4().hex[:8]}"
    gw = start(root, data_dir=small_fs / "data")
    try:
        session = Session(gw)
        m = uuid.uuid4().hex[:12]
        assert text_of(session.echo(f"before {m}")) == f"Echo: before {m}"
        filler = small_fs / "filler"
        fill(filler)

        # Writes that fit in log space SQLite already holds still succeed (and are audited); the
        # first that needs more room is refused. Bounded: the log is far smaller than this.
        refused = None
        for i in range(500):
            result = session.echo(f"full-{i} {m}")
            if result.get("isError"):
                refused = result
                break
            assert text_of(result) == f"Echo: full-{i} {m}"
        assert refused is not None, "the full filesystem never refused a call"
        assert_refused(refused, "disk full")
        harness.log(f"calls audited on the full filesystem before the first refusal: {i}")
        check_fault_shown(gw, "full")
        # Refused again — unless a checkpoint freed log space meanwhile and SQLite reused it: then
        # the call fits, and like every forwarded call it has its committed row (fail closed).
        again = session.echo(f"full-again {m}")
        if again.get("isError"):
            assert_refused(again, "disk full")
        else:
            assert text_of(again) == f"Echo: full-again {m}", again
            (row,) = gw.audit_rows_for("everything", "echo", f"full-again {m}")
            assert row["decision"] == "allowed", row.raw
        again_rows = 0 if again.get("isError") else 1

        filler.unlink()
        # A full disk is not probed (a one-page probe may fit where a record does not): the next
        # call is the test, and it must go through.
        check_recovered(gw, session, m, probed=False)
        forwarded = [r for r in gw.audit_db("arguments LIKE ?", [f"%full-%{m}%"])]
        assert len(forwarded) == i + again_rows and all(r["decision"] == "allowed" for r in forwarded), \
            "exactly the forwarded calls have rows; the refused ones none"
        assert gw.proc.alive(), "the same gateway process recovered"
    finally:
        gw.stop()


# --------------------------------------------------------------------------------------------------
# Crash safety

CLIENTS = 6
LOAD_SECONDS = 2.0


class Client(threading.Thread):
    """Calls `record` back to back on its own session until the gateway dies."""

    def __init__(self, session: Session, n: int, run_id: str) -> None:
        super().__init__(daemon=True)
        self.session, self.n, self.run_id = session, n, run_id
        self.answered = 0
        self.errors = 0
        self.go = threading.Event()

    def run(self) -> None:
        self.go.wait(30)
        k = 0
        while True:
            k += 1
            marker = f"{self.run_id}-{self.n}-{k}"
            try:
                result = self.session.call("record", {"marker": marker}, timeout=10)
            except (OSError, AssertionError, ValueError):
                return  # the gateway is gone (connection refused or reset, a cut-off answer)
            if text_of(result) == f"recorded {marker}":
                self.answered += 1
            else:
                self.errors += 1


def test_sigkill_under_load_loses_no_decision(e2e_tmp):
    root = e2e_tmp / f"crash-{uuid.uuid4().hex[:8]}"
    seen_file = root / "seen.txt"
    root.mkdir(parents=True)
    spec = harness.python_stdio(harness.VENV1 / "bin" / "python", RECORDING_SERVER,
                                {"RECORDING_SERVER_LOG": str(seen_file)})
    config = harness.write_config(root, {"recorder": spec},
                                  {"recorder": {"version": "1", "default": "deny", "tools": {"record": {}}}})
    gw = harness.start_gateway(config, root / "data")
    run_id = uuid.uuid4().hex[:8]
    try:
        # Sessions (and their upstream children) are opened one by one before the load starts, so
        # a busy machine slows the setup, not the measurement.
        clients = [Client(Session(gw, "recorder"), n, run_id) for n in range(CLIENTS)]
        for c in clients:
            c.start()
        t0 = time.monotonic()
        for c in clients:
            c.go.set()
        # The kill comes while every client has a call in flight or about to be sent.
        time.sleep(LOAD_SECONDS)  # the load's duration, not a synchronization
        os.kill(gw.proc.pid, signal.SIGKILL)
        elapsed = time.monotonic() - t0
        gw.proc.popen.wait(timeout=10)
        for c in clients:
            c.join(30)
            assert not c.is_alive(), "a client did not notice the gateway died"
    finally:
        gw.stop()

    answered = sum(c.answered for c in clients)
    errors = sum(c.errors for c in clients)
    seen = {line for line in seen_file.read_text().split("\n") if line.startswith(run_id)}

    db = gw.data_dir / "audit.db"
    conn = sqlite3.connect(db, timeout=10)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT arguments, decision FROM decisions WHERE tool = 'record'").fetchall()
    finally:
        conn.close()
    audited = {json.loads(args)["marker"]: decision for args, decision in rows}
    lost = sorted(m for m in seen if m not in audited)
    harness.log(f"crash test: {CLIENTS} clients for {elapsed:.2f} s, {answered} answered "
                f"({answered / elapsed:.0f} calls/s), upstream saw {len(seen)}, audit rows {len(audited)}, "
                f"decisions lost {len(lost)}")
    assert errors == 0, f"{errors} calls were answered wrongly before the kill"
    assert answered >= 50, f"too little load to mean anything: {answered} calls answered"
    assert len(seen) >= answered, "every answered call was seen by the upstream"
    assert not lost, f"calls the upstream saw without a decision row: {lost[:10]}"
    assert all(d == "allowed" for d in audited.values())
