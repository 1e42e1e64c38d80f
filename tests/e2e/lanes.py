"""What the two differential tests (mcp1/test_differential_mcp1.py, the tools/call corpus, and
mcp1/test_differential_doors_mcp1.py, the other doors) drive the gateway with: its ways in for a raw
message (Streamable HTTP with or without a legacy session, and `portcullis connect`), every
server x entry lane run at once, and the servers' JSON-lines logs read back.

What counts as an answer (each test's `classify`) and how the stdio entry waits for one (its
`send`) stay with each test: they are where the two differ.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

import harness

# (messages the entry got back, HTTP status or None, the request id) -> (answer, detail)
Classify = Callable[[list[dict[str, Any]], Any, Any], tuple[str, str]]


class HttpEntry:
    """One raw message per POST to the gateway's Streamable HTTP entry for `server`: with `session`
    after initialize (Mcp-Session-Id) and notifications/initialized, otherwise stateless."""

    def __init__(self, gw: harness.Gateway, server: str, classify: Classify, wait: float,
                 session: bool = True) -> None:
        self.url = gw.mcp_url(server)
        self.headers = dict(gw.auth_headers())
        self.classify = classify
        self.wait = wait
        if session:
            init = harness.http_post(self.url, harness.INITIALIZE_BODY, self.headers, timeout=wait)
            assert init.status == 200, (init.status, init.text()[:300])
            sid = {k.lower(): v for k, v in init.headers.items()}["mcp-session-id"]
            self.headers.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
            note = harness.http_post(self.url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                     self.headers, timeout=wait)
            assert note.status == 202, note

    def send(self, raw: bytes, rid: Any) -> tuple[str, str]:
        try:
            reply = harness.http_post(self.url, raw, self.headers, timeout=self.wait)
        except (TimeoutError, OSError) as e:  # no answer within the wait: counted as none
            return "none", f"no answer: {e!r}"
        try:
            messages = harness.sse_json_messages(reply.body) if reply.body.strip() else []
        except ValueError:
            messages = []
        return self.classify(messages, reply.status, rid)

    def close(self) -> None:
        pass


class StdioEntry:
    """`portcullis connect` for `server`, initialized, its stdin taking raw lines; a reader thread
    collects what it prints (a line that is not a JSON object kept as {"unparsed": ...}). A subclass
    gives `send(raw, rid)`: how long to wait, and for what, is the test's."""

    def __init__(self, gw: harness.Gateway, server: str, wait: float) -> None:
        self.wait = wait
        self.proc = subprocess.Popen(gw.connect_argv(server), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.lines: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.write(json.dumps(harness.INITIALIZE_BODY).encode())
        self.wait_for(lambda m: m.get("id") == 1 and "result" in m, 0, "initialize answer")
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _read(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = {"unparsed": raw.decode("utf-8", "replace")}
            with self.cond:
                self.lines.append(msg if isinstance(msg, dict) else {"unparsed": repr(msg)})
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def mark(self) -> int:
        """Where the lines printed from now on start (for wait_for and since)."""
        with self.cond:
            return len(self.lines)

    def since(self, start: int) -> list[dict[str, Any]]:
        with self.cond:
            return list(self.lines[start:])

    def write(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, pred, start: int, what: str) -> int:
        """Index of the first line at or after `start` that satisfies `pred` (bounded wait; raises
        harness.HarnessError when none comes)."""
        def find():
            with self.cond:
                for i in range(start, len(self.lines)):
                    if pred(self.lines[i]):
                        return i + 1
            return None
        return harness.wait_until(find, self.wait, what, interval=0.005) - 1

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.reader.join(timeout=2)


def run_lanes(drive: Callable[[harness.Gateway, str, str, list], None], gw: harness.Gateway,
              servers: tuple[str, ...], entries: tuple[str, ...], seconds: float = 80.0) -> list:
    """drive(gw, server, entry, out) for every server x entry at once, each lane in its own thread
    (the gateway serves them side by side, as it would serve clients); what they appended to `out`,
    lane by lane. A lane that raises, or has not finished after `seconds`, fails the run, named."""
    lanes = [(s, e) for s in servers for e in entries]
    per_lane: dict[tuple[str, str], list] = {lane: [] for lane in lanes}
    errors: list[BaseException] = []

    def worker(server: str, entry: str) -> None:
        try:
            drive(gw, server, entry, per_lane[(server, entry)])
        except BaseException as e:  # reported below, with the lane
            errors.append(RuntimeError(f"{server}/{entry}: {e!r}"))

    threads = [threading.Thread(target=worker, args=lane, daemon=True) for lane in lanes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds)
    stuck = [f"{s}/{e}" for (s, e), t in zip(lanes, threads) if t.is_alive()]
    assert not stuck, f"lane(s) {stuck} did not finish in {seconds:g} s"
    assert not errors, errors
    return [sent for lane in lanes for sent in per_lane[lane]]


def read_jsonl(path: Path) -> list[Any]:
    """The JSON lines a server logged ([] when it logged nothing)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8", errors="replace").split("\n") if line]
