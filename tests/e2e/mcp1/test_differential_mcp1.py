"""Differential test: nothing runs upstream that the gateway did not decide and audit as that same call.

Four stdio MCP servers, each on a real JSON-RPC stack (tests/differential/: Go encoding/json, the
PyPI `json-rpc` library, plain Python `json`, Node `JSON.parse`), log every tool execution exactly as
their stack read it, and every line they received. Every message of tests/differential/corpus.py is
sent to each of them through the gateway's three ways in: Streamable HTTP with a legacy session
(initialize, Mcp-Session-Id), stateless Streamable HTTP, and `portcullis connect` (raw stdin lines),
all lanes at once (the entries and the lanes are tests/e2e/lanes.py, shared with the doors test).

Assertions (each its own test, over one shared run of the corpus):
  * every execution any server logged matches an audit row of that server that allowed it
    (`allowed`/`approved`) with the same tool name and the same value for every argument the tool
    acted on (canonical JSON), one row per execution;
  * a message the strict reading refuses is answered with an error (HTTP 4xx or a JSON-RPC error)
    and reaches no server;
  * the controls still work: unambiguous calls run, and accepted messages are not refused.

Outcomes in the printed table (case × server × entry): `refused` (error answer, nothing forwarded),
`denied` (decided by the policy, nothing forwarded), `fwd` (reached the server; everything it ran was
audited as allowed), `SLIPPED` (the server ran something no allowed audit row covers), `silent`
(neither forwarded nor answered). Run with `-s` to see it.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import harness
import lanes

DIFF_DIR = harness.REPO / "tests" / "differential"
sys.path.insert(0, str(DIFF_DIR))

import corpus  # noqa: E402

pytestmark = pytest.mark.gateway

WAIT = 4.0  # seconds for one answer
CALL_TIMEOUT = 2  # gateway call timeout: a stack that never answers a request it treats as a notification
POLICY = {
    "version": "1",
    "default": "deny",
    "tools": {
        "echo": {},
        "read_file": {
            "action": "deny",
            "reason": "only /tmp/allowed/",
            "rules": [{"when": {"arguments.path": {"regex": "^/tmp/allowed/"}}, "action": "allow"}],
        },
        "wipe": {"action": "deny", "reason": "wiping is not for agents"},
    },
}
SERVERS = ("go", "jsonrpc", "pyjson", "node")
ENTRIES = ("http-session", "http-stateless", "stdio")
ALLOWED = ("allowed", "approved")


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def same_call(execution: dict[str, Any], row_tool: str, row_args: Any) -> bool:
    """The execution is the audited call: same tool, and every argument the tool acted on (every key
    it logged) has the value the policy judged. Null and absent arguments are the same."""
    if execution.get("tool") != row_tool:
        return False
    ran = execution.get("arguments")
    ran = {} if ran is None else ran
    judged = {} if row_args is None else row_args
    if isinstance(ran, dict) and isinstance(judged, dict):
        return all(k in judged and canon(judged[k]) == canon(v) for k, v in ran.items())
    return canon(ran) == canon(judged)


@dataclass
class Sent:
    case: corpus.Case
    server: str
    entry: str
    marker: str
    answer: str = ""  # "error" (protocol error), "denied" ([portcullis] tool result), "result", "none"
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Run:
    gateway: harness.Gateway
    sent: list[Sent] = field(default_factory=list)
    executions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seen: dict[str, list[str]] = field(default_factory=dict)
    rows: list[harness.AuditRow] = field(default_factory=list)
    unmatched: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    outcome: dict[tuple[str, str, str], str] = field(default_factory=dict)


def classify_reply(messages: list[dict[str, Any]], status: int | None, rid: Any) -> tuple[str, str]:
    """What the gateway (or the server through it) answered to one message."""
    if status is not None and status >= 400:
        return "error", f"HTTP {status}"
    for m in messages:
        if not isinstance(m, dict) or "method" in m:
            continue
        if "error" in m and (rid is None or m.get("id") in (rid, None)):
            return "error", str(m["error"].get("message", ""))[:80]
        if "result" in m and (rid is None or m.get("id") == rid):
            result = m["result"] if isinstance(m["result"], dict) else {}
            texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
            if result.get("isError") and any(t.startswith(harness.DENIAL_PREFIX) for t in texts):
                return "denied", texts[0][:80]
            return "result", (texts[0] if texts else "")[:80]
    return "none", f"HTTP {status}" if status is not None else ""


def request_id_of(raw: bytes) -> Any:
    """The id as Python's json reads it (for matching the answer), or None."""
    try:
        msg = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError):
        return None
    return msg.get("id") if isinstance(msg, dict) else None


class StdioEntry(lanes.StdioEntry):
    """`portcullis connect`, each message followed by a barrier (a message may go unanswered)."""

    def send(self, raw: bytes, rid: Any) -> tuple[str, str]:
        start = self.mark()
        self.write(raw)
        # A barrier: an allowed call on the same session. Whatever the gateway answers to `raw` comes
        # before the barrier's answer (its own refusals at once, forwarded requests in order).
        bid = f"barrier-{uuid.uuid4().hex[:10]}"
        self.write(json.dumps({"jsonrpc": "2.0", "id": bid, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"message": bid}}}).encode())
        self.wait_for(lambda m: m.get("id") == bid, start, f"barrier {bid}")
        before = [m for m in self.since(start) if m.get("id") != bid]
        answered = any(("result" in m or "error" in m) and m.get("id") in (rid, None) for m in before)
        if rid is not None and not answered:
            # A forwarded request may be answered after the barrier (one a stack never answers is
            # failed by the gateway's call timeout): wait for its answer too, bounded.
            try:
                self.wait_for(lambda m: m.get("id") == rid and ("result" in m or "error" in m), start, "answer")
            except harness.HarnessError:
                pass
            before = [m for m in self.since(start) if m.get("id") != bid]
        return classify_reply(before, None, rid)


def barrier_http(entry: lanes.HttpEntry) -> None:
    """An allowed call on the same entry, answered only after what the server got before it."""
    bid = f"barrier-{uuid.uuid4().hex[:10]}"
    body = json.dumps({"jsonrpc": "2.0", "id": bid, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"message": bid}}}).encode()
    answer, detail = entry.send(body, bid)
    assert answer == "result", f"barrier on {entry.url}: {answer} {detail}"


def drive(gw: harness.Gateway, server: str, entry_name: str, out: list[Sent]) -> None:
    if entry_name == "stdio":
        entry: Any = StdioEntry(gw, server, WAIT)
    else:
        entry = lanes.HttpEntry(gw, server, classify_reply, WAIT, session=entry_name == "http-session")
    try:
        rid = 100
        for case in corpus.CASES:
            rid += 1
            marker = f"m{uuid.uuid4().hex[:12]}"
            raw = case.render(marker, rid)
            sent = Sent(case, server, entry_name, marker)
            started = time.monotonic()
            sent.answer, sent.detail = entry.send(raw, request_id_of(raw))
            sent.seconds = time.monotonic() - started
            if entry_name != "stdio" and sent.answer == "none":
                barrier_http(entry)  # a forwarded notification: let the server read it first
            out.append(sent)
    finally:
        entry.close()


def evaluate(run: Run, logs: Path) -> None:
    run.rows = run.gateway.audit_db()
    pool: dict[str, list[harness.AuditRow]] = defaultdict(list)
    for row in run.rows:
        if row["decision"] in ALLOWED:
            pool[row["server"]].append(row)
    slipped_markers: set[tuple[str, str]] = set()
    for server in SERVERS:
        run.executions[server] = lanes.read_jsonl(logs / f"exec-{server}.log")
        run.seen[server] = (logs / f"seen-{server}.log").read_text(encoding="utf-8", errors="replace").split("\n") \
            if (logs / f"seen-{server}.log").exists() else []
        rows = pool[server]
        for execution in run.executions[server]:
            match = next((r for r in rows if same_call(execution, r["tool"], r.arguments())), None)
            if match is not None:
                rows.remove(match)
                continue
            run.unmatched.append((server, execution))
            request = str(execution.get("request", ""))
            for s in run.sent:
                if s.server == server and s.marker in request:
                    slipped_markers.add((server, s.marker))
    for s in run.sent:
        forwarded = any(s.marker in line for line in run.seen[s.server])
        if (s.server, s.marker) in slipped_markers:
            outcome = "SLIPPED"
        elif forwarded:
            outcome = "fwd"
        elif s.answer == "error":
            outcome = "refused"
        elif s.answer == "denied":
            outcome = "denied"
        else:
            outcome = "silent"
        run.outcome[(s.case.name, s.server, s.entry)] = outcome


def print_table(run: Run) -> None:
    cols = [(srv, ent) for srv in SERVERS for ent in ENTRIES]
    short = {"http-session": "ses", "http-stateless": "sl", "stdio": "io"}
    width = max(len(c.name) for c in corpus.CASES)
    lines = ["", "differential corpus x stack x entry (ses = HTTP session, sl = stateless HTTP, io = connect)",
             f"{'case':<{width}} {'class':<13} {'strict':<6} " + " ".join(f"{s[:6]}/{short[e]:<3}".ljust(10) for s, e in cols)]
    for c in corpus.CASES:
        cells = [run.outcome.get((c.name, s, e), "?").ljust(10) for s, e in cols]
        lines.append(f"{c.name:<{width}} {c.cls:<13} {c.strict:<6} " + " ".join(cells))
    slow = sorted((s for s in run.sent if s.seconds > 1.0), key=lambda s: -s.seconds)
    for s in slow[:20]:
        lines.append(f"slow: {s.case.name}@{s.server}/{s.entry} {s.seconds:.1f}s ({s.answer}: {s.detail})")
    slipped = sorted({k[0] for k, v in run.outcome.items() if v == "SLIPPED"})
    lines.append(f"cases that SLIPPED somewhere ({len(slipped)}): {', '.join(slipped) or 'none'}")
    if run.unmatched:
        lines.append(f"executions without an allowed audit row: {len(run.unmatched)}")
        for server, e in run.unmatched[:60]:
            lines.append(f"  {server}: tool={e.get('tool')!r} arguments={canon(e.get('arguments'))[:100]}"
                         f" request={str(e.get('request'))[:140]}")
    print("\n".join(lines), flush=True)


@pytest.fixture(scope="module")
def run(e2e_tmp: Path) -> Run:
    root = e2e_tmp / f"differential-{uuid.uuid4().hex[:8]}"
    logs = root / "logs"
    logs.mkdir(parents=True)
    try:
        import jsonrpc  # noqa: F401
    except ImportError:
        harness.require(False, "PyPI json-rpc missing from this venv (tests/requirements-mcp1.txt)")
    go_binary = harness.go_build(DIFF_DIR / "go", root / "differential-go")
    python = Path(sys.executable)

    def env(server: str) -> dict[str, str]:
        return {"DIFF_EXEC_LOG": str(logs / f"exec-{server}.log"), "DIFF_SEEN_LOG": str(logs / f"seen-{server}.log")}

    servers = {
        "go": {"command": str(go_binary), "args": [], "env": env("go")},
        "jsonrpc": {"command": str(python), "args": [str(DIFF_DIR / "jsonrpc_server.py")], "env": env("jsonrpc")},
        "pyjson": {"command": str(python), "args": [str(DIFF_DIR / "pyjson_server.py")], "env": env("pyjson")},
        "node": {"command": harness.node_bin(), "args": [str(DIFF_DIR / "node_server.mjs")], "env": env("node")},
    }
    for spec in servers.values():
        spec["call_timeout_secs"] = CALL_TIMEOUT
    config = harness.write_config(root, servers, {s: POLICY for s in SERVERS}, approval_timeout_secs=5)
    gw = harness.start_gateway(config, root / "data")
    result = Run(gateway=gw)
    try:
        result.sent = lanes.run_lanes(drive, gw, SERVERS, ENTRIES)
        evaluate(result, logs)
        print_table(result)
        yield result
    finally:
        harness.log(f"portcullis serve (differential) exited with {gw.stop()}")


def test_every_execution_was_decided_and_audited_as_that_call(run: Run):
    assert run.sent and all(run.executions.values()), "each server ran something (the controls)"
    slipped = sorted({f"{c}@{s}/{e}" for (c, s, e), v in run.outcome.items() if v == "SLIPPED"})
    assert not run.unmatched, (
        f"{len(run.unmatched)} execution(s) had no allowed audit row with that tool and arguments; "
        f"slipped: {slipped}; first: {[(s, e.get('tool'), e.get('arguments')) for s, e in run.unmatched[:5]]}")


def test_refused_messages_get_an_error_and_reach_no_server(run: Run):
    wrong = []
    for s in run.sent:
        if s.case.strict != "refuse":
            continue
        outcome = run.outcome[(s.case.name, s.server, s.entry)]
        if outcome != "refused":
            wrong.append(f"{s.case.name}@{s.server}/{s.entry}: {outcome} ({s.answer}: {s.detail})")
    assert not wrong, f"{len(wrong)} refused-by-the-strict-reading message(s) were not refused:\n" + "\n".join(wrong)


def test_controls_still_work(run: Run):
    wrong = []
    for s in run.sent:
        outcome = run.outcome[(s.case.name, s.server, s.entry)]
        if s.case.strict == "accept" and outcome in ("refused", "silent"):
            wrong.append(f"{s.case.name}@{s.server}/{s.entry}: {outcome} ({s.detail})")
        if s.case.runs:
            ran = [e for e in run.executions[s.server]
                   if s.marker in str(e.get("request", "")) and e.get("tool") == s.case.runs]
            if outcome != "fwd" or s.answer != "result" or len(ran) != 1:
                wrong.append(f"{s.case.name}@{s.server}/{s.entry}: {outcome}, answer {s.answer}, "
                             f"{len(ran)} execution(s) of {s.case.runs}")
    assert not wrong, "controls that did not work:\n" + "\n".join(wrong)
