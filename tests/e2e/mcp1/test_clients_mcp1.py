"""`portcullis clients install`: the entry it writes into a client's config really reaches the server
through the gateway. A sample Cursor config names server-everything; after install, the entry is
launched exactly as Cursor would (its command and args, as a stdio MCP server) by an mcp 1.x client,
and the calls are decided and audited by the gateway. Uninstall then puts both files back, byte for byte.

Install also writes the starter policy of each routed server that has none — the file `policy init`
writes, from the server's live tool list — and shows it tool by tool in the preview; `--no-policy`
skips it; a server that cannot start is named, gets no file, and so asks for every call.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from v1client import assert_denial, first_text, open_session, run

import harness

pytestmark = pytest.mark.gateway


def clients(home: Path, config: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(harness.portcullis_bin()), "clients", *args, "--home", str(home), "--config", str(config),
            "--data-dir", str(data)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL)


def policy_init_stdout(config: Path, server: str) -> dict:
    argv = [str(harness.portcullis_bin()), "policy", "init", server, "--config", str(config), "--stdout"]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def gateway_config(path: Path) -> Path:
    """A `portcullis.json` on a free port and no policies directory (what a new user has)."""
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"listen": "127.0.0.1:0", "policies": "policies", "mcpServers": {}}, indent=2) + "\n")
    return path


def rule_text(entry: dict) -> str:
    """The RULE column of the preview for a policy entry."""
    if "rate_limit" in entry:
        limit = entry["rate_limit"]
        return f"{entry['action']}, {limit['max']}/{limit['window']}s"
    return entry["action"]


def test_installed_cursor_entry_reaches_the_server_through_the_gateway(e2e_tmp: Path):
    root = e2e_tmp / "clients-cursor"
    home, data = root / "home", root / "data"
    cursor_file = home / ".cursor" / "mcp.json"
    cursor_file.parent.mkdir(parents=True)
    everything = harness.everything_stdio()
    cursor_text = json.dumps({"mcpServers": {"everything": {"command": everything["command"],
                                                            "args": everything["args"]}}}, indent=2) + "\n"
    cursor_file.write_text(cursor_text)
    # The gateway's own config exists already (a free port); install adds to it.
    config = root / "gateway" / "portcullis.json"
    (config.parent / "policies").mkdir(parents=True)
    config_text = json.dumps({"listen": "127.0.0.1:0", "policies": "policies", "mcpServers": {}}, indent=2) + "\n"
    config.write_text(config_text)
    (config.parent / "policies" / "everything.json").write_text(json.dumps(
        {"version": "1", "default": "deny", "tools": {"echo": {}}}))

    r = clients(home, config, data, "install", "cursor", "--yes")
    assert r.returncode == 0, r.stderr
    assert "everything.json: exists, kept as it is" in r.stdout, r.stdout
    entry = json.loads(cursor_file.read_text())["mcpServers"]["everything"]
    assert entry["args"][:2] == ["connect", "everything"], entry
    assert json.loads(config.read_text())["mcpServers"]["everything"]["args"] == everything["args"]

    gw = harness.start_gateway(config, data)
    m = "m" + uuid.uuid4().hex[:12]
    try:
        async def body():
            spec = {"command": entry["command"], "args": entry["args"], "env": {}}
            async with open_session("direct", "everything", spec) as (s, init):
                tools = await s.list_tools()
                echoed = await s.call_tool("echo", {"message": m})
                refused = await s.call_tool("get-sum", {"a": 1, "b": 2})
            return init, tools, echoed, refused

        init, tools, echoed, refused = run(body)
        assert init.serverInfo.name, "initialize went through to server-everything"
        assert "echo" in {t.name for t in tools.tools}
        assert first_text(echoed) == f"Echo: {m}"
        assert refused.isError and first_text(refused).startswith(harness.DENIAL_PREFIX), \
            "the gateway's policy decides the client's calls"
        (row,) = gw.audit_rows_for("everything", "echo", m)
        assert row["decision"] == "allowed"
    finally:
        gw.stop()

    r = clients(home, config, data, "uninstall", "cursor", "--yes")
    assert r.returncode == 0, r.stderr
    assert cursor_file.read_text() == cursor_text, "Cursor's file is back, byte for byte"
    assert config.read_text() == config_text, "portcullis.json is back, byte for byte"


def test_install_writes_each_servers_starter_policy_shown_tool_by_tool(e2e_tmp: Path):
    root = e2e_tmp / "clients-starter"
    home, data = root / "home", root / "data"
    fs_root = root / "fsroot"
    fs_root.mkdir(parents=True)
    (fs_root / "hello.txt").write_text("hello from clients install\n")
    specs = {"everything": harness.everything_stdio(), "filesystem": harness.filesystem_stdio(fs_root),
             "dead": {"command": str(root / "no-such-server"), "args": []}}
    claude_file = home / ".claude.json"
    home.mkdir(parents=True)
    claude_file.write_text(json.dumps({"numStartups": 1, "mcpServers": {
        name: {"type": "stdio", "command": spec["command"], "args": spec["args"]} for name, spec in specs.items()}}))
    config = gateway_config(root / "gateway" / "portcullis.json")
    policies = config.parent / "policies"

    dry = clients(home, config, data, "install", "claude-code", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert not policies.exists(), "a dry run writes nothing"
    assert 'dead.json: not written: cannot start "dead" to list its tools' in dry.stdout, dry.stdout
    assert "every call to dead asks you" in dry.stdout, dry.stdout

    done = clients(home, config, data, "install", "claude-code", "--yes")
    assert done.returncode == 0, done.stderr
    assert "no policy for dead: every call to it asks you" in done.stderr, done.stderr
    assert sorted(p.name for p in policies.iterdir()) == ["everything.json", "filesystem.json"]
    for server in ("everything", "filesystem"):
        written = json.loads((policies / f"{server}.json").read_text())
        assert written == policy_init_stdout(config, server), f"{server}: the file policy init writes"
        rows = {line.split()[0]: line.split() for line in dry.stdout.splitlines() if line.startswith("    ")}
        for tool, entry in written["tools"].items():
            assert tool in rows, f"{server}: the preview lists {tool}:\n{dry.stdout}"
            cls, risk, rule = rows[tool][1], rows[tool][2], " ".join(rows[tool][3:])
            assert (cls, risk, rule) == (entry["class"], entry["risk"], rule_text(entry)), (tool, rows[tool], entry)
    fs = json.loads((policies / "filesystem.json").read_text())["tools"]
    assert fs["read_text_file"]["action"] == "allow" and fs["write_file"]["action"] == "require_approval", fs

    # In force at the gateway's start: the read runs, the write is held (no approver: refused).
    entry = json.loads(claude_file.read_text())["mcpServers"]["filesystem"]
    gw = harness.start_gateway(config, data)
    m = "m" + uuid.uuid4().hex[:12]
    try:
        async def body():
            spec = {"command": entry["command"], "args": entry["args"], "env": {}}
            async with open_session("direct", "filesystem", spec) as (s, _):
                read = await s.call_tool("read_text_file", {"path": str(fs_root / "hello.txt"), "marker": m})
                held = await s.call_tool("write_file", {"path": str(fs_root / f"{m}.txt"), "content": m})
            return read, held

        read, held = run(body)
        assert "hello from clients install" in first_text(read)
        assert_denial(held, "requires approval")
        assert not (fs_root / f"{m}.txt").exists(), "a held write must not run"
        (row,) = gw.audit_rows_for("filesystem", "write_file", m)
        assert row["rule"] == "tools.write_file", row.raw
    finally:
        gw.stop()


def test_no_policy_routes_without_starting_a_server_or_writing_a_policy(e2e_tmp: Path):
    root = e2e_tmp / "clients-no-policy"
    home, data = root / "home", root / "data"
    cursor_file = home / ".cursor" / "mcp.json"
    cursor_file.parent.mkdir(parents=True)
    everything = harness.everything_stdio()
    cursor_file.write_text(json.dumps({"mcpServers": {"everything": {"command": everything["command"],
                                                                      "args": everything["args"]}}}))
    config = gateway_config(root / "gateway" / "portcullis.json")

    r = clients(home, config, data, "install", "cursor", "--yes", "--no-policy")
    assert r.returncode == 0, r.stderr
    assert "everything.json: not written (--no-policy)" in r.stdout, r.stdout
    assert "starting" not in r.stderr, f"no server is started: {r.stderr}"
    assert "no policy for everything: every call to it asks you" in r.stderr, r.stderr
    policies = config.parent / "policies"
    assert policies.is_dir() and list(policies.iterdir()) == [], "the directory is made, empty"
    assert json.loads(cursor_file.read_text())["mcpServers"]["everything"]["args"][0] == "connect"
