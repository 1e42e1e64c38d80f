"""Three things of the main window, end to end on the real app, its gateway and real files (no mock
backend): a client routed through Portcullis and put back from the Clients panel, a grant revoked
from the grants list, and start at login from Settings.

Its own app, started with a scratch client home (PORTCULLIS_CLIENTS_HOME, as the CLI's --home),
a scratch XDG_CONFIG_HOME (where the autostart entry goes) and PORTCULLIS_BIN (the portcullis the
client is made to launch). Every wait is bounded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from conftest import APP_BIN, CLI_BIN, EVERYTHING, ROOT, App, launch, wait_until, write_config
from test_prompt import control, held, marker, show


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    scratch = tmp_path_factory.mktemp("portcullis-workbench-e2e-")
    env = {"PORTCULLIS_CLIENTS_HOME": str(scratch / "home"), "XDG_CONFIG_HOME": str(scratch / "xdg"),
           "PORTCULLIS_BIN": str(CLI_BIN)}
    (scratch / "home").mkdir()
    (scratch / "xdg").mkdir()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the app inherits them through tauri-driver and WebKitWebDriver
    try:
        with launch(scratch, write_config(scratch)) as the_app:
            the_app.window("main")
            yield the_app
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def tab(app: App, name: str) -> None:
    app.window("main")
    app.click(f"tab-{name}")


def autostart_entry(app: App) -> Path:
    return app.scratch / "xdg" / "autostart" / "portcullis.desktop"


def test_start_at_login_writes_the_autostart_entry_and_removes_it(bench: App) -> None:
    entry = autostart_entry(bench)
    assert not entry.exists()
    tab(bench, "settings")
    box = bench.wait_testid("setting-autostart")
    wait_until(lambda: box.is_enabled(), 15, "the autostart state to load")
    assert not box.is_selected()
    box.click()
    text = wait_until(lambda: entry.exists() and entry.read_text(), 10, "the autostart entry")
    assert text.startswith("[Desktop Entry]\n") and "Type=Application\n" in text, text
    exec_line = next(line for line in text.splitlines() if line.startswith("Exec="))
    assert exec_line == f'Exec="{APP_BIN.resolve()}"', exec_line
    assert not bench.find_all("setting-autostart-error")

    # What is shown is read back from the file after a reload.
    bench.driver.refresh()
    tab(bench, "settings")
    wait_until(lambda: bench.find("setting-autostart").is_selected(), 15, "on after a reload")

    bench.find("setting-autostart").click()
    wait_until(lambda: not entry.exists(), 10, "the autostart entry to go")
    assert not list(entry.parent.iterdir()), "nothing else left in autostart/"
    bench.driver.refresh()
    tab(bench, "settings")
    box = bench.wait_testid("setting-autostart")
    wait_until(lambda: box.is_enabled(), 15, "the autostart state to load")  # disabled until read
    assert not bench.find("setting-autostart").is_selected()


def test_a_revoked_grant_no_longer_spares_the_call(bench: App) -> None:
    client = bench.client()
    m = marker()
    first = bench.call_async(client, "echo", {"message": m})
    show(bench, m)
    bench.decide("approve-session")
    assert not first.result(timeout=30).get("isError")
    # The same call again: the session grant lets it through without a prompt.
    again = client.call_tool("echo", {"message": m}, timeout=20)
    assert not again.get("isError"), again
    grants = [g for g in control(bench, "GET", "/control/grants") if g["tool"] == "echo"]
    assert len(grants) == 1, grants

    tab(bench, "approvals")
    row = wait_until(lambda: next((r for r in bench.find_all("grant") if r.get_attribute("data-id") == grants[0]["id"]),
                                  None), 15, "the grant in the list")
    assert "echo" in row.text and "session" in row.text, row.text
    row.find_element("css selector", '[data-testid="grant-revoke"]').click()
    wait_until(lambda: not any(r.get_attribute("data-id") == grants[0]["id"] for r in bench.find_all("grant")), 10,
               "the grant to leave the list")
    assert not [g for g in control(bench, "GET", "/control/grants") if g["tool"] == "echo"]

    # The next identical call is held again: a prompt.
    third = bench.call_async(client, "echo", {"message": m})
    held(bench, m)
    wait_until(bench.prompt_viewable, 15, "the prompt on screen")
    show(bench, m)
    bench.decide("deny")
    assert third.result(timeout=30).get("isError") is True


def test_install_routes_a_client_through_portcullis_and_uninstall_puts_its_file_back(bench: App) -> None:
    cursor = bench.scratch / "home" / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    original = json.dumps({"mcpServers": {"notes": {"command": "node", "args": [str(EVERYTHING), "stdio"],
                                                    "cwd": str(ROOT / "demo")}}}, indent=2) + "\n"
    cursor.write_text(original)
    tab(bench, "servers")
    state = bench.wait_testid("client-state-cursor")
    wait_until(lambda: "1 server, 0 through Portcullis" in state.text, 15, "Cursor's file to be read")
    # Pressed through the DOM: the Servers view above the panel grows as the routed server
    # connects, and a native click once landed beside "Uninstall" (nothing was undone).
    bench.press("install-cursor")
    preview = bench.wait_testid("client-preview", timeout=60)
    assert "connect" in preview.text and "notes" in preview.text, preview.text
    bench.press("client-confirm")
    wait_until(lambda: bench.find("client-cursor").get_attribute("data-installed") == "true", 60,
               "the panel to show Cursor installed")
    assert "installed: 1 of 1 through Portcullis" in bench.find("client-state-cursor").text
    entry = json.loads(cursor.read_text())["mcpServers"]["notes"]
    assert entry["command"] == str(CLI_BIN) and entry["args"][:2] == ["connect", "notes"], entry
    assert "notes" in json.loads((bench.scratch / "portcullis.json").read_text())["mcpServers"]

    bench.press("uninstall-cursor")
    bench.wait_testid("client-preview")
    assert bench.find("client-confirm").text == "Uninstall", bench.find("clients").text
    bench.press("client-confirm")
    try:
        wait_until(lambda: bench.find("client-cursor").get_attribute("data-installed") == "false", 30,
                   "the panel to show Cursor not installed")
    except AssertionError as e:
        raise AssertionError(f"{e}; the panel says: {bench.find('clients').text!r}") from None
    assert cursor.read_text() == original, "the file is back byte for byte"
    wait_until(lambda: "1 server, 0 through Portcullis" in bench.find("client-state-cursor").text, 10,
               "the panel to show the file as it was")
