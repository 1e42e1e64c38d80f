"""`portcullis clients install`: the entry it writes into a client's config really reaches the server
through the gateway. A sample Cursor config names server-everything; after install, the entry is
launched exactly as Cursor would (its command and args, as a stdio MCP server) by an mcp 1.x client,
and the calls are decided and audited by the gateway. Uninstall then puts both files back, byte for byte.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from v1client import first_text, open_session, run

import harness

pytestmark = pytest.mark.gateway


def clients(home: Path, config: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(harness.portcullis_bin()), "clients", *args, "--home", str(home), "--config", str(config),
            "--data-dir", str(data)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


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
