"""Fixtures for the desktop end-to-end suite: the real app binary driven through tauri-driver and
WebKitWebDriver, a real MCP server behind it, and a raw Streamable HTTP MCP client in front of it.

One app per test module (starting WebKit costs seconds): a scratch directory holds its config
(listening on a free loopback port), its policies and its data dir. Run under Xvfb and a D-Bus
session with a notification daemon (scripts/test-desktop.sh). Every wait is bounded; processes
started here are stopped by pid.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import urllib3
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.webelement import WebElement

ROOT = Path(__file__).resolve().parents[3]
APP_BIN = Path(os.environ.get("PORTCULLIS_DESKTOP_BIN", ROOT / "target/debug/portcullis-desktop"))
CLI_BIN = Path(os.environ.get("PORTCULLIS_BIN", ROOT / "target/debug/portcullis"))
SCREENSHOTS = Path(os.environ.get("PORTCULLIS_SCREENSHOTS", ROOT / "docs/screenshots"))
EVERYTHING = ROOT / "demo/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PROMPT_TITLE = "Portcullis — approve a tool call"
MAIN_TITLE = "Portcullis"
START_TIMEOUT = 30.0


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Polls `predicate` until it returns something truthy; fails the test after `timeout` s."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (WebDriverException, OSError, ValueError, KeyError) as e:
            last_error = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last error: {last_error})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


# --------------------------------------------------------------------------------------------------
# A minimal MCP client over Streamable HTTP (legacy era: initialize, then a session id)


class McpClient:
    def __init__(self, base_url: str, token: str, server: str, name: str = "desktop-e2e") -> None:
        self.url = f"{base_url.rstrip('/')}/mcp/{server}"
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.next_id = 1
        self.lock = threading.Lock()
        result = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": name, "version": "1.0"}})
        assert "result" in result, f"initialize failed: {result}"
        self.notify("notifications/initialized")

    def _post(self, body: dict[str, Any], timeout: float) -> tuple[dict[str, str], bytes]:
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=self.headers, method="POST")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            headers = {k.lower(): v for k, v in resp.headers.items()}
            if "text/event-stream" not in headers.get("content-type", ""):
                return headers, resp.read()
            # Read the stream until the response to this request.
            while True:
                line = resp.readline()
                if not line:
                    return headers, b""
                if line.startswith(b"data:"):
                    msg = json.loads(line[5:])
                    if msg.get("id") == body.get("id") and ("result" in msg or "error" in msg):
                        return headers, json.dumps(msg).encode()

    def request(self, method: str, params: dict[str, Any], timeout: float = 90.0) -> dict[str, Any]:
        with self.lock:
            rid = self.next_id
            self.next_id += 1
        headers, body = self._post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, timeout)
        if method == "initialize":
            assert "mcp-session-id" in headers, f"initialize opened no session: {body[:500]!r}"
            self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
            self.headers["MCP-Protocol-Version"] = "2025-06-18"
        return json.loads(body)

    def notify(self, method: str) -> None:
        req = urllib.request.Request(self.url, data=json.dumps({"jsonrpc": "2.0", "method": method}).encode(),
                                     headers=self.headers, method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def close(self) -> None:
        """Ends the session (HTTP DELETE), as an agent that exits does."""
        req = urllib.request.Request(self.url, headers=self.headers, method="DELETE")
        urllib.request.urlopen(req, timeout=10).read()

    def call_tool(self, tool: str, arguments: dict[str, Any], timeout: float = 90.0) -> dict[str, Any]:
        reply = self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)
        assert "result" in reply, f"tools/call {tool} answered with a protocol error: {reply}"
        return reply["result"]


def result_text(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))


# --------------------------------------------------------------------------------------------------
# X11: is a window really on screen? (WebDriver cannot tell a hidden GTK window from a shown one)


def x_window_id(title: str) -> str | None:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True, timeout=10).stdout
    for line in tree.splitlines():
        m = re.match(r'\s*(0x[0-9a-f]+) "(.*)":', line)
        if m and m.group(2) == title:
            return m.group(1)
    return None


def x_geometry(window_id: str | None) -> str | None:
    """`WxH+X+Y` of a window on the screen, for cropping a screenshot of the root window."""
    if window_id is None:
        return None
    info = subprocess.run(["xwininfo", "-id", window_id], capture_output=True, text=True, timeout=10).stdout
    field = dict(re.findall(r"^\s*(Absolute upper-left [XY]|Width|Height):\s*(-?\d+)", info, re.M))
    return f"{field['Width']}x{field['Height']}+{field['Absolute upper-left X']}+{field['Absolute upper-left Y']}"


class _XClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]


class _XEvent(ctypes.Union):
    _fields_ = [("xclient", _XClientMessage), ("pad", ctypes.c_long * 24)]


def x_close(window_id: str) -> None:
    """Asks a window to close as a window manager's close button does (WM_DELETE_WINDOW): bare
    Xvfb has no window manager, and WebDriver's close bypasses the app's own window handling."""
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.POINTER(_XEvent)]
    x11.XFlush.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x11.XOpenDisplay(None)
    assert display, "cannot open the X display"
    try:
        event = _XEvent()
        event.xclient.type = 33  # ClientMessage
        event.xclient.window = int(window_id, 16)
        event.xclient.message_type = x11.XInternAtom(display, b"WM_PROTOCOLS", 0)
        event.xclient.format = 32
        event.xclient.data[0] = x11.XInternAtom(display, b"WM_DELETE_WINDOW", 0)
        event.xclient.data[1] = 0  # CurrentTime
        assert x11.XSendEvent(display, event.xclient.window, 0, 0, ctypes.byref(event)), "XSendEvent failed"
        x11.XFlush(display)
    finally:
        x11.XCloseDisplay(display)


def x_viewable(window_id: str) -> bool:
    info = subprocess.run(["xwininfo", "-id", window_id], capture_output=True, text=True, timeout=10).stdout
    return "Map State: IsViewable" in info


# --------------------------------------------------------------------------------------------------
# The app


@dataclass
class App:
    driver: webdriver.Remote
    scratch: Path
    handles: dict[str, str] = field(default_factory=dict)
    pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(4))

    @property
    def data_dir(self) -> Path:
        return self.scratch / "data"

    @property
    def policies(self) -> Path:
        return self.scratch / "policies"

    def gateway(self) -> dict[str, Any]:
        return json.loads((self.data_dir / "gateway.json").read_text())

    def client(self, server: str = "everything") -> McpClient:
        info = self.gateway()
        return McpClient(info["url"], info["token"], server)

    def call_async(self, client: McpClient, tool: str, arguments: dict[str, Any]) -> Future:
        return self.pool.submit(client.call_tool, tool, arguments)

    def log(self) -> str:
        return (self.data_dir / "desktop.log").read_text(errors="replace")

    def window(self, label: str) -> None:
        """Switches to the window `label`, waiting for it: the app builds the prompt for the first
        held call and frees it after it stayed hidden, so its handle comes and goes."""
        if self.handles.get(label) not in self.driver.window_handles:
            self.handles.pop(label, None)
            wait_until(lambda: refresh_handles(self) or label in self.handles, 15, f"the {label} window")
        self.driver.switch_to.window(self.handles[label])

    def find(self, testid: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]')

    def find_all(self, testid: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')

    def wait_testid(self, testid: str, timeout: float = 15.0) -> WebElement:
        return wait_until(lambda: (self.find_all(testid) or [None])[0], timeout, f"[data-testid={testid}]")

    def click(self, testid: str, timeout: float = 15.0) -> None:
        el = self.wait_testid(testid, timeout)
        wait_until(lambda: el.is_enabled(), timeout, f"{testid} enabled")
        el.click()

    def choose(self, testid: str, timeout: float = 15.0) -> None:
        """Picks a radio button styled as a label (the input itself is not drawn)."""
        el = self.wait_testid(testid, timeout)
        el.find_element(By.XPATH, "./ancestor::label[1]").click()
        wait_until(lambda: el.is_selected(), timeout, f"{testid} selected")

    def decide(self, testid: str, timeout: float = 15.0) -> None:
        """Presses a decision button of the prompt. Dispatched as a DOM click: a decision hides the
        prompt window when nothing else is pending, and WebKitWebDriver's native click then waits
        for a repaint of the hidden window that never comes."""
        self.press(testid, timeout)

    def press(self, testid: str, timeout: float = 15.0) -> None:
        """Clicks through the DOM (`element.click()`) once the element is enabled: unlike a native
        click at the element's place, it cannot miss when the page moves between the two (a server
        card above growing as its server connects)."""
        el = self.wait_testid(testid, timeout)
        wait_until(lambda: el.is_enabled(), timeout, f"{testid} enabled")
        self.driver.execute_script("arguments[0].click()", el)

    def prompt_viewable(self) -> bool:
        wid = x_window_id(PROMPT_TITLE)
        return wid is not None and x_viewable(wid)

    def screenshot(self, name: str, title: str | None = None) -> Path:
        """Saves what is on screen — cropped to one window, by title — to docs/screenshots/<name>.png.
        Taken from the root window (what a person sees), after the page has painted."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        out = SCREENSHOTS / f"{name}.png"
        self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 300)));")
        crop = x_geometry(x_window_id(title)) if title else None
        args = ["import", "-window", "root"] + (["-crop", crop] if crop else []) + [str(out)]
        subprocess.run(args, check=True, timeout=30)
        return out


def write_config(scratch: Path) -> Path:
    """A config with server-everything over stdio on a free port, and its policy."""
    assert EVERYTHING.exists(), f"{EVERYTHING} is missing: run `npm ci` in demo/ (scripts/test-desktop.sh does)"
    policies = scratch / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    (policies / "everything.json").write_text(json.dumps({
        "version": "1",
        "default": "require_approval",
        "hide": ["get-env"],
        "tools": {
            "echo": {"action": "require_approval"},
            "get-tiny-image": {},
        },
    }, indent=2) + "\n")
    config = scratch / "portcullis.json"
    config.write_text(json.dumps({
        "listen": f"127.0.0.1:{free_port()}",
        "policies": "policies",
        "approval": {"timeout_secs": 60},
        "mcpServers": {"everything": {"command": "node", "args": [str(EVERYTHING), "stdio"], "cwd": str(ROOT / "demo")}},
    }, indent=2))
    return config


def app_pids(scratch: Path) -> list[int]:
    """Processes of the app started with this scratch dir (its command line names the config)."""
    out = subprocess.run(["pgrep", "-f", f"portcullis-desktop --config {scratch}"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def app_processes(pid: int) -> list[int]:
    """The app and the WebKit processes it started (not the MCP servers the gateway runs)."""
    def comm(p: int) -> str:
        try:
            return Path(f"/proc/{p}/comm").read_text().strip()
        except OSError:
            return ""

    return [p for p in descendants(pid) if p == pid or comm(p).startswith("WebKit")]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used so far."""
    ticks = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def refresh_handles(the_app: App) -> None:
    """Labels the WebDriver window handles: the prompt page, or the main window (and forgets
    the handles of windows that are gone)."""
    live = the_app.driver.window_handles
    for label in [k for k, h in the_app.handles.items() if h not in live]:
        del the_app.handles[label]
    for handle in live:
        if handle in the_app.handles.values():
            continue
        the_app.driver.switch_to.window(handle)
        label = "prompt" if the_app.driver.current_url.endswith("prompt.html") else "main"
        the_app.handles[label] = handle


@contextlib.contextmanager
def launch(scratch: Path, config: Path, show: bool = True, wait_for_gateway: bool = True,
           env: dict[str, str] | None = None) -> Iterator[App]:
    """Starts the app through tauri-driver on `config` (data in `scratch/data`); quits it after.
    `env` is added to the environment tauri-driver passes on to the app (and its web processes)."""
    assert APP_BIN.exists(), f"{APP_BIN} is missing: build it with --features tauri/custom-protocol"
    assert not app_pids(scratch), "an app from this scratch dir is still running"
    port, native_port = free_port(), free_port()
    driver_log = open(scratch / "tauri-driver.log", "a")
    tauri_driver = subprocess.Popen(["tauri-driver", "--port", str(port), "--native-port", str(native_port)],
                                    stdout=driver_log, stderr=subprocess.STDOUT, start_new_session=True,
                                    env={**os.environ, **(env or {})})
    driver = None
    try:
        wait_until(lambda: _accepts(port), 10, "tauri-driver to listen")
        options = ArgOptions()
        options.set_capability("browserName", "wry")
        args = ["--config", str(config), "--data-dir", str(scratch / "data")] + (["--show"] if show else [])
        options.set_capability("tauri:options", {"application": str(APP_BIN), "args": args})
        driver = _new_session(port, options, scratch)
        the_app = App(driver=driver, scratch=scratch)
        if wait_for_gateway:
            wait_until(lambda: _gateway_of_this_app(the_app), START_TIMEOUT, "gateway.json of the app just started")
        if show:
            wait_until(lambda: driver.window_handles, START_TIMEOUT, "the main window")
        refresh_handles(the_app)
        yield the_app
    finally:
        if driver is not None:
            try:
                driver.quit()
            except WebDriverException:
                pass
        stop_process(tauri_driver)
        driver_log.close()
        # The next launch must not find this one (single instance): make sure it is gone.
        try:
            wait_until(lambda: not app_pids(scratch), 10, "the app to exit")
        except AssertionError:
            for pid in app_pids(scratch):
                os.kill(pid, signal.SIGKILL)


def _new_session(port: int, options: ArgOptions, scratch: Path) -> webdriver.Remote:
    """Creates the WebDriver session. WebKitWebDriver now and then drops the very first session
    request on a loaded machine (the connection closes before any answer); that is the driver
    starting, not the app under test, so it is retried, a bounded number of times, from a clean
    slate (no half-started app left to catch the next launch as a second instance)."""
    for attempt in range(3):
        try:
            return webdriver.Remote(f"http://127.0.0.1:{port}", options=options)
        except (urllib3.exceptions.ProtocolError, ConnectionError) as e:
            if attempt == 2:
                raise
            print(f"WebDriver session request dropped ({e!r}); retrying")
            for pid in app_pids(scratch):
                os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not app_pids(scratch), 10, "the half-started app to exit")
            # Killed, it could not remove its gateway.json: a stale URL and token for the next app.
            (scratch / "data" / "gateway.json").unlink(missing_ok=True)
    raise AssertionError("unreachable")


def _gateway_of_this_app(the_app: App) -> bool:
    """Whether gateway.json is there and names a running app of this scratch dir: a file a killed
    app left (a retried session, above) must not pass for the new app's keeper."""
    try:
        pid = json.loads((the_app.data_dir / "gateway.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return False  # not there yet, or caught half-written
    return pid in app_pids(the_app.scratch)


@pytest.fixture
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="portcullis-desktop-e2e-"))
    yield path
    if os.environ.get("PORTCULLIS_E2E_KEEP"):
        print(f"scratch kept: {path}")
    else:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def app() -> Iterator[App]:
    """One app, main window open, shared by a module's tests."""
    path = Path(tempfile.mkdtemp(prefix="portcullis-desktop-e2e-"))
    try:
        with launch(path, write_config(path)) as the_app:
            # No prompt until a call is held: an app idle in the tray holds no web view for it.
            assert set(the_app.handles) == {"main"}, f"windows: {the_app.handles}"
            the_app.window("main")
            yield the_app
    finally:
        if os.environ.get("PORTCULLIS_E2E_KEEP"):
            print(f"scratch kept: {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
