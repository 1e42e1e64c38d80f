"""The Quick start's headless demo (`scripts/demo.sh --headless`) as a new user runs it: it serves
the demo config from copies in its data dir, its safe demo tool (`demo-notes` / `write_note`)
is held for a person, an "always" decision edits the copy of the policy and never a tracked file,
and a second demo on the same data dir says who serves it instead of failing on the port.
`serve --listen` runs a gateway beside one that holds the config's port."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

import harness
from approvals import ControlApi

pytestmark = pytest.mark.gateway

DEMO = harness.REPO / "scripts/demo.sh"
DEMO_READY = 600  # npm ci of the demo servers on a machine that has not run it yet


def tracked_state() -> tuple[str, dict[str, str]]:
    """`git status --porcelain` of policies/ and demo/, and a digest of every tracked file under them."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(harness.REPO), *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout
    files = git("ls-files", "-z", "policies", "demo").split("\0")
    digests = {f: hashlib.sha256((harness.REPO / f).read_bytes()).hexdigest() for f in files if f}
    # Only the demo's own paths: the desktop lane runs beside this one and rewrites docs/screenshots.
    return git("status", "--porcelain", "--", "policies", "demo"), digests


def session(url: str, token: str, server: str) -> dict[str, str]:
    auth = {"Authorization": f"Bearer {token}"}
    init = harness.http_post(f"{url}/mcp/{server}", harness.INITIALIZE_BODY, auth)
    sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
    headers = {**auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    harness.http_post(f"{url}/mcp/{server}", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def call_in_background(url: str, headers: dict[str, str], arguments: dict[str, Any]) -> tuple[threading.Thread, dict]:
    out: dict[str, Any] = {}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write_note", "arguments": arguments}}

    def run() -> None:
        reply = harness.http_post(f"{url}/mcp/demo-notes", body, headers, timeout=60)
        msgs = [json.loads(reply.body)] if reply.body.lstrip()[:1] == b"{" else \
            [m for m in harness.sse_json_messages(reply.body) if m.get("id") == 7]
        out["answer"] = msgs[0]

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_the_demo_runs_on_copies_and_an_always_decision_leaves_tracked_files_alone(tmp_path: Path) -> None:
    before = tracked_state()
    data = tmp_path / "data"
    demo = harness.Proc("demo.sh --headless", ["bash", str(DEMO), "--headless", "--listen", "127.0.0.1:0"],
                        env={"PORTCULLIS_HOME": str(data), "SKIP_APT": "1"}, cwd=harness.REPO)
    try:
        demo.wait_for_line(r"portcullis: ready on", DEMO_READY)
        info = json.loads((data / "gateway.json").read_text())
        url, token = info["url"], info["token"]
        assert url != "http://127.0.0.1:7470", "--listen 127.0.0.1:0 took a free port, not the config's"
        assert (data / "portcullis.json").is_file() and (data / "policies/demo-notes.json").is_file()

        api = ControlApi(url, token)
        approver = api.subscribe()
        approver.wait_attached()
        try:
            headers = session(url, token, "demo-notes")
            thread, out = call_in_background(url, headers, {"title": "first", "text": "held, then approved"})
            held = api.wait_pending(lambda p: [a for a in p if a["tool"] == "write_note"], 20, "write_note held")
            assert held[0]["server"] == "demo-notes"
            assert api.approve(held[0]["id"], "always").status == 200
            thread.join(30)
            text = out["answer"]["result"]["content"][0]["text"]
            assert text == f"wrote {data / 'notes' / 'first.txt'}", out
            assert (data / "notes/first.txt").read_text() == "held, then approved\n"

            # "always" is written into the copy: the next call goes through without a person.
            copy = json.loads((data / "policies/demo-notes.json").read_text())
            shipped = json.loads((harness.REPO / "demo/policies/demo-notes.json").read_text())
            assert copy != shipped, "the always decision is recorded in the data dir's copy"
            thread, out = call_in_background(url, headers, {"title": "second", "text": "no prompt"})
            thread.join(30)
            assert "wrote" in out["answer"]["result"]["content"][0]["text"], out
        finally:
            approver.close()

        # A second demo on the same data dir names the one running rather than failing on the port.
        again = subprocess.run(["bash", str(DEMO), "--headless"], env={**os.environ, "PORTCULLIS_HOME": str(data),
                               "SKIP_APT": "1"}, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert again.returncode == 1, again
        assert f"pid {info['pid']}" in again.stderr and "--listen 127.0.0.1:0" in again.stderr, again.stderr
    finally:
        demo.stop()
    assert tracked_state() == before, "the demo changed tracked files"
    assert not (data / "gateway.json").exists(), "stopping the demo removes gateway.json"


def test_serve_listen_runs_beside_a_gateway_that_holds_the_config_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = harness.write_config(tmp_path, {}, {}, extra={"listen": f"127.0.0.1:{port}"})
        serve = [str(harness.portcullis_bin()), "serve", "--config", str(config)]

        busy = subprocess.run([*serve, "--data-dir", str(tmp_path / "a")], capture_output=True, text=True, timeout=30)
        assert busy.returncode == 1 and "in use" in busy.stderr, busy

        remote = subprocess.run([*serve, "--data-dir", str(tmp_path / "b"), "--listen", "0.0.0.0:0"],
                                capture_output=True, text=True, timeout=30)
        assert remote.returncode == 1 and "not a loopback address" in remote.stderr, remote
        assert not (tmp_path / "b/gateway.json").exists()

        beside = harness.Proc("serve --listen", [*serve, "--data-dir", str(tmp_path / "c"), "--listen", "127.0.0.1:0"])
        try:
            line = beside.wait_for_line(r"ready on http://127\.0\.0\.1:(\d+)", 30)
            assert int(line.group(1)) not in (0, port), line.string
            info = json.loads((tmp_path / "c/gateway.json").read_text())
            assert info["url"] == f"http://127.0.0.1:{line.group(1)}"
            status = ControlApi(info["url"], info["token"]).request("GET", "/control/status")
            assert status.status == 200 and status.json()["audit"]["ok"] is True, status
        finally:
            beside.stop()
