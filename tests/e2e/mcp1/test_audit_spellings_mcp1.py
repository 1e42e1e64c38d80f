"""The audit keeps every row readable and findable, whatever the client's JSON spelled (issue 28.5).

Calls go through a real gateway to server-filesystem as raw HTTP bodies, so the test chooses the
spelling: a path with every `/` written `\\u002f`, a path with one letter written `\\u0068`, and
arguments holding raw NEL (U+0085), U+2028 and U+2029 (legal unescaped in JSON) and escaped C0 line
breaks. The server decodes the escapes and reads the files, so each call ran. Then:

- `portcullis audit --format jsonl` read with Python's `str.splitlines()` (which splits at
  \\n \\r \\x0b \\x0c \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029) gives one JSON object per row of audit.db;
- `--format csv` gives one physical line per row, and the csv module reads the arguments cell back
  as the exact JSON value;
- `--text` with the decoded path finds the calls whose paths were spelled with escapes.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import uuid
from pathlib import Path

import pytest

import harness

pytestmark = pytest.mark.gateway

ALLOW_ALL = {"version": "1", "default": "allow"}
# Raw in the body: JSON allows these unescaped inside strings.
RAW_BREAKS = "\x85\u2028\u2029"
# Escaped in the body by json.dumps (JSON forbids raw C0 characters); decoded by every reader.
C0_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e"


@pytest.fixture(scope="module")
def sgw(e2e_tmp: Path):
    root = e2e_tmp / f"spellings-{uuid.uuid4().hex[:8]}"
    fs_root = root / "fsroot"
    (fs_root / ".ssh").mkdir(parents=True)
    config = harness.write_config(root, {"fs": harness.filesystem_stdio(fs_root)}, {"fs": ALLOW_ALL})
    gateway = harness.start_gateway(config, root / "data")
    yield gateway, fs_root.resolve()
    harness.log(f"portcullis serve (spellings) exited with {gateway.stop()}")


def session_headers(gw) -> dict[str, str]:
    init = harness.http_post(gw.mcp_url("fs"), harness.INITIALIZE_BODY, gw.auth_headers())
    assert init.status == 200, init
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**gw.auth_headers(), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(gw.mcp_url("fs"), {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def call_raw(gw, headers: dict[str, str], rid: int, arguments_json: str) -> dict:
    """A tools/call of read_text_file whose arguments are `arguments_json`, byte for byte."""
    body = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_text_file","arguments":%s}}'
            % (rid, arguments_json)).encode()
    reply = harness.http_post(gw.mcp_url("fs"), body, headers, timeout=30)
    assert reply.status == 200, (reply.status, reply.text()[:500])
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == rid]
    return msg


def text_of(msg: dict) -> str:
    assert "result" in msg, msg
    return "".join(c.get("text", "") for c in msg["result"]["content"])


def audit(gw, *args: str) -> str:
    argv = [str(harness.portcullis_bin()), "audit", "--data-dir", str(gw.data_dir), "--config", str(gw.config),
            "--limit", "1000", *args]
    r = subprocess.run(argv, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout.decode("utf-8")


@pytest.fixture(scope="module")
def spelled(sgw):
    """The calls, made once: {name: (the file's content, its decoded path)}."""
    gw, fs_root = sgw
    headers = session_headers(gw)
    made = {}

    def read(name: str, path: Path, spell, extra: str = "") -> None:
        m = uuid.uuid4().hex
        path.write_text(m)
        arguments = '{"path":"%s"%s}' % (spell(str(path)), extra)
        msg = call_raw(gw, headers, len(made) + 2, arguments)
        assert text_of(msg) == m, f"the server decoded {arguments} and read the file: {msg}"
        made[name] = (m, str(path))

    read("solidus", fs_root / ".ssh" / "id_a", lambda p: p.replace("/", "\\u002f"))
    read("letter", fs_root / ".ssh" / "id_b", lambda p: p.replace(".ssh", ".ss\\u0068"))
    for i, brk in enumerate(RAW_BREAKS):
        # Raw in the file name and in an extra argument, as a client that does not escape sends it.
        note = json.dumps(f"before{brk}after{C0_BREAKS}end", ensure_ascii=False)
        read(f"raw {i}", fs_root / f"line{brk}break.txt", lambda p: p, ',"note":%s' % note)
    return made


def test_jsonl_keeps_one_row_per_line_for_splitlines(sgw, spelled):
    gw, _ = sgw
    out = audit(gw, "--format", "jsonl")
    lines = out.splitlines()
    rows = [json.loads(line) for line in lines]
    in_db = gw.audit_db()
    assert len(rows) == len(in_db) >= len(spelled), f"{len(rows)} lines for {len(in_db)} rows:\n{out!r}"
    assert not any(c in out for c in RAW_BREAKS), "NEL and U+2028/9 are written as \\u escapes"
    notes = [r["arguments"]["note"] for r in rows if "note" in r["arguments"]]
    assert sorted(notes) == sorted(f"before{b}after{C0_BREAKS}end" for b in RAW_BREAKS), "exact text read back"


def test_csv_keeps_one_row_per_line_and_reads_back(sgw, spelled):
    gw, _ = sgw
    out = audit(gw, "--format", "csv")
    lines = out.splitlines()
    records = list(csv.reader(io.StringIO(out, newline="")))
    in_db = gw.audit_db()
    assert len(lines) == len(records) == len(in_db) + 1, f"a header and one line per row:\n{out!r}"
    header = records[0]
    assert all(len(r) == len(header) for r in records), "every record has every column"
    by_id = {r["id"]: r for r in in_db}
    at = header.index("arguments")
    for record in records[1:]:
        stored = json.loads(by_id[int(record[header.index("id")])]["arguments"])
        assert json.loads(record[at]) == stored, f"the arguments cell is the exact value: {record[at]!r}"


@pytest.mark.parametrize("name", ["solidus", "letter"])
def test_text_finds_a_path_spelled_with_escapes(sgw, spelled, name):
    gw, _ = sgw
    _, path = spelled[name]
    escape = {"solidus": "\\u002f", "letter": ".ss\\u0068"}[name]
    stored = [r for r in gw.audit_db() if escape in r["arguments"]]
    assert len(stored) == 1, "the audit stores the client's spelling (the case the search must decode)"
    found = [json.loads(line) for line in audit(gw, "--format", "jsonl", "--text", path).splitlines()]
    assert [r["arguments"]["path"] for r in found] == [path], f"--text {path} finds the call that ran"


def test_text_still_finds_the_raw_spelling_and_nothing_else(sgw, spelled):
    gw, _ = sgw
    _, path = spelled["solidus"]
    raw = path.replace("/", "\\u002f")
    found = [json.loads(line) for line in audit(gw, "--format", "jsonl", "--text", raw).splitlines()]
    assert [r["arguments"]["path"] for r in found] == [path]
    both = audit(gw, "--format", "jsonl", "--text", str(Path(path).parent) + "/id_").splitlines()
    assert len(both) == 2, both
    assert audit(gw, "--format", "jsonl", "--text", path + "-nope") == ""
