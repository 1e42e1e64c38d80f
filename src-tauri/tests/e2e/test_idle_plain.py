"""The app as a person runs it, without WebDriver: once no web view is left, it ends WebKit's
network process too, so idle in the tray it is one process; the next held call still raises a
prompt that paints and decides (WebKit starts a new network process for it).

Without WebDriver because WebKit ends a WebDriver session with the network process, so the app
keeps it while automated (src-tauri/src/webkit.rs)."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import APP_BIN, CLI_BIN, PROMPT_TITLE, McpClient, result_text, wait_until, write_config, x_viewable, x_window_id
from test_memory import memory_kib, mib, webkit_processes

# The prompt lingers hidden for 30 s (PROMPT_LINGER), then the network process for 30 s more
# (NETWORK_LINGER); the bound leaves room for a slow machine.
IDLE_TIMEOUT = 30 + 30 + 60


def held_call_denied(client: McpClient, data: Path, pool: ThreadPoolExecutor, n: int, cli: Path = CLI_BIN) -> float:
    """A held call: its prompt comes on screen, it is denied with the CLI, the agent is told.
    Returns the ms from the call to the prompt on screen."""
    sent = time.monotonic()
    answer = pool.submit(client.call_tool, "get-sum", {"a": n, "b": 1})
    wait_until(lambda: (w := x_window_id(PROMPT_TITLE)) and x_viewable(w), 30, "the prompt on screen")
    shown = (time.monotonic() - sent) * 1000
    listed = subprocess.run([str(cli), "approvals", "list", "--json", "--data-dir", str(data)],
                            capture_output=True, text=True, check=True, timeout=30)
    held = json.loads(listed.stdout)[0]["id"]
    subprocess.run([str(cli), "approvals", "deny", held, "--data-dir", str(data)], capture_output=True,
                   check=True, timeout=30)
    result = answer.result(timeout=30)
    assert result.get("isError") and "denied" in result_text(result).lower(), result
    return shown


def test_idle_with_no_web_view_the_app_is_one_process_and_the_next_prompt_works(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    data = tmp_path / "data"
    log = (tmp_path / "app.log").open("w")
    app = subprocess.Popen([str(APP_BIN), "--config", str(config), "--data-dir", str(data)], stdout=log, stderr=log)
    try:
        info = wait_until(lambda: json.loads((data / "gateway.json").read_text()), 60, "the gateway")
        assert webkit_processes(app.pid) == 0, "no web view, no WebKit process, before any window"
        client = McpClient(info["url"], info["token"], "everything")
        with ThreadPoolExecutor(2) as pool:
            held_call_denied(client, data, pool, 1)
            assert webkit_processes(app.pid) >= 2, "the prompt has its web process and the network process"
            wait_until(lambda: webkit_processes(app.pid) == 0, IDLE_TIMEOUT, "no WebKit process left")
            time.sleep(2)  # a measurement pause after the state was reached, not a synchronisation
            idle = memory_kib(app.pid)
            print(f"\nidle in the tray after a prompt, its web view and network process ended: {mib(idle)}")
            assert idle["processes"] == 1, idle
            # A new network process for the next prompt.
            held_call_denied(client, data, pool, 2)
        log.flush()
        assert "panicked" not in (tmp_path / "app.log").read_text()
    finally:
        app.terminate()
        app.wait(timeout=30)
        log.close()
