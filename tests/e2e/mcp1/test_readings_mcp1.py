"""Semantic differential test: nothing a server executes was allowed by a deny rule.

The gate decides on JSON; servers run what their SDK makes of it. Five real servers sit behind one
gateway, each logging (or, for server-filesystem, showing in its answer) what a tool actually ran with
after its SDK's conversions:

  fastmcp  tests/e2e/peers/readings_fastmcp.py   Python SDK FastMCP, typed params (int, float, Decimal,
                                                 bool, a model; pydantic lax mode, JSON-in-a-string
                                                 pre-parsing)
  mcpserver2  the same script on mcp 2.x (MCPServer, venv2's interpreter): the SDK's next major
  ts       tests/e2e/peers/readings_ts.mjs       TypeScript SDK McpServer with zod 4 (z.number(),
                                                 z.coerce.number(), z.coerce.boolean(), z.stringbool(),
                                                 a JSON-in-a-string preprocessor; JavaScript doubles)
  go       tests/e2e/peers/readings_go/          Go encoding/json into typed structs (case-insensitive
                                                 keys, float64 rounding)
  fs       @modelcontextprotocol/server-filesystem (relative paths against its root, `~`, Unicode-
                                                 equivalent names); a private file under a denied dir

Every server gets the same policy (tests/differential/readings.py: `count` > 100, `force` = true,
`opts.force` = true, `vm` = 2^53, paths under two private directories are denied; `cap` is allowed
only for `count` <= 100). tests/differential/readings.py spells each denied value every way we know a
mainstream SDK reads back as it — the issue's examples by name, hand-picked spellings, and seeded
generated compositions — and each is sent as one tools/call. The invariant, per server, over what it
logged it executed: no execution has a value the policy denies. Controls prove the servers run and log
(an allowed value runs with that value) and that the rules bite (the plain denied value is denied).

`-s` prints, per server, how the probes ended and every execution that broke the invariant.
READINGS_SEED / READINGS_CASES change the generated set (defaults fixed, so CI is reproducible);
READINGS_REPORT=FILE writes every probe with its outcome as JSON lines.
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import harness

DIFF_DIR = harness.REPO / "tests" / "differential"
sys.path.insert(0, str(DIFF_DIR))

import readings  # noqa: E402

pytestmark = [pytest.mark.gateway, pytest.mark.timeout(240)]

SERVERS = ("fastmcp", "mcpserver2", "ts", "go", "fs")
PATH_TOOL = {"fastmcp": "open_path", "mcpserver2": "open_path", "ts": "open_path", "go": "open_path", "fs": "read_text_file"}
TOOLS = {
    "fastmcp": {"spend", "spend_float", "spend_decimal", "cap", "spend_held", "toggle", "configure", "vm", "open_path"},
    "mcpserver2": {"spend", "spend_float", "spend_decimal", "cap", "spend_held", "toggle", "configure", "vm",
                   "open_path"},
    "ts": {"spend", "spend_strict", "cap", "spend_held", "toggle", "toggle_coerce", "toggle_stringbool", "configure", "vm",
           "open_path"},
    "go": {"spend", "cap", "spend_held", "toggle", "skip", "configure", "vm", "open_path"},
    "fs": {"read_text_file", "read_file"},
}
# Files under denied directories, as the policy and the probes spell them (NFC). On disk `naïve` is in
# NFD (as macOS writes names), the others in NFC: the rule and the name on disk differ in form.
PRIVATE_TARGETS = ["private/key.txt", "privé/key.txt", "naïve/key.txt"]
DISK_FORM = {"naïve/key.txt": "NFD"}
WAIT = 10.0
WORKERS = 8
LANES = ("listed", "unlisted")






@dataclass
class Sent:
    server: str
    probe: readings.Probe
    marker: str
    answer: str = ""  # ran | denied ([portcullis] result) | rejected (server error result) | error | none
    text: str = ""
    executed: dict[str, Any] | None = None  # the value the tool logged it ran with
    broke: str | None = None  # why that execution breaks the policy


@dataclass
class Run:
    root: Path
    denied_dirs: list[Path]
    secrets: dict[str, Path]
    sent: list[Sent] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)

    def of(self, server: str, *origins: str) -> list[Sent]:
        return [s for s in self.sent if s.server == server and (not origins or s.probe.origin in origins)]


def make_root(root: Path) -> tuple[list[Path], dict[str, Path]]:
    """root/public/hello.txt, and a secret file in each private directory; the denied directories as
    the policy spells them."""
    (root / "public").mkdir(parents=True)
    (root / "public" / "hello.txt").write_text("hello\n")
    secrets = {}
    for i, target in enumerate(PRIVATE_TARGETS):
        path = root / unicodedata.normalize(DISK_FORM.get(target, "NFC"), target)
        path.parent.mkdir(parents=True, exist_ok=True)
        secret = f"SECRET-{i}-{uuid.uuid4().hex}"
        path.write_text(secret + "\n")
        secrets[secret] = path
    readings.make_links(root, PRIVATE_TARGETS[0])
    return [root / t.rsplit("/", 1)[0] for t in PRIVATE_TARGETS], secrets


def classify(reply: harness.HttpReply, rid: int) -> tuple[str, str]:
    if reply.status >= 400:
        return "error", f"HTTP {reply.status} {reply.text()[:120]}"
    try:
        messages = harness.sse_json_messages(reply.body) if reply.body.strip() else []
    except ValueError:
        return "none", reply.text()[:120]
    for m in messages:
        if not isinstance(m, dict) or m.get("id") != rid:
            continue
        if "error" in m:
            return "error", str(m["error"].get("message", ""))[:200]
        result = m.get("result") if isinstance(m.get("result"), dict) else {}
        text = "\n".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))
        if result.get("isError"):
            return ("denied" if text.startswith(harness.DENIAL_PREFIX) else "rejected"), text
        return "ran", text
    return "none", reply.text()[:120]


def open_session(gw: harness.Gateway, server: str) -> dict[str, str]:
    """A legacy Streamable HTTP session (initialize, initialized); its headers, shared by the workers."""
    headers = dict(gw.auth_headers())
    init = harness.http_post(gw.mcp_url(server), harness.INITIALIZE_BODY, headers, timeout=30)
    assert init.status == 200, (server, init.status, init.text()[:300])
    headers["Mcp-Session-Id"] = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers["MCP-Protocol-Version"] = harness.INITIALIZE_BODY["params"]["protocolVersion"]
    note = harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers, timeout=WAIT)
    assert note.status == 202, (server, note.status, note.text()[:300])
    return headers


def send(gw: harness.Gateway, headers: dict[str, str], s: Sent, rid: int) -> None:
    try:
        reply = harness.http_post(gw.mcp_url(s.server), s.probe.body(s.marker, rid), headers, timeout=WAIT)
    except (TimeoutError, OSError) as e:
        s.answer, s.text = "none", repr(e)
        return
    s.answer, s.text = classify(reply, rid)


def list_tools(gw: harness.Gateway, headers: dict[str, str], server: str) -> set[str]:
    """tools/list first, as agents do (the gateway pins the schemas it sees)."""
    reply = harness.http_post(gw.mcp_url(server), {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                              headers, timeout=30)
    assert reply.status == 200, (server, reply.status, reply.text()[:300])
    (msg,) = [m for m in harness.sse_json_messages(reply.body) if m.get("id") == 1]
    assert "result" in msg, (server, msg)
    return {t["name"] for t in msg["result"]["tools"]}


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def judge(run: Run, logs: Path) -> None:
    """Attach each probe's execution and whether it broke the policy; executions that belong to no
    probe, or to one probe more than once, are strays."""
    markers = {s.marker for s in run.sent}
    logged: dict[str, dict[str, dict[str, Any]]] = {}
    for server in SERVERS:
        seen: dict[str, dict[str, Any]] = {}
        for rec in read_log(logs / f"{server}.log"):
            if rec["marker"] not in markers or rec["marker"] in seen:
                run.strays.append(f"{server}: {json.dumps(rec, ensure_ascii=False)}")
            seen[rec["marker"]] = rec
        logged[server] = seen
    for s in run.sent:
        rec = logged[s.server].get(s.marker)
        if rec is not None:
            s.executed = rec["value"]
        elif s.server == "fs" and s.answer == "ran":
            # server-filesystem logs nothing: what it read is in its answer.
            opened = [str(p) for secret, p in run.secrets.items() if secret in s.text]
            s.executed = {"opened": opened[0] if opened else "(not private)"}
        if s.executed is not None:
            s.broke = readings.violation(s.probe.tool, s.executed, run.denied_dirs)
        leaked = [str(p) for secret, p in run.secrets.items() if secret in s.text]
        if leaked and not s.broke:
            s.broke = f"answer carried the content of {leaked[0]}"


def report(run: Run, lane: str) -> None:
    dump = os.environ.get("READINGS_REPORT")
    if dump:  # every probe with its outcome, one JSON line each, for a closer look
        with open(dump, "a", encoding="utf-8") as f:
            for s in run.sent:
                f.write(json.dumps({"lane": lane, "server": s.server, "tool": s.probe.tool, "name": s.probe.name,
                                    "origin": s.probe.origin, "sent": s.probe.arguments, "answer": s.answer,
                                    "executed": s.executed, "broke": s.broke, "text": s.text[:200]},
                                   ensure_ascii=False) + "\n")
    print("\nreadings: probes per server by outcome (ran / denied by the gate / rejected by the server / ...)")
    for server in SERVERS:
        counts = Counter(s.answer for s in run.of(server))
        broke = [s for s in run.of(server) if s.broke]
        print(f"  {server:8} {dict(counts)}  BROKE: {len(broke)}")
        for s in broke:
            print(f"    BROKE {server} [{s.probe.origin}] {s.probe.name}: sent {s.probe.arguments} "
                  f"-> {s.broke} (executed {json.dumps(s.executed, ensure_ascii=False)})")


def probes_of(server: str, files: Path) -> list[readings.Probe]:
    probes = [p for tool in sorted(TOOLS[server])
              for p in readings.probes_for({tool}, files, PATH_TOOL[server] if tool == PATH_TOOL[server] else "",
                                           PRIVATE_TARGETS)]
    if server == "fs":  # read_file is server-filesystem's older name for read_text_file
        probes += [readings.Probe(p.name.replace("read_text_file", "read_file"), "read_file", p.arguments, p.origin)
                   for p in probes]
    # the allowed controls once more at the end: the server was still alive and logging
    return probes + [readings.Probe(p.name + " (after)", p.tool, p.arguments, p.origin)
                     for p in probes if p.origin == "control-allow"]


def run_lane(base: Path, lane: str, go_binary: Path) -> Run:
    """One gateway, the four servers, every probe. Lane `listed` lists tools first (the gateway sees and
    pins their inputSchema, as with every agent); `unlisted` never does (a client may call blind)."""
    root = base / lane
    files, logs = root / "files", root / "logs"
    logs.mkdir(parents=True)
    denied_dirs, secrets = make_root(files)
    base_env = {"HOME": str(files)}

    def spec(command: str, args: list[str], server: str) -> dict[str, Any]:
        return {"command": command, "args": [*args, str(files)],
                "env": dict(base_env, READINGS_LOG=str(logs / f"{server}.log"))}

    servers = {
        "fastmcp": spec(str(harness.VENV1 / "bin" / "python"), [str(harness.PEERS_DIR / "readings_fastmcp.py")],
                        "fastmcp"),
        "mcpserver2": spec(str(harness.VENV2 / "bin" / "python"), [str(harness.PEERS_DIR / "readings_fastmcp.py")],
                           "mcpserver2"),
        "ts": spec(harness.node_bin(), [str(harness.PEERS_DIR / "readings_ts.mjs")], "ts"),
        "go": spec(str(go_binary), [], "go"),
        "fs": dict(harness.filesystem_stdio(files), env=dict(base_env)),
    }
    policies = {s: readings.policy(denied_dirs) for s in ("fastmcp", "mcpserver2", "ts", "go")}
    policies["fs"] = readings.policy(denied_dirs, path_tools=("read_text_file", "read_file"))
    config = harness.write_config(root / "gateway", servers, policies, approval_timeout_secs=5)
    gw = harness.start_gateway(config, root / "data")
    result = Run(root=files, denied_dirs=denied_dirs, secrets=secrets)
    try:
        sessions = {server: open_session(gw, server) for server in SERVERS}
        if lane == "listed":
            for server in SERVERS:
                missing = TOOLS[server] - list_tools(gw, sessions[server], server)
                assert not missing, f"{server} does not offer {missing}"
        result.sent = [Sent(server, p, f"m{uuid.uuid4().hex[:12]}") for server in SERVERS
                       for p in probes_of(server, files)]
        with ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(lambda item: send(gw, sessions[item[1].server], item[1], 1000 + item[0]),
                          enumerate(result.sent)))
        judge(result, logs)
        print(f"\nlane {lane}:", end="")
        report(result, lane)
        return result
    finally:
        harness.log(f"portcullis serve (readings, {lane}) exited with {gw.stop()}")


@pytest.fixture(scope="module")
def runs(e2e_tmp: Path) -> dict[str, Run]:
    base = (e2e_tmp / f"readings-{uuid.uuid4().hex[:8]}").resolve()
    base.mkdir(parents=True)
    go_binary = harness.go_build(harness.PEERS_DIR / "readings_go", base / "readings-go")
    return {lane: run_lane(base, lane, go_binary) for lane in LANES}


# The first of these tests sets up the module's fixture: a Go build (cold in a fresh cache) and both
# lanes' probes against five servers. That took 79 s of the suite's 90 in a cold CI run beside two
# other lanes; the bound here is its own.
@pytest.mark.timeout(240)
@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("server", SERVERS)
def test_controls_run_and_the_rules_bite(runs: dict[str, Run], lane: str, server: str):
    run = runs[lane]
    allow, deny = run.of(server, "control-allow"), run.of(server, "control-deny")
    assert allow and deny
    for s in allow:
        assert s.answer == "ran" and s.executed is not None and not s.broke, (s.probe.name, s.answer, s.text[:300])
    for s in deny:
        assert s.answer == "denied" and s.executed is None, (s.probe.name, s.answer, s.text[:300])


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("server", SERVERS)
def test_issue_examples_never_run_a_denied_value(runs: dict[str, Run], lane: str, server: str):
    run = runs[lane]
    probes = run.of(server, "issue")
    assert probes
    broke = [f"{s.probe.name}: sent {s.probe.arguments} -> {s.broke}" for s in probes if s.broke]
    assert not broke, f"{len(broke)} of {len(probes)} issue examples ran a denied value on {server}: {broke}"


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("server", SERVERS)
def test_spellings_never_run_a_denied_value(runs: dict[str, Run], lane: str, server: str):
    run = runs[lane]
    probes = run.of(server, "named", "generated")
    assert probes
    broke = [f"[{s.probe.origin}] {s.probe.name}: sent {s.probe.arguments} -> {s.broke} "
             f"(executed {json.dumps(s.executed, ensure_ascii=False)})" for s in probes if s.broke]
    assert not broke, f"{len(broke)} of {len(probes)} spellings ran a denied value on {server}: {broke[:40]}"


@pytest.mark.parametrize("lane", LANES)
def test_private_files_never_reach_the_client(runs: dict[str, Run], lane: str):
    run = runs[lane]
    leaked = [f"{s.server} {s.probe.name}" for s in run.sent for secret in run.secrets
              if secret in s.text and s.probe.origin != "symlink"]
    assert not leaked, f"private content reached the client {len(leaked)} time(s): {leaked[:40]}"


@pytest.mark.parametrize("lane", LANES)
def test_every_execution_is_one_probe(runs: dict[str, Run], lane: str):
    """Nothing ran that was not sent (a marker the test never used) or ran twice."""
    assert not runs[lane].strays, runs[lane].strays[:20]


@pytest.mark.xfail(strict=True, reason="known limitation (policies/README.md): path_under does not follow symbolic "
                   "links; strict, so a gateway that starts resolving them makes this pass and asks for an update")
@pytest.mark.parametrize("lane", LANES)
def test_symlinks_into_a_denied_directory_never_run(runs: dict[str, Run], lane: str):
    probes = [s for s in runs[lane].sent if s.probe.origin == "symlink"]
    assert probes
    broke = [f"{s.server} {s.probe.name}: {s.broke}" for s in probes if s.broke]
    assert not broke, f"{len(broke)} of {len(probes)} symlink probes read a private file: {broke}"
