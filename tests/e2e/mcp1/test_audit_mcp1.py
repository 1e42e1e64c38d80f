"""The audit trail through `portcullis audit --format jsonl` and the `decisions` table of audit.db."""

from __future__ import annotations

import uuid

import pytest
from v1client import open_session, run

pytestmark = pytest.mark.gateway

COLUMNS = {
    "id", "time_ms", "session", "client_name", "client_version", "server", "tool", "arguments",
    "arguments_digest", "decision", "decided_by", "rule", "reason", "wait_ms", "outcome", "upstream_ms",
}
DECISIONS = {"allowed", "denied", "hidden", "rate_limited", "approved", "rejected", "timed_out", "cancelled", "failed"}


@pytest.fixture(scope="module")
def audited(world, gateway):
    """One session on the fs server: an allowed read and two denied writes with the same arguments."""
    m = uuid.uuid4().hex[:12]
    hello = str(world.fs_root / "hello.txt")
    target = str(world.fs_root / f"audit-{m}.txt")

    async def body():
        async with open_session("http", "fs", world.spec("fs"), gateway) as (s, _):
            await s.call_tool("read_text_file", {"path": hello, "tail": 1, "m": m})
            await s.call_tool("write_file", {"path": target, "content": m})
            await s.call_tool("write_file", {"path": target, "content": m})

    run(body)
    gateway.audit_rows_for("fs", "write_file", m, count=2)
    gateway.audit_rows_for("fs", "read_text_file", m, settled=True)
    return m


def test_jsonl_rows_have_all_columns(gateway, audited):
    rows = gateway.audit_cli("--server", "fs", "--limit", "50")
    assert rows, "audit must list the fs rows"
    for row in rows:
        missing = COLUMNS - set(row.raw)
        assert not missing, f"audit jsonl rows must carry every column; missing {missing} in {row.raw}"
        assert row["decision"] in DECISIONS, row.raw
        assert row["decided_by"] in {"policy", "user", "timeout", "client", "gateway"}, row.raw
        assert row["outcome"] in {"ok", "tool_error", "failure", "cancelled", None}, row.raw


def test_filters(gateway, audited):
    m = audited
    denied = gateway.audit_cli("--server", "fs", "--decision", "denied")
    assert denied and all(r["decision"] == "denied" and r["server"] == "fs" for r in denied)
    mine = [r for r in denied if m in str(r.get("arguments"))]
    assert len(mine) == 2, f"both denied writes are audited: {[r.raw for r in mine]}"
    assert mine[0]["arguments_digest"] == mine[1]["arguments_digest"], "same arguments, same digest"
    assert mine[0]["id"] != mine[1]["id"]

    tool = gateway.audit_cli("--tool", "read_text_file")
    assert tool and all(r["tool"] == "read_text_file" for r in tool)
    assert gateway.audit_cli("--server", "fs", "--since", "10m"), "--since 10m includes rows just written"
    one = gateway.audit_cli("--server", "fs", "--limit", "1")
    assert len(one) == 1, f"--limit 1 gives one row, got {len(one)}"
    assert gateway.audit_cli("--server", "no-such-server") == []


def test_cli_rows_match_database(gateway, audited):
    m = audited
    cli = {r["id"]: r for r in gateway.audit_cli("--server", "fs", "--limit", "1000")
           if m in str(r.get("arguments"))}
    db = {r["id"]: r for r in gateway.audit_db("server = ?", ["fs"]) if m in str(r.get("arguments"))}
    assert set(cli) == set(db) and len(db) == 3, f"CLI and audit.db must hold the same rows: {sorted(cli)} {sorted(db)}"
    for rid, row in db.items():
        for key in ("session", "server", "tool", "decision", "decided_by", "rule", "reason", "outcome"):
            assert cli[rid][key] == row[key], f"column {key} of row {rid}: cli {cli[rid][key]!r} db {row[key]!r}"
    sessions = {r["session"] for r in db.values()}
    assert len(sessions) == 1, "calls of one client session share the audit session id"


def test_secret_arguments_are_redacted(world, gateway):
    m = uuid.uuid4().hex[:12]
    secret = f"sk-live-{uuid.uuid4().hex}"

    async def body():
        async with open_session("http", "everything", world.spec("everything"), gateway) as (s, _):
            return await s.call_tool("echo", {"message": m, "api_key": secret, "password": secret})

    result = run(body)
    assert result.content[0].text == f"Echo: {m}", "the call itself is forwarded with its arguments"
    (row,) = gateway.audit_rows_for("everything", "echo", m, settled=True)
    assert secret not in str(row.raw), f"secret-looking argument values must be redacted in audit: {row.raw}"
    assert set(row.arguments()) >= {"message", "api_key", "password"}, "keys stay, values are redacted"
    assert row.arguments()["message"] == m, "ordinary values are kept"
    db_rows = [r for r in gateway.audit_db("server = ?", ["everything"]) if m in str(r.get("arguments"))]
    assert db_rows and all(secret not in str(r.raw) for r in db_rows), "audit.db must not hold the secret either"
