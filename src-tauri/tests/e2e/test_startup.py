"""Starting the app when something is wrong: the main window opens on the reason instead of the
app dying, and the app recovers by itself once the cause is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import (APP_BIN, CLI_BIN, MAIN_TITLE, App, app_pids, launch, refresh_handles, stop_process, wait_until,
                      write_config, x_viewable, x_window_id)


def main_window_opens_by_itself(app: App) -> None:
    wait_until(lambda: app.driver.window_handles, 20, "the main window to open by itself")
    refresh_handles(app)
    app.window("main")


def error_banner(app: App, text: str) -> str:
    def find() -> str | None:
        for banner in app.driver.find_elements(By.CSS_SELECTOR, ".banner.error"):
            if text in banner.text:
                return banner.text
        return None

    return wait_until(find, 15, f"an error banner saying {text!r}")


def test_a_broken_config_opens_the_window_on_the_reason_and_a_fix_starts_the_gateway(scratch: Path) -> None:
    config = write_config(scratch)
    good = config.read_text()
    config.write_text('{"listen": 7470, "mcpServers": {}}')
    with launch(scratch, config, show=False, wait_for_gateway=False) as app:
        main_window_opens_by_itself(app)
        banner = error_banner(app, "config file is invalid")
        assert "$.listen" in banner, f"the reason names the JSON path: {banner}"
        app.screenshot("startup-error", MAIN_TITLE)
        assert not (app.data_dir / "gateway.json").exists()
        config.write_text(good)
        wait_until(lambda: (app.data_dir / "gateway.json").exists(), 15, "the gateway to start once the file is fixed")
        app.window("main")
        app.wait_testid("approvals-empty")
        wait_until(lambda: not app.driver.find_elements(By.CSS_SELECTOR, ".banner.error"), 10, "the error to go")


def test_the_app_started_while_portcullis_serve_runs_takes_over_and_a_connected_client_carries_on(
        scratch: Path) -> None:
    """Issue 14 point 4: no "already running" dead end. The app stops the serve it finds (SIGTERM),
    hosts the gateway itself, and a client connected through `portcullis connect` before the app
    started gets its next call answered by the app's gateway."""
    assert CLI_BIN.exists(), f"{CLI_BIN} is missing: cargo build -p portcullis"
    config = write_config(scratch)
    data = scratch / "data"
    serve = subprocess.Popen([str(CLI_BIN), "serve", "--config", str(config), "--data-dir", str(data)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    relay = None
    try:
        gateway_pid = lambda: json.loads((data / "gateway.json").read_text())["pid"]  # noqa: E731
        wait_until(lambda: gateway_pid() == serve.pid, 20, "portcullis serve to be ready")
        server = next(iter(json.loads(config.read_text())["mcpServers"]))
        relay = subprocess.Popen([str(CLI_BIN), "connect", server, "--data-dir", str(data), "--config", str(config)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

        def ask(rid: int, method: str) -> dict:
            relay.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": {}}) + "\n").encode())
            relay.stdin.flush()
            return json.loads(relay.stdout.readline())

        assert "result" in ask(1, "tools/list"), "the client works through the serve"
        # With its main window (WebDriver attaches to a web view), which must show no error.
        with launch(scratch, config, wait_for_gateway=False) as app:
            serve.wait(timeout=20)  # stopped by the app, not by this test
            wait_until(lambda: gateway_pid() in app_pids(scratch), 20, "the app to host the gateway for the data dir")
            answer = ask(2, "tools/list")
            assert answer.get("id") == 2 and "result" in answer, f"the connected client carried on: {answer}"
            assert not app.driver.find_elements(By.CSS_SELECTOR, ".banner.error"), "no error shown"
    finally:
        if relay is not None:
            relay.stdin.close()
            stop_process(relay)
        stop_process(serve)


def test_an_invalid_policy_opens_the_servers_view_on_it(scratch: Path) -> None:
    config = write_config(scratch)
    (scratch / "policies" / "everything.json").write_text('{"version": "1", "default": "maybe"}')
    with launch(scratch, config, show=False) as app:
        main_window_opens_by_itself(app)
        wait_until(lambda: app.find("tab-servers").get_attribute("aria-selected") == "true", 10, "the servers tab")
        card = wait_until(lambda: "policy invalid" in app.find("server-card").text and app.find("server-card"), 15,
                          "the server's policy shown invalid")
        assert "default" in card.text, f"the problem is shown: {card.text}"


def test_a_second_start_from_another_dbus_session_shows_the_running_app(scratch: Path) -> None:
    """The single-instance plugin sees only its own D-Bus session; a start from another one (a
    second `dbus-run-session`, as scripts/demo.sh makes) must bring the running app forward, not
    open a window that says "already running"."""
    config = write_config(scratch)
    data = scratch / "data"
    first_log = open(scratch / "first.log", "w")
    first = subprocess.Popen(["dbus-run-session", "--", str(APP_BIN), "--config", str(config), "--data-dir", str(data)],
                             stdout=first_log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        info = wait_until(lambda: json.loads((data / "gateway.json").read_text()), 30, "the first app's gateway")
        assert x_window_id(MAIN_TITLE) is None, "the first app starts in the tray"
        second = subprocess.run([str(APP_BIN), "--config", str(config), "--data-dir", str(data), "--show"],
                                capture_output=True, text=True, timeout=40)
        assert second.returncode == 0, second
        wait_until(lambda: (wid := x_window_id(MAIN_TITLE)) and x_viewable(wid), 20, "the first app's main window")
        assert json.loads((data / "gateway.json").read_text())["pid"] == info["pid"], "the first app still serves"
        assert "already running: showed its window" in (data / "desktop.log").read_text()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGTERM)
        try:
            first.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(5)
        first_log.close()
