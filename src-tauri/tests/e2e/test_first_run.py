"""The first screen of a new install, on the real app: with nothing held and nothing audited it lists
each client found (here a Claude Code config with one server, not routed) and shows the exact command
that routes it through this gateway (its config and data dir included) with a working copy button,
and "Try a held call" calls the demo's safe `write_note` through the gateway, so the real prompt
opens; approving it there writes the note and the answer shows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import CLI_BIN, ROOT, App, free_port, launch, wait_until

NOTES_SERVER = ROOT / "demo/notes_server.py"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """An app on a config with the demo's notes server and its shipped policy, nothing audited yet."""
    scratch = tmp_path_factory.mktemp("first-run")
    (scratch / "policies").mkdir()
    shutil.copy(ROOT / "demo/policies/demo-notes.json", scratch / "policies")
    config = scratch / "portcullis.json"
    config.write_text(json.dumps({
        "listen": f"127.0.0.1:{free_port()}",
        "policies": "policies",
        "approval": {"timeout_secs": 60},
        "mcpServers": {"demo-notes": {"command": sys.executable, "args": [str(NOTES_SERVER), str(scratch / "notes")]}},
    }))
    # The clients' files are looked for here, not in the real home (the app reads this variable).
    home = scratch / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}}))
    before = os.environ.get("PORTCULLIS_CLIENTS_HOME")
    os.environ["PORTCULLIS_CLIENTS_HOME"] = str(home)
    try:
        with launch(scratch, config) as the_app:
            the_app.window("main")
            yield the_app
    finally:
        if before is None:
            os.environ.pop("PORTCULLIS_CLIENTS_HOME", None)
        else:
            os.environ["PORTCULLIS_CLIENTS_HOME"] = before


def test_the_first_screen_shows_the_exact_commands_and_copies_them(fresh: App) -> None:
    install = fresh.wait_testid("first-run-install-command", 20).text
    config, data = fresh.scratch / "portcullis.json", fresh.data_dir
    assert install == f"{CLI_BIN.resolve()} clients install claude-code --config {config} --data-dir {data}", install
    assert fresh.find("first-run-client-claude-code").text == "Claude Code: not routed (1 server)"
    assert "scripts/" not in fresh.find("first-run").text, "no repository script is offered"
    connect = fresh.find("first-run-connect-command").text
    assert connect == f"{CLI_BIN.resolve()} connect SERVER --config {config} --data-dir {data}", connect
    fresh.click("copy-install")
    wait_until(lambda: fresh.find("copy-install").text == "Copied", 10, "the copy button to say Copied")
    fresh.screenshot("first-run", "Portcullis")


def test_try_a_held_call_opens_the_prompt_and_the_approved_call_writes_the_note(fresh: App) -> None:
    fresh.window("main")
    fresh.click("try-held-call")
    wait_until(fresh.prompt_viewable, 20, "the prompt window on screen")
    fresh.window("prompt")
    assert fresh.wait_testid("prompt-server").text == "demo-notes"
    assert fresh.find("prompt-tool").text == "write_note"
    fresh.decide("approve-once")
    wait_until(lambda: not fresh.prompt_viewable(), 10, "the prompt to hide")
    fresh.window("main")
    answer = fresh.wait_testid("try-answer", 20).text
    notes = list((fresh.scratch / "notes").glob("first-held-call-*.txt"))
    assert len(notes) == 1, notes
    assert f"wrote {notes[0]}" in answer, answer
    assert "waited for your decision" in notes[0].read_text()
    # The call was decided by a person and recorded like any other.
    rows = json.loads(subprocess.run(
        [str(CLI_BIN), "audit", "--data-dir", str(fresh.data_dir), "--format", "json"],
        capture_output=True, text=True, check=True, timeout=20).stdout)
    assert [(r["server"], r["tool"], r["decision"]) for r in rows] == [("demo-notes", "write_note", "approved")], rows
    # The first screen stays for its answer; the recent decisions list the call.
    assert "write_note" in fresh.find("recent-list").text
