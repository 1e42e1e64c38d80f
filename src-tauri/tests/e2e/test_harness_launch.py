"""The harness's own check that a launch waits for the gateway of the app it started, not for a
gateway.json a killed app left behind (conftest `_new_session` kills a half-started app when
WebKitWebDriver drops the session request, and retries). No app is started here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import App, _gateway_of_this_app, stop_process, wait_until


def write_gateway(scratch: Path, pid: int) -> None:
    (scratch / "data").mkdir(exist_ok=True)
    (scratch / "data" / "gateway.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "token": "t", "pid": pid}))


def test_only_the_running_apps_gateway_json_counts(tmp_path: Path):
    app = App(driver=None, scratch=tmp_path)
    assert not _gateway_of_this_app(app), "no file yet"
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gateway.json").write_text('{"url": "http://127.0.0.1:9", "tok')
    assert not _gateway_of_this_app(app), "a file caught half-written"
    write_gateway(tmp_path, os.getpid())
    assert not _gateway_of_this_app(app), "a pid that is not this scratch dir's app"
    # A stand-in whose command line reads as the app's (what app_pids looks for).
    stand_in = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()",
                                 f"portcullis-desktop --config {tmp_path}/portcullis.json"], stdin=subprocess.PIPE)
    try:
        write_gateway(tmp_path, stand_in.pid)
        wait_until(lambda: _gateway_of_this_app(app), 10, "the stand-in's gateway.json to count")
    finally:
        stop_process(stand_in)
    assert not _gateway_of_this_app(app), "the app that wrote it is gone: a stale file"
