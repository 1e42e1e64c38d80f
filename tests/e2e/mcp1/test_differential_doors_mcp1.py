"""Differential test of the other doors (issue 32): a resources/read, resources/subscribe or prompts/get
the gateway allowed is what every server stack reads, and whatever stacks could read differently
from the gateway is refused before it reaches them.

Three stdio servers (tests/e2e/peers/doors_*), each a hand-written server on its language's own
JSON and URL readers, log every resources/read|subscribe and prompts/get they receive as their stack
read it: the URI (Go `encoding/json` matches `URI`, `Uri` and `uri` to one struct field; Python and
Node take `params["uri"]`), and the path they would open after their URL parser (Go `net/url`,
Python `urllib.parse` + `unquote`, Node WHATWG `URL` + `decodeURIComponent`, which drops tabs and
reads `\\` as `/` in file: URIs). Every message of CASES goes to each server through the gateway's
Streamable HTTP entry (legacy session) and `portcullis connect`, all lanes at once (tests/e2e/lanes.py,
shared with test_differential_mcp1.py), behind one policy (default deny; resources under
file:///tmp/allowed/ allowed; prompt `safe` allowed, `admin` denied).

Assertions:
  * every request a stack read was decided: an allowed audit row of that server and method with the
    URI (or prompt name) the stack read, and the path the stack would open, resolved as the OS would,
    is under /tmp/allowed/ (prompts: the name is `safe`);
  * a message marked "blocked" is answered with an error and reaches no server;
  * a message marked "fwd" reaches every server, which opens the `expect`ed path, and gets a result.
Run with `-s` to see the table.
"""

from __future__ import annotations

import json
import posixpath
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import harness
import lanes

pytestmark = pytest.mark.gateway

WAIT = 5.0
ALLOWED_DIR = "/tmp/allowed/"
POLICY = {
    "version": "1",
    "default": "deny",
    "tools": {"echo": {}},
    "resources": {"file:///tmp/allowed/*": {}},
    "prompts": {"safe": {}, "admin": {"action": "deny", "reason": "admins only"}},
}
SERVERS = ("go", "python", "node")
ENTRIES = ("http-session", "stdio")


@dataclass
class Case:
    name: str
    method: str
    params: str  # the params object as JSON text (kept as written: duplicate and near-miss keys)
    expect: str  # "fwd" (reaches every stack), "blocked" (error, reaches none), "any" (only the invariant)
    path: str | None = None  # for "fwd" reads: the path every stack opens

    def render(self, marker: str, rid: int) -> bytes:
        params = self.params.rstrip()
        assert params.endswith("}")
        params = params[:-1] + f',"_meta":{{"marker":"{marker}"}}}}'
        return (f'{{"jsonrpc":"2.0","id":{rid},"method":"{self.method}","params":{params}}}').encode()


def read(name: str, uri: str, expect: str, path: str | None = None, method: str = "resources/read") -> Case:
    return Case(name, method, json.dumps({"uri": uri}), expect, path)


A = "/tmp/allowed/a.txt"
CASES = [
    # controls
    read("ctl-read", "file:///tmp/allowed/a.txt", "fwd", A),
    read("ctl-subscribe", "file:///tmp/allowed/a.txt", "fwd", A, method="resources/subscribe"),
    Case("ctl-prompt", "prompts/get", '{"name":"safe"}', "fwd"),
    read("ctl-denied-read", "file:///etc/passwd", "blocked"),
    Case("ctl-denied-prompt", "prompts/get", '{"name":"admin"}', "blocked"),
    # near-misses and repeats of the members the gate reads (Go reads them as one field)
    Case("URI-beside-uri", "resources/read", '{"uri":"file:///tmp/allowed/a.txt","URI":"file:///etc/passwd"}', "blocked"),
    Case("URI-before-uri", "resources/read", '{"URI":"file:///etc/passwd","uri":"file:///tmp/allowed/a.txt"}', "blocked"),
    Case("Uri-instead", "resources/read", '{"Uri":"file:///tmp/allowed/a.txt"}', "blocked"),
    Case("URI-instead-subscribe", "resources/subscribe", '{"URI":"file:///etc/passwd"}', "blocked"),
    Case("uri-twice", "resources/read", '{"uri":"file:///tmp/allowed/a.txt","uri":"file:///etc/passwd"}', "blocked"),
    Case("uri-escaped-key", "resources/read", '{"uri":"file:///tmp/allowed/a.txt","\\u0055RI":"file:///etc/passwd"}', "blocked"),
    Case("Name-beside-name", "prompts/get", '{"name":"safe","Name":"admin"}', "blocked"),
    Case("Name-instead", "prompts/get", '{"Name":"admin"}', "blocked"),
    Case("name-twice", "prompts/get", '{"name":"safe","name":"admin"}', "blocked"),
    # spellings every stack reads as the same allowed file
    read("upper-scheme", "FILE:///tmp/allowed/a.txt", "fwd", A),
    read("unreserved-escape", "file:///tmp/allowed/%61.txt", "fwd", A),
    read("tilde-escape", "file:///tmp/allowed/%7Ea.txt", "fwd", "/tmp/allowed/~a.txt"),
    read("lower-hex-utf8", "file:///tmp/allowed/%c3%a9.txt", "fwd", "/tmp/allowed/\u00e9.txt"),
    read("file-colon-slash", "file:/tmp/allowed/a.txt", "fwd", A),
    read("file-localhost", "file://localhost/tmp/allowed/a.txt", "fwd", A),
    read("dot-segment-inside", "file:///tmp/allowed/sub/../a.txt", "fwd", A),
    read("double-escape", "file:///tmp/allowed/%2561.txt", "fwd", "/tmp/allowed/%61.txt"),
    # spellings that leave the allowed directory once normalized: denied as their normal form
    read("dot-dot", "file:///tmp/allowed/../../etc/passwd", "blocked"),
    read("slashes-dot-dot", "file:////tmp/allowed/..//..//etc/passwd", "blocked"),
    read("localhost-etc", "file://localhost/etc/passwd", "blocked"),
    read("path-case", "file:///TMP/allowed/a.txt", "blocked"),
    # what URL parsers read differently: refused
    read("encoded-slash", "file:///tmp/allowed/..%2F..%2Fetc/passwd", "blocked"),
    read("encoded-slash-lower", "file:///tmp/allowed/..%2f..%2fetc/passwd", "blocked"),
    read("escaped-dots", "file:///tmp/allowed/%2e%2e/%2e%2e/etc/passwd", "blocked"),
    read("escaped-dots-mixed", "file:///tmp/allowed/%2E%2e/%2e%2E/etc/passwd", "blocked"),
    read("escaped-dot-half", "file:///tmp/allowed/.%2e/.%2E/etc/passwd", "blocked"),
    read("encoded-nul", "file:///tmp/allowed/a.txt%00.png", "blocked"),
    read("encoded-backslash", "file:///tmp/allowed/..%5C..%5Cetc%5Cpasswd", "blocked"),
    read("backslashes", "file:///tmp/allowed/..\\..\\etc\\passwd", "blocked"),
    read("tab-in-dots", "file:///tmp/allowed/.\t./.\n./etc/passwd", "blocked"),
    read("leading-space", " file:///tmp/allowed/../../etc/passwd", "blocked"),
    read("userinfo", "file://user@localhost/tmp/allowed/a.txt", "blocked"),
    read("userinfo-host", "file://localhost@evil.example/tmp/allowed/a.txt", "blocked"),
    read("other-host", "file://evil.example/tmp/allowed/a.txt", "blocked"),
    read("bad-escape", "file:///tmp/allowed/%zz.txt", "blocked"),
    read("relative", "/tmp/allowed/a.txt", "blocked"),
    read("nfd", "file:///tmp/allowed/e\u0301.txt", "blocked"),
    # fragments and queries: only the invariant (no stack opens them outside /tmp/allowed/)
    read("fragment", "file:///tmp/allowed/a.txt#/../../etc/passwd", "any"),
    read("query", "file:///tmp/allowed/a.txt?/../../etc/passwd", "any"),
]


# Cases the strict reading of the message refuses before any decision.
NEAR_MISSES = {"URI-beside-uri", "URI-before-uri", "Uri-instead", "URI-instead-subscribe", "uri-twice",
               "uri-escaped-key", "Name-beside-name", "Name-instead", "name-twice"}


@dataclass
class Sent:
    case: Case
    server: str
    entry: str
    marker: str
    answer: str = ""  # "error" or "result" or "none"
    detail: str = ""


@dataclass
class Run:
    sent: list[Sent] = field(default_factory=list)
    logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rows: list[harness.AuditRow] = field(default_factory=list)


def classify(messages: list[dict[str, Any]], status: int | None, rid: int) -> tuple[str, str]:
    if status is not None and status >= 400:
        return "error", f"HTTP {status}"
    for m in messages:
        if isinstance(m, dict) and m.get("id") in (rid, None) and "error" in m:
            return "error", str(m["error"].get("message", ""))[:100]
        if isinstance(m, dict) and m.get("id") == rid and "result" in m:
            return "result", json.dumps(m["result"])[:100]
    return "none", f"HTTP {status}" if status is not None else ""


class StdioEntry(lanes.StdioEntry):
    """`portcullis connect`, waiting for each message's answer (every case has an id)."""

    def send(self, raw: bytes, rid: int) -> tuple[str, str]:
        start = self.mark()
        self.write(raw)

        def is_answer(m: dict[str, Any]) -> bool:
            return m.get("id") in (rid, None) and ("result" in m or "error" in m)
        try:
            self.wait_for(is_answer, start, f"an answer to {rid}")
        except harness.HarnessError:
            return "none", "no answer"
        return classify([m for m in self.since(start) if is_answer(m)], None, rid)


def drive(gw: harness.Gateway, server: str, entry_name: str, out: list[Sent]) -> None:
    entry: Any = StdioEntry(gw, server, WAIT) if entry_name == "stdio" else lanes.HttpEntry(gw, server, classify, WAIT)
    try:
        rid = 100
        for case in CASES:
            rid += 1
            marker = f"m{uuid.uuid4().hex[:12]}"
            sent = Sent(case, server, entry_name, marker)
            sent.answer, sent.detail = entry.send(case.render(marker, rid), rid)
            out.append(sent)
    finally:
        entry.close()


def opened(entry: dict[str, Any]) -> str | None:
    """The file a stack would open for a read it logged, resolved as open() resolves `..` (None when
    its URL parser refused the URI or it names another host)."""
    if entry.get("parse_error") or entry.get("path") is None:
        return None
    if entry.get("host") not in ("", "localhost", None) or entry.get("user"):
        return None
    return posixpath.normpath(entry["path"])


@pytest.fixture(scope="module")
def run(e2e_tmp: Path) -> Run:
    root = e2e_tmp / f"differential-doors-{uuid.uuid4().hex[:8]}"
    logs = root / "logs"
    logs.mkdir(parents=True)
    go_binary = harness.go_build(harness.PEERS_DIR / "doors_go", root / "doors-go")

    def env(server: str) -> dict[str, str]:
        return {"DOORS_LOG": str(logs / f"{server}.log")}

    servers = {
        "go": {"command": str(go_binary), "args": [], "env": env("go")},
        "python": harness.python_stdio(Path(sys.executable), harness.PEERS_DIR / "doors_py_server.py", env("python")),
        "node": {"command": harness.node_bin(), "args": [str(harness.PEERS_DIR / "doors_node_server.mjs")],
                 "env": env("node")},
    }
    config = harness.write_config(root, servers, {s: POLICY for s in SERVERS}, approval_timeout_secs=5)
    gw = harness.start_gateway(config, root / "data")
    result = Run()
    try:
        result.sent = lanes.run_lanes(drive, gw, SERVERS, ENTRIES)
        for server in SERVERS:
            result.logs[server] = lanes.read_jsonl(logs / f"{server}.log")
        result.rows = gw.audit_db()
        print_table(result)
        yield result
    finally:
        harness.log(f"portcullis serve (differential doors) exited with {gw.stop()}")


def reached(run: Run, s: Sent) -> list[dict[str, Any]]:
    return [e for e in run.logs[s.server] if s.marker in e.get("request", "")]


def print_table(run: Run) -> None:
    lines = ["", "doors corpus x stack x entry (fwd = reached the server, err = refused with an error)"]
    width = max(len(c.name) for c in CASES)
    lines.append(f"{'case':<{width}} {'expect':<8}" + "".join(f"{s}/{e[:4]:<6}" for s in SERVERS for e in ENTRIES))
    by = {(s.case.name, s.server, s.entry): s for s in run.sent}
    for c in CASES:
        cells = []
        for server in SERVERS:
            for entry in ENTRIES:
                s = by[(c.name, server, entry)]
                cells.append(("fwd" if reached(run, s) else "err" if s.answer == "error" else s.answer).ljust(
                    len(server) + 7))
        lines.append(f"{c.name:<{width}} {c.expect:<8}" + "".join(cells))
    print("\n".join(lines), flush=True)


def test_every_read_a_stack_made_was_allowed_as_that_read(run: Run):
    allowed = [r for r in run.rows if r["decision"] in ("allowed", "approved")]
    wrong = []
    for server in SERVERS:
        assert run.logs[server], f"{server} received nothing (the controls must reach it)"
        pool = [r for r in allowed if r["server"] == server]
        for e in run.logs[server]:
            if e["method"] == "prompts/get":
                match = next((r for r in pool if r["method"] == "prompts/get" and r["tool"] == e.get("name")), None)
                if match is None or e.get("name") != "safe":
                    wrong.append(f"{server} got prompt {e.get('name')!r} ({e['request'][:160]})")
                else:
                    pool.remove(match)
                continue
            match = next((r for r in pool if r["method"] == e["method"]
                          and (r.arguments() or {}).get("uri") == e.get("uri")), None)
            path = opened(e)
            if match is None:
                wrong.append(f"{server} read {e.get('uri')!r} with no allowed row for that URI ({e['request'][:160]})")
            else:
                pool.remove(match)
            if path is not None and not path.startswith(ALLOWED_DIR):
                wrong.append(f"{server} would open {path!r} for {e.get('uri')!r} (allowed as {match and match['tool']!r})")
    assert not wrong, "\n".join(wrong)


def test_blocked_messages_get_an_error_and_reach_no_server(run: Run):
    wrong = [f"{s.case.name}@{s.server}/{s.entry}: answer {s.answer} ({s.detail}), reached {len(reached(run, s))}"
             for s in run.sent if s.case.expect == "blocked" and (s.answer != "error" or reached(run, s))]
    assert not wrong, f"{len(wrong)} blocked message(s) were not refused:\n" + "\n".join(wrong)


def test_allowed_spellings_reach_every_stack_as_the_same_file(run: Run):
    wrong = []
    for s in run.sent:
        if s.case.expect != "fwd":
            continue
        got = reached(run, s)
        if s.answer != "result" or len(got) != 1:
            wrong.append(f"{s.case.name}@{s.server}/{s.entry}: answer {s.answer} ({s.detail}), reached {len(got)}")
            continue
        if s.case.path is not None and opened(got[0]) != s.case.path:
            wrong.append(f"{s.case.name}@{s.server}/{s.entry}: opens {opened(got[0])!r}, not {s.case.path!r}")
    assert not wrong, "\n".join(wrong)


def test_refusals_are_audited_with_their_method(run: Run):
    """No blocked message has an allowed row (rows found by server and request id: each case is sent
    with the same id on both entries); a URI the policy refused is a denied row of resources/read,
    one per entry; the strict reading's refusals (near-miss and repeated keys) are never allowed."""
    rid_of = {c.name: 101 + i for i, c in enumerate(CASES)}
    wrong = []
    for s in run.sent:
        if s.case.expect != "blocked":
            continue
        mine = [r for r in run.rows if r["server"] == s.server and r["method"] != "tools/call"
                and str(r.get("request_id")) == str(rid_of[s.case.name])]
        if any(r["decision"] in ("allowed", "approved") for r in mine):
            wrong.append(f"{s.case.name}@{s.server}: allowed row {[r.raw for r in mine]}")
        if s.case.method == "resources/read" and s.case.name not in NEAR_MISSES:
            denied = [r for r in mine if r["decision"] == "denied" and r["method"] == "resources/read"]
            if len(denied) != len(ENTRIES):
                wrong.append(f"{s.case.name}@{s.server}: {len(denied)} denied resources/read row(s), "
                             f"expected one per entry: {[r.raw for r in mine]}")
    assert not wrong, "\n".join(wrong)
