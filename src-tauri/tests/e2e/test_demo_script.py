"""scripts/demo.sh, the README's first command, on the path a new user takes: with no display it
says what to do instead of failing somewhere in GTK; with one it starts the desktop app on
the demo config (copied into its data dir), whose gateway serves the demo servers and whose main
window is on screen.

The app is already built by scripts/test-desktop.sh, so the script's builds are no-ops here."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import MAIN_TITLE, ROOT, McpClient, wait_until, x_viewable, x_window_id

DEMO = ROOT / "scripts/demo.sh"
DEMO_PORT = 7470  # demo/portcullis.template.json listens here


def test_without_a_display_the_demo_says_what_to_do(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PORTCULLIS_HOME"] = str(tmp_path)
    done = subprocess.run(["bash", str(DEMO)], env=env, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert "no display" in done.stderr and "xvfb-run" in done.stderr and "--headless" in done.stderr, done.stderr
    assert not (tmp_path / "gateway.json").exists(), "nothing was started"


def test_the_demo_starts_the_desktop_app_on_the_demo_config(tmp_path: Path) -> None:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", DEMO_PORT)) == 0:
            pytest.skip(f"port {DEMO_PORT} (the demo config's) is taken on this machine")
    env = dict(os.environ, PORTCULLIS_HOME=str(tmp_path / "data"), SKIP_APT="1")
    tracked = tracked_demo_files()
    log = open(tmp_path / "demo.log", "w")
    proc = subprocess.Popen(["bash", str(DEMO)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        gateway = tmp_path / "data" / "gateway.json"
        wait_until(lambda: gateway.exists() or proc.poll() is not None, 100, "the demo's gateway.json")
        assert proc.poll() is None, (tmp_path / "demo.log").read_text()
        info = json.loads(gateway.read_text())
        cmdline = Path(f"/proc/{info['pid']}/cmdline").read_bytes().split(b"\0")
        assert cmdline[0].endswith(b"portcullis-desktop"), cmdline
        assert str(tmp_path / "data/portcullis.json").encode() in cmdline, cmdline
        assert info["url"] == f"http://127.0.0.1:{DEMO_PORT}"
        tools = McpClient(info["url"], info["token"], "everything").request("tools/list", {}, timeout=60)
        names = {t["name"] for t in tools["result"]["tools"]}
        assert "echo" in names, names
        wait_until(lambda: (wid := x_window_id(MAIN_TITLE)) and x_viewable(wid), 30, "the main window on screen")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        log.close()
    assert not (tmp_path / "data" / "gateway.json").exists(), "quitting removes gateway.json"
    # It ran on copies in its data dir: the shipped policies are there, the repository's unchanged.
    assert (tmp_path / "data/policies/everything.json").read_text() == (ROOT / "policies/everything.json").read_text()
    assert (tmp_path / "data/sandbox").is_dir()
    assert tracked_demo_files() == tracked, "the demo left the repository's policies and demo files as they were"


def tracked_demo_files() -> str:
    """git's view of the files the demo is made from: any change, or a new file, is listed."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", "policies", "demo"],
                          cwd=ROOT, capture_output=True, text=True, check=True, timeout=30).stdout
