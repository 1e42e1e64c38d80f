"""Helpers for Portcullis's approval flow in the end-to-end suite (standard library only).

Both test venvs (mcp 1.x and mcp 2.3.0) import this module, so it must not import anything outside the
standard library (and `harness`, which follows the same rule).

What it offers:
  * `ControlApi`   the control API (`/control/approvals`, `.../approve`, `.../deny`) with or without the
                   bearer token and with arbitrary extra headers (Origin), never raising on an HTTP status;
  * `EventStream`  a subscriber to `GET /control/events` read by a thread: it waits for the `: subscribed`
                   comment (from then on the gateway counts it as an approver), timestamps every event as
                   it arrives, and lets a test wait (bounded) for the event it expects;
  * `cli()`        `portcullis approvals ...` / `policy check` / `audit` as a subprocess with a deadline;
  * `Watch`        `portcullis approvals watch` with a pipe on stdin, its stdout collected line by line;
  * `TerminalWatch` `portcullis approvals watch` on a pseudo-terminal, as a person runs it: keys typed into
                   the pty, the screen read from it, the terminal's mode checked while it runs and after;
  * `AutoApprover` a thread that decides every ApprovalRequested matching a predicate as it arrives.

Every wait has a deadline; nothing synchronises by sleeping a fixed time.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import harness

EVENT_TIMEOUT = 15.0


class ApprovalError(AssertionError):
    """An expected event, line or state did not appear in time."""


# --------------------------------------------------------------------------------------------------
# Control API


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body) if self.body.strip() else None

    def __repr__(self) -> str:  # what a failed assertion shows
        return f"Reply({self.status}, {self.text()[:500]!r})"


class ControlApi:
    """The gateway's control API at `url` (the `url` of gateway.json), authorised with `token`."""

    def __init__(self, url: str, token: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.url = url.rstrip("/")
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.token = token

    @classmethod
    def of(cls, gateway: harness.Gateway) -> "ControlApi":
        return cls(gateway.url, gateway.token)

    def headers(self, token: bool | str = True, extra: dict[str, str] | None = None) -> dict[str, str]:
        hdrs: dict[str, str] = {}
        if token is True:
            hdrs["Authorization"] = f"Bearer {self.token}"
        elif isinstance(token, str):
            hdrs["Authorization"] = f"Bearer {token}"
        hdrs.update(extra or {})
        return hdrs

    def request(self, method: str, path: str, body: Any = None, token: bool | str = True,
                headers: dict[str, str] | None = None, timeout: float = 15.0) -> Reply:
        """One request on a fresh connection; `token=False` sends none, a string sends that one."""
        hdrs = self.headers(token, headers)
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return Reply(resp.status, dict(resp.getheaders()), resp.read())
        finally:
            conn.close()

    # -- the documented operations ------------------------------------------------------------
    def pending(self) -> list[dict[str, Any]]:
        reply = self.request("GET", "/control/approvals")
        if reply.status != 200:
            raise ApprovalError(f"GET /control/approvals answered {reply!r}")
        value = reply.json()
        assert isinstance(value, list), f"GET /control/approvals must be an array: {value!r}"
        return value

    def approve(self, approval_id: str, scope: str | None = "once", **kw: Any) -> Reply:
        body = {"scope": scope} if scope is not None else {}
        return self.request("POST", f"/control/approvals/{urllib.parse.quote(str(approval_id), safe='')}/approve",
                            body, **kw)

    def deny(self, approval_id: str, reason: str | None = None, always: bool = False, **kw: Any) -> Reply:
        body: dict[str, Any] = {"always": always}
        if reason is not None:
            body["reason"] = reason
        return self.request("POST", f"/control/approvals/{urllib.parse.quote(str(approval_id), safe='')}/deny",
                            body, **kw)

    def wait_pending(self, predicate: Callable[[list[dict[str, Any]]], Any], timeout: float, what: str) -> Any:
        """Poll GET /control/approvals (bounded) until `predicate(pending)` is truthy; return its value."""
        last: list[dict[str, Any]] = []

        def check() -> Any:
            nonlocal last
            last = self.pending()
            return predicate(last)

        try:
            return harness.wait_until(check, timeout, what, interval=0.05)
        except harness.HarnessError as e:
            raise ApprovalError(f"{e}; pending now: {json.dumps(last)[-2000:]}") from None

    def subscribe(self, timeout: float = EVENT_TIMEOUT, **kw: Any) -> "EventStream":
        stream = EventStream(self, **kw)
        stream.wait_attached(timeout)
        return stream


def mentions(approval: dict[str, Any], marker: str) -> bool:
    """Whether a marker occurs in an approval's arguments (each test tags its calls with one)."""
    return marker in json.dumps(approval.get("arguments"), ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# The event stream


@dataclass
class Event:
    data: dict[str, Any]
    wall: float  # time.time() when the line was read
    mono: float  # time.monotonic() when the line was read

    @property
    def type(self) -> str:
        return str(self.data.get("type"))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


class EventStream:
    """`GET /control/events`, read by a daemon thread into a list of timestamped events.

    `close()` shuts the socket down, which both ends the reader thread and tells the gateway this
    approver is gone.
    """

    def __init__(self, api: ControlApi, token: bool | str = True, headers: dict[str, str] | None = None) -> None:
        self.api = api
        self.events: list[Event] = []
        self.comments: list[str] = []
        self.status: int | None = None
        self.error: str | None = None
        self.ended = False
        self._cond = threading.Condition()
        self._closing = False
        self._conn = http.client.HTTPConnection(api.host, api.port, timeout=None)
        self._conn.connect()
        self._sock = self._conn.sock
        self._conn.request("GET", "/control/events",
                           headers=api.headers(token, {"Accept": "text/event-stream", **(headers or {})}))
        self._thread = threading.Thread(target=self._read, name="control-events", daemon=True)
        self._thread.start()

    # -- reader ------------------------------------------------------------------------------
    def _read(self) -> None:
        try:
            resp = self._conn.getresponse()
            with self._cond:
                self.status = resp.status
                self._cond.notify_all()
            if resp.status != 200:
                body = resp.read()
                with self._cond:
                    self.error = body.decode("utf-8", "replace")
                return
            data_lines: list[str] = []
            while True:
                raw = resp.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith(":"):
                    with self._cond:
                        self.comments.append(line[1:].strip())
                        self._cond.notify_all()
                elif line.startswith("data:"):
                    data_lines.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
                elif line == "" and data_lines:
                    payload = "\n".join(data_lines)
                    data_lines = []
                    wall, mono = time.time(), time.monotonic()
                    try:
                        value = json.loads(payload)
                    except ValueError:
                        value = {"type": "<unparsable>", "raw": payload}
                    with self._cond:
                        self.events.append(Event(value, wall, mono))
                        self._cond.notify_all()
        except Exception as e:  # noqa: BLE001 - a reader thread must not die noisily on close
            if not self._closing:
                with self._cond:
                    self.error = f"{type(e).__name__}: {e}"
        finally:
            with self._cond:
                self.ended = True
                self._cond.notify_all()

    # -- waiting ---------------------------------------------------------------------------
    def _wait(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = check()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ApprovalError(f"timed out after {timeout:.1f}s waiting for {what}; "
                                        f"status={self.status} error={self.error} ended={self.ended} "
                                        f"events={self.describe()}")
                self._cond.wait(min(remaining, 0.25))

    def wait_attached(self, timeout: float = EVENT_TIMEOUT) -> None:
        """Until the `: subscribed` comment arrives (the gateway now counts this stream as an approver)."""

        def check() -> bool:
            if self.status is not None and self.status != 200:
                raise ApprovalError(f"GET /control/events answered {self.status}: {self.error}")
            if self.ended and "subscribed" not in self.comments:
                raise ApprovalError(f"event stream ended before `: subscribed`: {self.error}")
            return "subscribed" in self.comments

        self._wait(check, timeout, "`: subscribed` on /control/events")

    def wait_status(self, timeout: float = EVENT_TIMEOUT) -> int:
        return self._wait(lambda: self.status, timeout, "an HTTP status on /control/events")

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = EVENT_TIMEOUT,
                 what: str = "an event", start: int = 0) -> Event:
        """The first event (from index `start`) whose data satisfies `predicate`."""

        def check() -> Event | None:
            for ev in self.events[start:]:
                if predicate(ev.data):
                    return ev
            return None

        return self._wait(check, timeout, what)

    def mark(self) -> int:
        """An index to pass as `start`: only events after this moment count."""
        with self._cond:
            return len(self.events)

    def requested(self, marker: str | None = None, server: str | None = None, tool: str | None = None,
                  since: int = 0) -> list[Event]:
        """ApprovalRequested events so far that match (no waiting)."""
        with self._cond:
            return [ev for ev in self.events[since:] if _requested_matches(ev.data, marker, server, tool)]

    def wait_requested(self, marker: str | None = None, server: str | None = None, tool: str | None = None,
                       timeout: float = EVENT_TIMEOUT, start: int = 0) -> Event:
        """The ApprovalRequested event for a call; `event["approval"]` is the approval object."""
        return self.wait_for(lambda d: _requested_matches(d, marker, server, tool), timeout,
                             f"ApprovalRequested marker={marker} server={server} tool={tool}", start)

    def wait_resolved(self, approval_id: str, timeout: float = EVENT_TIMEOUT) -> Event:
        return self.wait_for(lambda d: d.get("type") == "ApprovalResolved" and str(d.get("id")) == str(approval_id),
                             timeout, f"ApprovalResolved id={approval_id}")

    def resolved(self, approval_id: str) -> list[Event]:
        with self._cond:
            return [ev for ev in self.events
                    if ev.data.get("type") == "ApprovalResolved" and str(ev.data.get("id")) == str(approval_id)]

    def describe(self, last: int = 12) -> str:
        return json.dumps([ev.data for ev in self.events[-last:]])[-3000:]

    # -- ending ------------------------------------------------------------------------------
    def close(self, timeout: float = 5.0) -> None:
        self._closing = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the reader; the gateway sees the approver leave
        except OSError:
            pass
        self._thread.join(timeout)
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _requested_matches(data: dict[str, Any], marker: str | None, server: str | None, tool: str | None) -> bool:
    if data.get("type") != "ApprovalRequested":
        return False
    approval = data.get("approval") or {}
    if server is not None and approval.get("server") != server:
        return False
    if tool is not None and approval.get("tool") != tool:
        return False
    return marker is None or mentions(approval, marker)


class AutoApprover:
    """Decides, on a thread, every ApprovalRequested that `decide(approval)` answers for.

    `decide` returns ("approve", scope) or ("deny", reason) or None (leave it). Decisions and their
    replies are recorded in `decided` as (approval, action, Reply, time.time() before the POST).
    """

    def __init__(self, stream: EventStream, decide: Callable[[dict[str, Any]], tuple[str, Any] | None]) -> None:
        self.stream = stream
        self.api = stream.api
        self.decide = decide
        self.decided: list[tuple[dict[str, Any], tuple[str, Any], Reply, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="auto-approver", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        seen = 0
        while not self._stop.is_set():
            with self.stream._cond:
                while seen >= len(self.stream.events) and not self._stop.is_set() and not self.stream.ended:
                    self.stream._cond.wait(0.2)
                batch = self.stream.events[seen:]
                seen += len(batch)
                if self.stream.ended and not batch:
                    return
            for ev in batch:
                if ev.type != "ApprovalRequested":
                    continue
                approval = ev.data["approval"]
                action = self.decide(approval)
                if action is None:
                    continue
                at = time.time()
                if action[0] == "approve":
                    reply = self.api.approve(approval["id"], action[1])
                else:
                    reply = self.api.deny(approval["id"], action[1])
                self.decided.append((approval, action, reply, at))

    def stop(self) -> None:
        self._stop.set()
        with self.stream._cond:
            self.stream._cond.notify_all()
        self._thread.join(5.0)


# --------------------------------------------------------------------------------------------------
# The CLI


def cli(data_dir: Path | None, *args: str, timeout: float = 20.0, input: str | None = None,
        config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`portcullis ARGS --data-dir D [--config C]`, bounded; never raises on a non-zero exit."""
    argv = [str(harness.portcullis_bin()), *args]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    if config is not None:
        argv += ["--config", str(config)]
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL, env=env)


def policy_check(path: Path) -> subprocess.CompletedProcess[str]:
    return cli(None, "policy", "check", str(path))


class Watch:
    """`portcullis approvals watch --data-dir D` with stdin a pipe (not a TTY) and stdout collected."""

    def __init__(self, data_dir: Path) -> None:
        argv = [str(harness.portcullis_bin()), "approvals", "watch", "--data-dir", str(data_dir)]
        self.popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=dict(os.environ, NO_COLOR="1", COLUMNS="100"), start_new_session=True)
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(s, tag), daemon=True)
                         for s, tag in ((self.popen.stdout, ""), (self.popen.stderr, "stderr: "))]
        for t in self._readers:
            t.start()

    def _read(self, stream: Any, tag: str) -> None:
        for raw in iter(stream.readline, b""):
            with self._cond:
                self.lines.append(tag + raw.decode("utf-8", "replace").rstrip("\r\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def output(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def wait_line(self, needle: str, timeout: float = EVENT_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.lines:
                    if needle in line:
                        return line
                if self.popen.poll() is not None and not any(t.is_alive() for t in self._readers):
                    raise ApprovalError(f"approvals watch exited {self.popen.returncode} before printing "
                                        f"{needle!r}:\n{chr(10).join(self.lines)}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ApprovalError(f"approvals watch did not print {needle!r} within {timeout:.0f}s:\n"
                                        + "\n".join(self.lines))
                self._cond.wait(min(remaining, 0.2))

    def send(self, keys: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(keys.encode())
        self.popen.stdin.flush()

    def close_stdin(self) -> None:
        if self.popen.stdin and not self.popen.stdin.closed:
            try:
                self.popen.stdin.close()
            except OSError:
                pass

    def wait(self, timeout: float = 10.0) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self) -> int | None:
        self.close_stdin()
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(signal.SIGTERM)
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
        for t in self._readers:
            t.join(1.0)
        return self.popen.returncode


class TerminalWatch:
    """`portcullis approvals watch --data-dir D` on a pseudo-terminal: stdin, stdout and stderr are the pty's
    slave end, which is also its controlling terminal; keys are written to the master end and the screen is
    what the master reads. `$COLUMNS` is unset, so the width comes from the terminal (`columns`)."""

    def __init__(self, data_dir: Path, columns: int = 60, rows: int = 40) -> None:
        import fcntl
        import pty
        import struct
        import termios

        self._termios = termios
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.cooked = termios.tcgetattr(self.slave)  # the mode a shell would leave it in
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        env["NO_COLOR"] = "1"

        def controlling_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        argv = [str(harness.portcullis_bin()), "approvals", "watch", "--data-dir", str(data_dir)]
        self.popen = subprocess.Popen(argv, stdin=self.slave, stdout=self.slave, stderr=self.slave, env=env,
                                      start_new_session=True, preexec_fn=controlling_terminal)
        self.screen = b""

    def text(self) -> str:
        return self.screen.decode("utf-8", "replace")

    def lines(self) -> list[str]:
        """The screen's finished lines, without the prompt's redraws (`\\r` + erase line)."""
        return [line.rsplit("\x1b[2K", 1)[-1] for line in self.text().split("\r\n")]

    def wait_text(self, needle: str, count: int = 1, timeout: float = EVENT_TIMEOUT) -> None:
        """Reads the screen until `needle` has appeared `count` times (bounded)."""
        import select

        deadline = time.monotonic() + timeout
        while self.text().count(needle) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ApprovalError(f"approvals watch did not show {needle!r} x{count} within {timeout:.0f}s:\n"
                                    + self.text()[-3000:])
            ready, _, _ = select.select([self.master], [], [], min(remaining, 0.5))
            if ready:
                try:
                    self.screen += os.read(self.master, 65536)
                except OSError:  # the slave side is gone
                    raise ApprovalError(f"the terminal closed before {needle!r}:\n{self.text()[-3000:]}") from None
            elif self.popen.poll() is not None:
                raise ApprovalError(f"approvals watch exited {self.popen.returncode} before showing {needle!r}:\n"
                                    + self.text()[-3000:])

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def mode(self) -> list[Any]:
        return self._termios.tcgetattr(self.slave)

    def is_raw(self) -> bool:
        t = self._termios
        iflag, oflag, _, lflag = self.mode()[:4]
        return not lflag & (t.ICANON | t.ECHO | t.ISIG) and not iflag & t.IXON and not oflag & t.OPOST

    def wait(self, timeout: float = 10.0) -> int:
        return self.popen.wait(timeout=timeout)

    def stop(self) -> int | None:
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(signal.SIGTERM)
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        return self.popen.returncode


# --------------------------------------------------------------------------------------------------
# Audit and timing


def audit_rows(gateway: harness.Gateway, server: str, tool: str, marker: str, count: int = 1,
               timeout: float = 10.0, decisions: tuple[str, ...] | None = None) -> list[harness.AuditRow]:
    """Wait (bounded) for `count` audit rows of server/tool with `marker` (optionally with a decision
    among `decisions`); oldest first."""

    def fetch() -> list[harness.AuditRow] | None:
        rows = [r for r in gateway.audit_cli("--server", server, "--tool", tool, "--limit", "1000")
                if marker in json.dumps(r.get("arguments"), ensure_ascii=False)]
        if decisions is not None:
            rows = [r for r in rows if r.get("decision") in decisions]
        rows.sort(key=lambda r: (r.get("time_ms") or 0, r.get("id") or 0))
        return rows if len(rows) >= count else None

    try:
        return harness.wait_until(fetch, timeout, f"{count} audit row(s) {server}/{tool} {marker}", interval=0.1)
    except harness.HarnessError:
        rows = [r.raw for r in gateway.audit_cli("--server", server, "--limit", "50")]
        raise ApprovalError(f"expected {count} audit row(s) for {server}/{tool} marker {marker!r} "
                            f"decisions={decisions}; recent rows for {server}: {json.dumps(rows)[-3000:]}") from None


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank of a non-empty list."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(q * (len(ordered) - 1)))))
    return ordered[rank]

