#!/usr/bin/env python3
"""The installed package at work (run by scripts/test-package.sh under Xvfb and a D-Bus session):
the app from /usr/bin starts on a scratch config (given by relative paths), opens its main window, hosts the gateway
(gateway.json appears, GET /control/status answers), and an MCP client reaches a server through
the installed `portcullis connect`. Standard library only; every wait is bounded.

    check_installed.py SCRATCH_DIR NOTES_SERVER_PY [APP CLI [LIBS_UNDER]]

APP and CLI default to the .deb's /usr/bin/portcullis-desktop and /usr/bin/portcullis; for the
AppImage they are the AppImage itself and a `portcullis` symlink to it. With LIBS_UNDER (the
AppImage's extraction), the app must have mapped libwebkit2gtk-4.1, GTK and AppIndicator, and its
WebKitWebProcess libwebkit2gtk-4.1, from under that directory: the copies the AppImage carries,
not the system's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

APP = "/usr/bin/portcullis-desktop"
CLI = "/usr/bin/portcullis"
START_WAIT = 60.0


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"check_installed: timed out after {timeout:.0f} s waiting for {what}")


def gateway_info(data: Path):
    try:
        info = json.loads((data / "gateway.json").read_text())
    except (OSError, ValueError):
        return None
    return info if info.get("url") and info.get("token") else None


def main_window_shown() -> bool:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True, timeout=10).stdout
    return any('"Portcullis":' in line for line in tree.splitlines())


def mapped(pid: int, prefix: str) -> list[str]:
    """The files whose name starts with `prefix` that process `pid` has mapped."""
    try:
        lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:
        return []
    paths = {fields[5] for fields in (line.split(maxsplit=5) for line in lines) if len(fields) == 6}
    return sorted(p for p in paths if Path(p).name.startswith(prefix))


def web_processes(parent: int) -> list[int]:
    """The WebKitWebProcess children of `parent` (WebKitGTK starts them from the app's process)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            exe = os.readlink(stat.parent / "exe")
        except OSError:
            continue
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        if ppid == parent and Path(exe).name == "WebKitWebProcess":
            found.append(int(stat.parent.name))
    return found


# What the app itself must have mapped from the AppImage: WebKitGTK, GTK, and the tray's
# AppIndicator (loaded with dlopen when the tray icon is made).
APP_LIBRARIES = ["libwebkit2gtk-4.1", "libjavascriptcoregtk-4.1", "libgtk-3", "libayatana-appindicator3"]


def check_libraries_under(pid: int, under: str) -> None:
    """The app `pid` and its WebKitWebProcess map WebKitGTK (and the app GTK, AppIndicator) from
    under `under` only, and the web process runs from there."""
    under = under.rstrip("/") + "/"
    found = {lib: wait_until(lambda lib=lib: mapped(pid, lib), 30, f"the app mapping {lib}") for lib in APP_LIBRARIES}
    web = wait_until(lambda: [(p, m) for p in web_processes(pid) if (m := mapped(p, "libwebkit2gtk-4.1"))], 30,
                     "a WebKitWebProcess of the app mapping libwebkit2gtk-4.1")
    checks = [(f"the app ({pid})", maps) for maps in found.values()] + [(f"WebKitWebProcess {p}", m) for p, m in web]
    for who, maps in checks:
        outside = [m for m in maps if not m.startswith(under)]
        assert not outside, f"{who} maps {outside} from outside the AppImage's {under}"
    for p, _ in web:
        exe = os.readlink(f"/proc/{p}/exe")
        assert exe.startswith(under), f"WebKitWebProcess {p} runs {exe}, not the AppImage's"
    print(f"check_installed: the app maps {', '.join(APP_LIBRARIES)} and its WebKitWebProcess "
          f"({', '.join(str(p) for p, _ in web)}) libwebkit2gtk-4.1, all from {under}")


def mcp_through_connect(cli: str, data: Path) -> str:
    """initialize, initialized and tools/call list_notes through `portcullis connect notes`."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pkg-test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_notes", "arguments": {}}},
    ]
    relay = subprocess.Popen([cli, "connect", "notes", "--data-dir", str(data)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for msg in lines:
            relay.stdin.write(json.dumps(msg) + "\n")
        relay.stdin.flush()
        for _ in range(2):
            answer = json.loads(relay.stdout.readline())
        return answer["result"]["content"][0]["text"]
    finally:
        relay.stdin.close()
        try:
            relay.wait(10)
        except subprocess.TimeoutExpired:
            relay.kill()


def check_server_environment(notes_server: str, cwd: Path, image_under: str | None) -> None:
    """The server the app started runs in the caller's directory, and from the AppImage without
    the image's library paths (AppRun's changes are undone for children)."""
    def runs_server(proc: Path) -> bool:
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return len(argv) > 1 and argv[1] == notes_server.encode()  # python3 notes_server.py DIR
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and runs_server(p)]
    assert pids, f"no process runs {notes_server}"
    for pid in pids:
        env = dict(kv.split("=", 1) for kv in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in kv)
        where = os.readlink(f"/proc/{pid}/cwd")
        assert where == str(cwd), f"the server runs in {where}, not the caller's {cwd}"
        if image_under:
            leaked = {k: v for k, v in env.items() if image_under in v or k.startswith("PORTCULLIS_HOST_")
                      or k == "PORTCULLIS_APPRUN_CHANGED"}
            assert not leaked, f"the server inherited the AppImage's environment: {leaked}"
    print(f"check_installed: the server runs in the caller's directory"
          + (", with none of the AppImage's paths in its environment" if image_under else ""))


def main() -> int:
    scratch, notes_server = Path(sys.argv[1]), sys.argv[2]
    app_bin, cli = sys.argv[3:5] if len(sys.argv) >= 5 else (APP, CLI)
    libs_under = sys.argv[5] if len(sys.argv) == 6 else None
    data = scratch / "data"
    (scratch / "policies").mkdir(parents=True, exist_ok=True)
    (scratch / "policies/notes.json").write_text(json.dumps({"version": "1", "default": "allow"}))
    config = scratch / "portcullis.json"
    config.write_text(json.dumps({
        "listen": "127.0.0.1:0", "policies": "policies",
        "mcpServers": {"notes": {"command": "python3", "args": [notes_server, str(scratch / "notes")]}},
    }))
    started = time.monotonic()
    # Relative paths, from the scratch dir: the app takes them from the directory it is started
    # in (the AppImage's AppRun runs it elsewhere and makes them absolute against the caller's).
    app = subprocess.Popen([app_bin, "--config", config.name, "--data-dir", data.name, "--show"], cwd=scratch,
                           stdout=open(scratch / "app.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        info = wait_until(lambda: app.poll() is None and gateway_info(data) or app.poll() is not None, START_WAIT,
                          "the installed app's gateway.json")
        if app.poll() is not None:
            raise SystemExit(f"check_installed: the app exited {app.returncode}:\n{(scratch / 'app.log').read_text()}")
        assert info["pid"] == app.pid, f"gateway.json names pid {info['pid']}, not the app's {app.pid}"
        print(f"check_installed: {app_bin}: gateway up in {time.monotonic() - started:.1f} s at {info['url']}")
        req = urllib.request.Request(f"{info['url']}/control/status", headers={"Authorization": f"Bearer {info['token']}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            status = json.loads(resp.read())
        assert status["audit"]["ok"] is True, status
        wait_until(main_window_shown, 30, "the main window on the X display")
        print("check_installed: main window on screen")
        if libs_under:
            check_libraries_under(app.pid, libs_under)
        text = mcp_through_connect(cli, data)
        assert text == "no notes yet", f"list_notes through the installed connect answered {text!r}"
        print(f"check_installed: an MCP call through {cli} connect reached the server")
        check_server_environment(notes_server, scratch, libs_under)
    finally:
        if app.poll() is None:
            os.kill(app.pid, signal.SIGTERM)
        try:
            app.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait(5)
    assert not (data / "gateway.json").exists(), "quitting the app removes gateway.json"
    print("check_installed: the app quit cleanly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
